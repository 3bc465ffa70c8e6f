"""How the scripted planner recognises a candidate page under another name, as a model reading the
candidate list would: the resolution ladder (domain/resolution.py), with the offline judgement on
ambiguous pairs, from what the batch says about the subject and what the candidate list shows.

Without it, a variant spelling seen once in a batch ("Uchi (Austin)" beside a page "Uchi") would be
held as an unresolved mention rather than added to its page.
"""

from __future__ import annotations

import functools
from typing import Any

from domain.context import CandidatePage
from domain.kinds import Kind
from domain.merge_questions import MergeQuestion, MergeSide
from domain.name_key import name_key
from domain.names import infer_kind, kinds_conflict, places_in
from domain.resolution import NameSet, compare, ranked_matches
from planners.scripted.judgement import scripted_judgement

EVIDENCE_LINES = 6


def candidate_side(page: CandidatePage) -> MergeSide:
    return MergeSide(title=page.title, type=page.type, aliases=page.aliases, summary=page.summary,
                     evidence=[section.body_md for section in page.sections])


def page_kind(page: CandidatePage) -> Kind | None:
    return infer_kind(page.type, page.summary)


def subject_kind(page_type: str, kind: str) -> Kind | None:
    """The kind a subject's metadata gives ("person", "restaurant", "city")."""
    return infer_kind(page_type, None, (kind,) if kind else ())


def compatible(page_type: str, kind: str, page: CandidatePage) -> bool:
    """False when the metadata and the page say different kinds of thing (Austin the friend, Austin the city)."""
    return not kinds_conflict(subject_kind(page_type, kind), page_kind(page))


def placed_elsewhere(places: list[str], page: CandidatePage) -> bool:
    """Whether a page's summary puts it in a city none of the subject's place records is in: "Piari
    Coffee" in Raleigh is not the Piari Coffee page "in Tucson, AZ"."""
    cities = [name_key(place.split(",")[0]) for place in places_in(page.summary)]
    written = [name_key(place) for place in places]
    return bool(cities and written) and not any(f" {city} " in f" {where} " for city in cities for where in written)


def fits(subject: MergeSide, kind: str, page: CandidatePage) -> bool:
    """A page the subject may be: a compatible kind, and not placed in another city."""
    return compatible(subject.type, kind, page) and not placed_elsewhere(subject.places, page)


def subject_side(title: str, page_type: str, spellings: list[str], summary: str, contents: list[str],
                 places: list[dict[str, Any]]) -> MergeSide:
    """What the batch says about a subject, as the judge reads a page: names, summary, memory lines, places."""
    where = [str(p.get("address") or p.get("city") or "") for p in places]
    return MergeSide(title=title, type=page_type, aliases=list(dict.fromkeys(s for s in spellings if s != title)),
                     summary=summary, evidence=contents[:EVIDENCE_LINES],
                     places=sorted({w for w in where if w})[:EVIDENCE_LINES])


@functools.lru_cache(maxsize=4096)
def _page_names(page_type: str, title: str, aliases: tuple[str, ...], summary: str | None) -> NameSet:
    # Every subject of a batch is compared with the same candidate pages: one NameSet (and its parsed
    # names and kind) per page.
    return NameSet(type=page_type, names=[title, *aliases], summary=summary)


def recognised_page(subject: MergeSide, kind: str, pages: list[CandidatePage]) -> CandidatePage | None:
    """The candidate page the subject is, under another name; None when the ladder finds none."""
    named = [(page, _page_names(page.type, page.title, tuple(page.aliases), page.summary))
             for page in pages if fits(subject, kind, page)]
    for match in ranked_matches(subject.names(), named):
        page: CandidatePage = match.candidate
        if match.verdict.confident:
            return page
        question = MergeQuestion(key=str(page.id), rung=match.verdict.rung, detail=match.verdict.detail,
                                 proposal=subject, candidate=candidate_side(page))
        if scripted_judgement(question).same:
            return page
    return None


def _same_thing(a: MergeSide, b: MergeSide, key: str, names: tuple[NameSet, NameSet] | None = None) -> bool:
    verdict = compare(*(names or (a.names(), b.names())))
    if verdict.confident:
        return True
    return verdict.ambiguous and scripted_judgement(MergeQuestion(
        key=key, rung=verdict.rung, detail=verdict.detail, proposal=a, candidate=b)).same


def same_subject(hint: MergeSide, subject: MergeSide, names: tuple[NameSet, NameSet] | None = None) -> bool:
    """Whether a name seen in a memory is a subject already collected from the batch, under another name.
    `names`: the two sides' `names()`, when the caller keeps them (each parses its names once)."""
    return _same_thing(hint, subject, subject.title, names)
