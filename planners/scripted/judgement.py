"""The scripted planner's merge judge: a deterministic reading of a merge question's evidence."""

from __future__ import annotations

from domain.merge_questions import MergeDecision, MergeQuestion
from domain.names import kinds_conflict, places_in, qualifier_forms
from domain.resolution import Rung


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
