"""The scripted planner's merge judge: a deterministic reading of a merge question's evidence."""

from __future__ import annotations

from domain.line_formats import addresses_in
from domain.merge_questions import MergeDecision, MergeQuestion, MergeSide
from domain.name_key import name_key
from domain.names import kinds_conflict, places_in, qualifier_forms
from domain.resolution import TYPO_MIN_LETTERS as SLIP_MIN_LETTERS
from domain.resolution import Rung


def _mentions(text: str, phrase: str) -> bool:
    return bool(phrase) and f" {phrase} " in f" {text} "


def _place_keys(side: MergeSide, records_only: bool = False) -> set[str]:
    """Where a side is: the addresses or cities of its memories' place records, and (unless
    `records_only`) the places its summary names."""
    # A page's lead section states its address ("Address: 12 Oak St, Denver, CO"): a place record too.
    stated = [address for line in side.evidence for address in addresses_in(line)]
    places = [*side.places, *stated] if records_only else [*side.places, *stated, *places_in(side.summary)]
    return {key for key in (name_key(place) for place in places) if key}


def _one_place(mine: set[str], theirs: set[str]) -> bool:
    """Whether two sets of places meet: one place within the other ("denver" in an address in Denver)."""
    return any(_mentions(a, b) or _mentions(b, a) for a in mine for b in theirs)


def _by_place(question: MergeQuestion, exact: bool) -> MergeDecision | None:
    """What the place records and shared memories say: a memory both cite, or one place (the same
    address, or a city and an address in it), makes one thing; two sets of places that never meet
    make two. With `exact`, only the same place itself joins (a city holds many shops of one letter
    apart). None when they do not say."""
    if question.shared_sources:
        return MergeDecision(key=question.key, same=True, reason="both cite the same memories")
    mine, theirs = _place_keys(question.proposal), _place_keys(question.candidate)
    if mine and theirs:
        same = _one_place(mine, theirs)
        if same and exact and not (_place_keys(question.proposal, True) & _place_keys(question.candidate, True)):
            return None  # one city, no place record in common: the places do not say
        return MergeDecision(key=question.key, same=same,
                             reason="the same place" if same else "their places are different")
    return None


def _nickname_judgement(question: MergeQuestion) -> MergeDecision:
    """A nickname alone never makes one person: a memory both cite, or the nickname's own memories
    calling them by the other form too ("Mel" whose memories say "Melanie"), does."""
    if question.shared_sources:
        return MergeDecision(key=question.key, same=True, reason="both cite the same memories")
    short, _, full = question.detail.partition("/")
    by_short = min((question.proposal, question.candidate), key=lambda side: (len(side.title), side.title))
    if full and _mentions(by_short.text(), full):
        return MergeDecision(key=question.key, same=True, reason=f"the memories of {short!r} call them {full!r} too")
    return MergeDecision(key=question.key, same=False, reason="a nickname alone, nothing else says one person")


def scripted_judgement(question: MergeQuestion) -> MergeDecision:
    """The offline judge: a deterministic reading of the evidence.

    - qualifier: the same thing when the other side's evidence names the qualifier (a venue's city in
      its summary or addresses: "Uchi (Austin)" and a Uchi "in Austin"), or when both already cite
      a memory in common. Two venues of the same sort ("Emmer & Rye, Madison", a restaurant, and an
      "Emmer & Rye" restaurant whose memories name no place) are one too, unless the other's places
      all lie elsewhere. Otherwise two places: "Paris, Texas" beside a Paris whose memories are in France
      (a city needs evidence: a town sharing a city's name is the trap).
    - subset: the same thing only when both kinds are known and the same sub-kind (a hotel is not the
      bar inside it) and the longer name's extra words show in the shorter one's evidence (or both cite
      a memory in common): "Lena" is "Lena Park" when Lena's memories say "Lena Park".
    - acronym, abbreviation, near: a memory both cite or an address both give makes one thing, two
      sets of places with none in common make two. Without such evidence an acronym stays apart, a
      word written short ("Intl") is the same, an initial ("J. Smith" / "John Smith") is not;
    - near: a transposition of the same sub-kind, or a letter off in a long word of a name that is not
      a person's ("Barbeque" / "Barbecue"; "Marian" and "Marion" are two people).
    - nickname ("Mel" / "Melanie"): one person only on a memory both cite, or when the memories of the
      one called by the nickname also call them by the other form; never on the nickname alone.
    """
    kind_p, kind_c = question.proposal.names().kind(), question.candidate.names().kind()
    if kinds_conflict(kind_p, kind_c):
        return MergeDecision(key=question.key, same=False, reason="different kinds")
    if question.rung is Rung.QUALIFIER:
        proposal_q = [q for p in question.proposal.names().parsed() if (q := p.qualifier)]
        other = question.candidate if question.detail in proposal_q else question.proposal
        text = other.text()
        if any(_mentions(text, form) for form in qualifier_forms(question.detail)):
            return MergeDecision(key=question.key, same=True, reason=f"the other page is in {question.detail}")
        if question.shared_sources:
            return MergeDecision(key=question.key, same=True, reason="both cite the same memories")
        same_venue = (kind_p is not None and kind_c is not None and kind_p.cls == "venue"
                      and kind_p.word == kind_c.word)
        if same_venue and kind_p is not None and not [*other.places, *places_in(other.summary)]:
            return MergeDecision(key=question.key, same=True, reason=f"both a {kind_p.word}, placed nowhere else")
        return MergeDecision(key=question.key, same=False, reason=f"nothing places the other page in {question.detail}")
    if question.rung in (Rung.ACRONYM, Rung.ABBREVIATION, Rung.NEAR):
        placed = _by_place(question, exact=question.rung is Rung.NEAR)
        if placed is not None:
            return placed
    if question.rung is Rung.ACRONYM:
        return MergeDecision(key=question.key, same=False, reason="an acronym with no place or memory in common")
    if question.rung is Rung.NICKNAME:
        return _nickname_judgement(question)
    if question.rung is Rung.ABBREVIATION:
        initial = any(len(pair.partition("/")[0]) == 1 for pair in question.detail.split())
        return MergeDecision(key=question.key, same=not initial,
                             reason="an initial with no place or memory in common" if initial
                             else "a word written short")
    same_kind = kind_p is not None and kind_c is not None and kind_p.word == kind_c.word
    if question.rung is Rung.NEAR:
        left, _, right = question.detail.partition("/")
        transposed = sorted(left) == sorted(right)
        if same_kind and transposed:
            return MergeDecision(key=question.key, same=True, reason="a transposition of the same kind")
        # A letter off in a long word of a place's name is a slip; in a person's name it is as often
        # another person ("Soultomor" / "Soulromor"), so only a shared memory or place joins those.
        person = any(kind is not None and kind.cls in ("person", "pet") for kind in (kind_p, kind_c))
        slip = min(len(left), len(right)) >= SLIP_MIN_LETTERS and not person
        return MergeDecision(key=question.key, same=slip, reason="a letter off in a long name" if slip else
                             "another name")
    if not same_kind or kind_p is None:
        return MergeDecision(key=question.key, same=False, reason="not known to be the same kind")
    shorter = min((question.proposal, question.candidate), key=lambda side: len(side.title))
    if question.shared_sources or all(_mentions(shorter.text(), word) for word in question.detail.split()):
        return MergeDecision(key=question.key, same=True, reason=f"both a {kind_p.word}, and its memories say so")
    return MergeDecision(key=question.key, same=False, reason=f"nothing says the {kind_p.word} is also the other")
