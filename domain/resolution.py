"""The resolution ladder: is a proposed page a page we already have (or another proposal) under another name?

Names are compared pairwise after parsing each into a core name and what people add around it:

- a qualifier: "Uchi (Austin)", "Paris, Texas", "Contramar, Mexico City";
- a leading article: "The Hotel San José";
- a descriptive appositive: "Biscuit the dog", "Biscuit, our dog", "our dog Biscuit", "Dr. Okafor".

The rungs, strongest first (`Rung`):

1. exact: the names normalise alike (domain.aliases.normalize_alias).
2. core: the same core, and the same qualifier or none: only articles and appositives differ.
3. reorder: the same words in another order.
4. typo: the same words but one, within one edit of seven letters or more (two edits from ten);
   an adjacent transposition ("Margeurite"/"Marguerite") is one edit.
5. similar: pg_trgm similarity of the cores >= 0.85 (the resolver's old rule), unless a rung below
   says otherwise.
6. qualifier (ambiguous): the same core, qualified on one side only. A qualifier can name where a
   venue is ("Uchi (Austin)" is Uchi) or what tells two places apart ("Paris, Texas" is not Paris).
7. subset (ambiguous): one core's words are some of the other's ("The Driskill" / "The Driskill Bar").
8. near (ambiguous): one word of five or six letters within one edit ("Marian" / "Marion").

Ambiguous pairs go to the judge (one model call per batch; `scripted_judgement` offline); confident
ones merge. Guards before any of this: names of low information (a single word under six letters,
or a name of low character entropy) never take the fuzzy rungs (typo, similar, subset, near), so
"Uchi" never becomes "Uchiko"; different digits never merge ("Pier 39" / "Pier 38"); two different
qualifiers never merge ("Uchi (Austin)" / "Uchi (Houston)"); different page types merge only on an
exact name; and two known kinds of different classes never merge (Austin the city, Austin a person:
the kind is read from the page summary, `infer_kind`).
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from domain.aliases import normalize_alias, trigram_similarity

SIMILAR_THRESHOLD = 0.85
# Below these a name says too little for anything but an exact match (Graphiti gates its fuzzy
# matching the same way): a single word shorter than MIN_FUZZY_LETTERS, or low character entropy.
MIN_FUZZY_LETTERS = 6
MIN_NAME_ENTROPY = 1.5
TYPO_MIN_LETTERS = 7  # one edit
TYPO_TWO_EDITS_LETTERS = 10  # two edits
NEAR_MIN_LETTERS = 5


class Rung(StrEnum):
    EXACT = "exact"
    CORE = "core"
    REORDER = "reorder"
    TYPO = "typo"
    SIMILAR = "similar"
    QUALIFIER = "qualifier"
    SUBSET = "subset"
    NEAR = "near"
    DISTINCT = "distinct"


CONFIDENT = (Rung.EXACT, Rung.CORE, Rung.REORDER, Rung.TYPO, Rung.SIMILAR)
AMBIGUOUS = (Rung.QUALIFIER, Rung.SUBSET, Rung.NEAR)
_STRENGTH = {rung: index for index, rung in enumerate(Rung)}

# ----------------------------------------------------------------------------------------- kinds

# Words that say what a page is about, by class. Two pages whose kinds are of different classes
# are different things whatever their names; sub-kinds (a hotel, a bar) only inform the judge.
_KIND_CLASSES: dict[str, tuple[str, ...]] = {
    "person": ("person", "friend", "sister", "brother", "mother", "father", "mom", "dad", "aunt", "uncle",
               "cousin", "neighbor", "neighbour", "colleague", "coworker", "partner", "wife", "husband",
               "boss", "chef", "doctor", "teacher", "son", "daughter", "grandmother", "grandfather", "niece",
               "nephew", "boyfriend", "girlfriend", "roommate", "manager", "dr", "mr", "mrs", "ms", "prof"),
    "pet": ("pet", "dog", "cat", "puppy", "kitten", "horse", "rabbit", "parrot"),
    "venue": ("restaurant", "cafe", "coffee", "bar", "pub", "hotel", "park", "museum", "bakery", "shop",
              "store", "market", "gallery", "diner", "brewery", "taqueria", "club", "theater", "theatre",
              "pool", "garden", "beach", "lodging", "apartment", "venue", "lounge", "tavern", "trail",
              "viewpoint", "library", "gym", "bookstore", "winery", "bistro", "pizzeria"),
    "region": ("city", "town", "village", "capital", "region", "country", "state", "county", "neighborhood"),
    "trip": ("trip", "journey", "vacation", "holiday", "journal"),
    "project": ("project",),
}
_KIND_OF_WORD = {word: (cls, word) for cls, words in _KIND_CLASSES.items() for word in words}
_SUMMARY_WORDS_READ = 12


class Kind(BaseModel):
    model_config = ConfigDict(frozen=True)

    cls: str  # person, pet, venue, region, trip, project, decision
    word: str  # the word it was read from ("hotel", "sister"); the sub-kind


@functools.lru_cache(maxsize=4096)
def kind_of_word(word: str) -> Kind | None:
    found = _KIND_OF_WORD.get(word)
    return Kind(cls=found[0], word=found[1]) if found else None


@functools.lru_cache(maxsize=65_536)
def infer_kind(page_type: str, summary: str | None, descriptors: tuple[str, ...] = ()) -> Kind | None:
    """What a page is about, from its type, its summary's first words and its names' descriptors
    ("Biscuit the dog"); None when nothing says."""
    if page_type == "decision":
        return Kind(cls="decision", word="decision")
    for descriptor in descriptors:
        for word in descriptor.split():
            if (kind := kind_of_word(word)) is not None:
                return kind
    for word in normalize_alias(summary or "").split()[:_SUMMARY_WORDS_READ]:
        if (kind := kind_of_word(word)) is not None:
            return kind
    return None


def kinds_conflict(a: Kind | None, b: Kind | None) -> bool:
    return a is not None and b is not None and a.cls != b.cls


# ----------------------------------------------------------------------------------- qualifiers

_US_STATES = {
    "al": "alabama", "ak": "alaska", "az": "arizona", "ar": "arkansas", "ca": "california", "co": "colorado",
    "ct": "connecticut", "de": "delaware", "fl": "florida", "ga": "georgia", "hi": "hawaii", "id": "idaho",
    "il": "illinois", "in": "indiana", "ia": "iowa", "ks": "kansas", "ky": "kentucky", "la": "louisiana",
    "me": "maine", "md": "maryland", "ma": "massachusetts", "mi": "michigan", "mn": "minnesota",
    "ms": "mississippi", "mo": "missouri", "mt": "montana", "ne": "nebraska", "nv": "nevada",
    "nh": "new hampshire", "nj": "new jersey", "nm": "new mexico", "ny": "new york", "nc": "north carolina",
    "nd": "north dakota", "oh": "ohio", "ok": "oklahoma", "or": "oregon", "pa": "pennsylvania",
    "ri": "rhode island", "sc": "south carolina", "sd": "south dakota", "tn": "tennessee", "tx": "texas",
    "ut": "utah", "vt": "vermont", "va": "virginia", "wa": "washington", "wv": "west virginia",
    "wi": "wisconsin", "wy": "wyoming", "dc": "district of columbia",
}
_OTHER_PLACES = {
    "uk": "united kingdom", "gb": "united kingdom", "england": "united kingdom", "us": "united states",
    "usa": "united states", "u s a": "united states", "cdmx": "mexico city", "on": "ontario", "qc": "quebec",
    "bc": "british columbia",
}
_QUALIFIER_NAMES = {**_US_STATES, **_OTHER_PLACES}
_SHORT_FORMS: dict[str, list[str]] = {}
for _short, _full in _QUALIFIER_NAMES.items():
    _SHORT_FORMS.setdefault(_full, []).append(_short)


def canonical_qualifier(qualifier: str) -> str:
    """A qualifier's one spelling: state and a few country codes spelt out ("TX" -> "texas")."""
    key = normalize_alias(qualifier)
    return _QUALIFIER_NAMES.get(key, key)


def qualifier_forms(qualifier: str) -> list[str]:
    """Every way the qualifier may be written in evidence: "texas" -> ["texas", "tx"]."""
    full = canonical_qualifier(qualifier)
    return [full, *_SHORT_FORMS.get(full, [])] if full else []


# ------------------------------------------------------------------------------------- parsing

_POSSESSIVES = ("my", "our", "his", "her", "their", "the", "a", "an")
_HONORIFICS = ("dr", "mr", "mrs", "ms", "prof", "chef")
_TRAILING_PARENS = re.compile(r"^(?P<base>.*\S)\s*\((?P<inner>[^()]*)\)\s*$")
_DIGITS = re.compile(r"\d+")


class ParsedName(BaseModel):
    model_config = ConfigDict(frozen=True)

    normalized: str
    core: str
    qualifier: str = ""  # canonical ("texas")
    descriptors: tuple[str, ...] = ()  # normalised ("our dog", "dr")

    @property
    def tokens(self) -> tuple[str, ...]:
        return tuple(self.core.split())


def _is_descriptor(text: str) -> bool:
    words = normalize_alias(text).split()
    return bool(words) and (words[0] in _POSSESSIVES or all(kind_of_word(w) for w in words))


@functools.lru_cache(maxsize=65_536)
def parse_name(raw: str) -> ParsedName:
    """A name's core, qualifier and descriptors. Works on raw names (the plan's titles and aliases)
    and, with less to go on, on stored aliases, which are normalised and have lost their brackets."""
    base, qualifier, descriptors = raw.strip(), "", []
    if (match := _TRAILING_PARENS.match(base)) is not None:
        base, inner = match.group("base"), match.group("inner")
        if _is_descriptor(inner):
            descriptors.append(normalize_alias(inner))
        else:
            qualifier = inner
    head, comma, tail = base.rpartition(",")
    if comma and head.strip() and tail.strip():
        if _is_descriptor(tail):
            descriptors.append(normalize_alias(tail))
        elif not qualifier:
            qualifier = tail
        base = head
    words = base.split()
    # "our dog Biscuit", "my sister Marguerite"
    if len(words) >= 3 and words[0].lower() in _POSSESSIVES[:5] and kind_of_word(normalize_alias(words[1])):
        descriptors.append(normalize_alias(" ".join(words[:2])))
        words = words[2:]
    # "Biscuit the dog": a lower-case kind word after "the" (a capitalised one is part of the name).
    if len(words) >= 3 and words[-2].lower() == "the" and words[-1].islower() and kind_of_word(words[-1]):
        descriptors.append(normalize_alias(" ".join(words[-2:])))
        words = words[:-2]
    if len(words) >= 2 and normalize_alias(words[0]) in _HONORIFICS:
        descriptors.append(normalize_alias(words[0]))
        words = words[1:]
    if len(words) >= 2 and words[0].lower() == "the":
        words = words[1:]
    core = normalize_alias(" ".join(words))
    return ParsedName(normalized=normalize_alias(raw), core=core, qualifier=canonical_qualifier(qualifier),
                      descriptors=tuple(d for d in descriptors if d))


# ---------------------------------------------------------------------------------- similarity


def osa_distance(a: str, b: str) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions and adjacent transpositions."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, start=1):
            cost = 0 if ca == cb else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[-1]


def name_entropy(name: str) -> float:
    letters = name.replace(" ", "")
    if not letters:
        return 0.0
    counts = Counter(letters)
    return -sum(n / len(letters) * math.log2(n / len(letters)) for n in counts.values())


@functools.lru_cache(maxsize=65_536)
def is_informative(core: str) -> bool:
    """Enough information in a name for a fuzzy match: two words, or one of six letters or more,
    and not a run of few characters ("aaaa aaa")."""
    if not core:
        return False
    if len(core.split()) < 2 and len(core.replace(" ", "")) < MIN_FUZZY_LETTERS:
        return False
    return name_entropy(core) >= MIN_NAME_ENTROPY


def _one_word_apart(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, str] | None:
    if len(a) != len(b):
        return None
    different = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
    return different[0] if len(different) == 1 else None


class Verdict(BaseModel):
    """How two names relate: the rung and the names it was found on."""

    model_config = ConfigDict(frozen=True)

    rung: Rung
    left: str = ""
    right: str = ""
    detail: str = ""  # qualifier (rung qualifier), the extra words (subset), the two spellings (typo, near)

    @property
    def confident(self) -> bool:
        return self.rung in CONFIDENT

    @property
    def ambiguous(self) -> bool:
        return self.rung in AMBIGUOUS

    def stronger_than(self, other: Verdict) -> bool:
        return _STRENGTH[self.rung] < _STRENGTH[other.rung]


DISTINCT = Verdict(rung=Rung.DISTINCT)


# Pure, and called for every pair of names of a proposal and its candidates (the scripted planner
# compares each subject of a batch with every candidate page): memoised.
@functools.lru_cache(maxsize=262_144)
def compare_names(a: ParsedName, b: ParsedName) -> Verdict:
    """The rung two parsed names meet on (see the module docstring)."""
    if not a.normalized or not b.normalized:
        return DISTINCT
    if a.normalized == b.normalized:
        return Verdict(rung=Rung.EXACT, left=a.normalized, right=b.normalized)
    if _DIGITS.findall(a.core) != _DIGITS.findall(b.core):
        return DISTINCT
    if a.qualifier and b.qualifier and a.qualifier != b.qualifier:
        return DISTINCT
    if _descriptors_conflict(a, b):
        return DISTINCT  # "Biscuit the dog" / "Biscuit the cat", "Dr. Lowe" / "Mr. Lowe"
    rung, detail = _core_rung(a, b)
    if rung is Rung.DISTINCT:
        return DISTINCT
    qualifier = a.qualifier or b.qualifier
    if rung is Rung.SUBSET and a.qualifier != b.qualifier and not set(qualifier.split()) <= set(detail.split()):
        # "Athens, Greece" against a stored "athens georgia" (a normalised alias keeps no comma): the
        # longer name's extra words are another qualifier, not this one.
        return DISTINCT
    if a.qualifier != b.qualifier and rung in CONFIDENT:
        # One side qualified, the other not: the same core may be one place or two.
        return Verdict(rung=Rung.QUALIFIER, left=a.normalized, right=b.normalized,
                       detail=a.qualifier or b.qualifier)
    return Verdict(rung=rung, left=a.normalized, right=b.normalized, detail=detail)


def _descriptors_conflict(a: ParsedName, b: ParsedName) -> bool:
    """Two names that say what they are, differently: "the dog" / "the cat", "my sister" / "my aunt",
    or two titles, "Dr." / "Mr.". A title against a relation ("Dr. Okafor" / "Okafor, my colleague")
    is no conflict."""
    titles_a = {d for d in a.descriptors if d in _HONORIFICS}
    titles_b = {d for d in b.descriptors if d in _HONORIFICS}
    if titles_a and titles_b and not titles_a & titles_b:
        return True
    kind_a = infer_kind("", None, tuple(d for d in a.descriptors if d not in _HONORIFICS))
    kind_b = infer_kind("", None, tuple(d for d in b.descriptors if d not in _HONORIFICS))
    return kind_a is not None and kind_b is not None and kind_a != kind_b


def _core_rung(a: ParsedName, b: ParsedName) -> tuple[Rung, str]:
    if a.core == b.core:
        return Rung.CORE, ""
    if not (is_informative(a.core) and is_informative(b.core)):
        return Rung.DISTINCT, ""
    ta, tb = a.tokens, b.tokens
    if sorted(ta) == sorted(tb) or a.core.replace(" ", "") == b.core.replace(" ", ""):
        return Rung.REORDER, ""
    apart = _one_word_apart(ta, tb)
    if apart is not None:
        x, y = apart
        shortest = min(len(x), len(y))
        distance = osa_distance(x, y)
        if (distance == 1 and shortest >= TYPO_MIN_LETTERS) or (distance == 2 and shortest >= TYPO_TWO_EDITS_LETTERS):
            return Rung.TYPO, f"{x}/{y}"
    set_a, set_b = set(ta), set(tb)
    if set_a < set_b or set_b < set_a:
        return Rung.SUBSET, " ".join(sorted(set_a ^ set_b))
    if trigram_similarity(a.core, b.core) >= SIMILAR_THRESHOLD:
        return Rung.SIMILAR, ""
    if apart is not None:
        x, y = apart
        if min(len(x), len(y)) >= NEAR_MIN_LETTERS and osa_distance(x, y) == 1:
            return Rung.NEAR, f"{x}/{y}"
    return Rung.DISTINCT, ""


# ------------------------------------------------------------------------------------ pages


class NameSet(BaseModel):
    """One side of a comparison: a proposed page or a stored one, by its names and what it is."""

    type: str
    names: list[str]  # title first; raw where known (plans), normalised for stored aliases
    summary: str | None = None

    # Read once per comparison set: a proposal is compared with every candidate.
    @functools.cached_property
    def _parsed(self) -> list[ParsedName]:
        return [p for p in (parse_name(n) for n in dict.fromkeys(self.names)) if p.normalized]

    def parsed(self) -> list[ParsedName]:
        return self._parsed

    @functools.cached_property
    def _kind(self) -> Kind | None:
        return infer_kind(self.type, self.summary, tuple(d for p in self._parsed for d in p.descriptors))

    def kind(self) -> Kind | None:
        return self._kind


def compare(a: NameSet, b: NameSet) -> Verdict:
    """The strongest rung any name of `a` meets any name of `b` on, after the type and kind gates."""
    if kinds_conflict(a.kind(), b.kind()):
        return DISTINCT
    best = DISTINCT
    for left in a.parsed():
        for right in b.parsed():
            verdict = compare_names(left, right)
            if verdict.stronger_than(best):
                best = verdict
    if a.type != b.type and best.rung is not Rung.EXACT:
        return DISTINCT
    return best


class Match(BaseModel):
    """A candidate the ladder did not call distinct, with how it matched."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    candidate: Any  # what the caller compares against: a stored page, a page of the same plan
    verdict: Verdict


def ranked_matches(proposal: NameSet, candidates: list[tuple[Any, NameSet]]) -> list[Match]:
    """Candidates the ladder does not call distinct, best first: the stronger rung, then a page of
    the proposal's type, then the proposal's earlier name (its title before its aliases), then the
    candidate's slug."""
    order = {name: index for index, name in enumerate(p.normalized for p in proposal.parsed())}
    found = []
    for candidate, names in candidates:
        verdict = compare(proposal, names)
        if verdict.rung is not Rung.DISTINCT:
            found.append((candidate, names, verdict))
    found.sort(key=lambda m: (_STRENGTH[m[2].rung], m[1].type != proposal.type,
                              order.get(m[2].left, len(order)), str(getattr(m[0], "slug", ""))))
    return [Match(candidate=candidate, verdict=verdict) for candidate, _, verdict in found]


def search_keys(names: list[str]) -> list[str]:
    """What to look stored aliases up by to find this ladder's candidates: each name's normalised
    form and its core (the resolver's SQL also matches aliases that start with a core, for stored
    qualified names, and trigram neighbours, for typos)."""
    keys: dict[str, None] = {}
    for name in names:
        parsed = parse_name(name)
        for key in (parsed.normalized, parsed.core):
            if key:
                keys.setdefault(key, None)
    return list(keys)


# ------------------------------------------------------------------------------------- the judge


class MergeSide(BaseModel):
    """A page as the judge sees it: its names and a few lines of evidence (summary, section text,
    the memories behind it)."""

    title: str
    type: str
    aliases: list[str] = Field(default_factory=list)
    summary: str | None = None
    evidence: list[str] = Field(default_factory=list)
    places: list[str] = Field(default_factory=list)  # addresses or cities of the memories behind it

    def names(self) -> NameSet:
        return NameSet(type=self.type, names=[self.title, *self.aliases], summary=self.summary)

    def text(self) -> str:
        return normalize_alias(" ".join([self.title, *self.aliases, self.summary or "", *self.evidence, *self.places]))


class MergeQuestion(BaseModel):
    """One ambiguous pair: is the proposal the same thing as the candidate?"""

    key: str
    rung: Rung
    detail: str = ""
    proposal: MergeSide
    candidate: MergeSide
    shared_sources: int = 0  # memories both already cite


class MergeDecision(BaseModel):
    key: str
    same: bool
    reason: str = ""


_PLACE_IN_SUMMARY = re.compile(r"\b(?:in|at|near) ((?:[A-Z][\w'’.-]*)(?:,? [A-Z][\w'’.-]*)*)")


def places_in(summary: str | None) -> list[str]:
    """The places a summary puts a page in: "Restaurant in Austin, TX." -> ["Austin, TX"]."""
    return [match.group(1) for match in _PLACE_IN_SUMMARY.finditer(summary or "")]


def _mentions(text: str, phrase: str) -> bool:
    return bool(phrase) and f" {phrase} " in f" {text} "


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
    - near: only a transposition of the same sub-kind ("Marian" and "Marion" are two people).
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
        if same_venue and not [*other.places, *places_in(other.summary)]:
            return MergeDecision(key=question.key, same=True, reason=f"both a {kind_p.word}, placed nowhere else")
        return MergeDecision(key=question.key, same=False, reason=f"nothing places the other page in {question.detail}")
    same_kind = kind_p is not None and kind_c is not None and kind_p.word == kind_c.word
    if question.rung is Rung.NEAR:
        left, _, right = question.detail.partition("/")
        transposed = sorted(left) == sorted(right)
        return MergeDecision(key=question.key, same=same_kind and transposed,
                             reason="a transposition of the same kind" if same_kind and transposed else
                             "another name")
    if not same_kind or kind_p is None:
        return MergeDecision(key=question.key, same=False, reason="not known to be the same kind")
    shorter = min((question.proposal, question.candidate), key=lambda side: len(side.title))
    if question.shared_sources or all(_mentions(shorter.text(), word) for word in question.detail.split()):
        return MergeDecision(key=question.key, same=True, reason=f"both a {kind_p.word}, and its memories say so")
    return MergeDecision(key=question.key, same=False, reason=f"nothing says the {kind_p.word} is also the other")
