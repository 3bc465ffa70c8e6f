"""Attributing a written section body: which memories each line cites, what supports it, its status.

Apply (store/claims.py `sync_claims`) runs this on every section it writes, so every status is
decided again from the stored text and the memories on every change: a derived line is recounted,
a quote is matched again, a judge's word stands only for memories the line still cites.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from domain.aliases import normalize_alias
from domain.claim_checks import derived_holds, quoted_in
from domain.claim_text import body_lines, claim_key, plain_text
from domain.claims import DERIVED, ClaimKind, ClaimStatus, Support, status_of
from domain.evidence import Evidence
from domain.grounding import APPLY_RULE, supporting, ungrounded
from domain.line_formats import parse_dated
from domain.resolved_plan import ProposedClaim


@dataclass(frozen=True)
class KnownClaim:
    """What a section's stored claim already holds: its citations, status and kind, and the memories a
    judge said support it (each on its own, or together)."""

    refs: tuple[str, ...]
    status: str
    kind: str
    judged_by: tuple[str, ...] = ()
    judged_together: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClaimDraft:
    text: str
    key: str
    occurrence: int
    kind: ClaimKind
    status: ClaimStatus
    refs: tuple[str, ...]
    support: Support = Support()


def dated_line_sources(line: str, evidence: Sequence[Evidence]) -> list[str]:
    """The memories a dated line `- YYYY-MM-DD: …` is about: happened on that day (or name it) and
    contain the text after its day and lead. Which memories a line cites, not whether it quotes them
    (`quoted_in` says that)."""
    dated = parse_dated(line)
    if dated is None:
        return []
    tail = normalize_alias(plain_text(dated.text).split(": ")[-1])
    if not tail:
        return []
    return [e.memory_id for e in evidence if dated.day in e.dates and f" {tail} " in e.text]


def _content_words(text: str) -> set[str]:
    return {w for w in normalize_alias(text).split() if len(w) >= 4 and not w.isdigit()}


def folded_from(line: str, known: dict[str, KnownClaim]) -> list[str]:
    """The citations of the stored claims a writer's line folds: those at least half of whose content
    words (four letters or more) the line repeats. A fold cites the union of what it folds."""
    words = _content_words(plain_text(line))
    refs: list[str] = []
    for key, claim in known.items():
        theirs = _content_words(key)
        if theirs and len(theirs & words) * 2 >= len(theirs):
            refs += [r for r in claim.refs if r not in refs]
    return refs


# A section citing more memories than this is a hub or rollup the compiler computes (its lines list
# pages, counts and rankings over all of them); checking each of its writer-made lines term by term
# against every memory would cost lines x memories at every batch, so such a line cites them all.
LARGE_SECTION_SOURCES = 100


def _cited(text: str, sources: Sequence[Evidence], plan_claim: ProposedClaim | None, stored: KnownClaim | None,
           known: dict[str, KnownClaim], page_names: Sequence[str]) -> list[str]:
    """The memories a line cites, always among the section's `sources`:

    1. the citations the plan gave the line, and those its stored claim had (a line proposed again
       citing a new memory unions them);
    2. else the memories a dated line is about (its day and text);
    3. else the citations of the stored lines it folds (`folded_from`), when their memories hold
       every term of it;
    4. else (a line the section writer made: a fold, a summary) the memories holding its terms, or
       all of the section's when none holds them all or the section is a hub's.
    """
    allowed = {e.memory_id for e in sources}
    refs = [r for r in [*(plan_claim.refs if plan_claim else []), *(stored.refs if stored else [])] if r in allowed]
    if not refs:
        refs = dated_line_sources(text, sources)
    if not refs:
        folded = [r for r in folded_from(text, known) if r in allowed]
        # A fold is a fact of the lines it folds only when their memories hold its terms; a count of
        # them ("Earlier: 16 notes") is not.
        if folded and not ungrounded(text, [e for e in sources if e.memory_id in folded], page_names, APPLY_RULE):
            refs = folded
    if not refs and len(sources) <= LARGE_SECTION_SOURCES and not ungrounded(text, sources, page_names, APPLY_RULE):
        refs = supporting(text, sources)
    return list(dict.fromkeys(refs)) or [e.memory_id for e in sources]


def _recounted(text: str, by_id: dict[str, Evidence], refs: list[str],
               plan_claim: ProposedClaim | None, stored: KnownClaim | None) -> list[str] | None:
    """The memories a derived line recounts from, or None when it is no derived line (or its figures
    do not recount): those the plan computed it from, those its stored claim counted, those it cites,
    or all of the section's, the first that gives its figures."""
    candidates = [refs, list(by_id)]
    if stored is not None and stored.kind == "derived":
        candidates.insert(0, [r for r in stored.refs if r in by_id])
    if plan_claim is not None and plan_claim.kind == "derived":
        candidates.insert(0, [r for r in plan_claim.refs if r in by_id])
    for memory_ids in candidates:
        if memory_ids and derived_holds(text, [by_id[r] for r in memory_ids]):
            return memory_ids
    return None


def attribute_body(body: str | None, sources: Sequence[Evidence], proposed: dict[str, ProposedClaim],
                   known: dict[str, KnownClaim], page_names: Sequence[str] = ()) -> list[ClaimDraft]:
    """The claims of a written section body, in order, each with its citations (`_cited`), what
    supports it and the status that earns (domain/claims.py `status_of`):

    - derived when it is one of the compiler's computed lines and recounts from the memories it
      cites (or, for a line with no citation of its own, from the section's);
    - quoted when it is word for word whole sentences of section memories (it then cites them too);
    - verified when the judge said cited memories support it (the plan's verdict, or the one its
      stored claim kept, for memories it still cites);
    - unverified otherwise.
    """
    by_id = {e.memory_id: e for e in sources}
    allowed = set(by_id)
    drafts: list[ClaimDraft] = []
    seen: dict[str, int] = {}
    for text in body_lines(body):
        key = claim_key(text) or text
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        plan_claim, stored = proposed.get(key), known.get(key)
        refs = _cited(text, sources, plan_claim, stored, known, page_names)
        counted = _recounted(text, by_id, refs, plan_claim, stored)
        if counted is not None:
            drafts.append(ClaimDraft(text=text, key=key, occurrence=occurrence, kind="derived", status=DERIVED,
                                     refs=tuple(counted)))
            continue
        quoted = quoted_in(text, sources)
        judged = {*(plan_claim.judged_by if plan_claim else ()), *(stored.judged_by if stored else ())}
        together = {*(plan_claim.judged_together if plan_claim else ()),
                    *(stored.judged_together if stored else ())}
        support = Support(quoted=frozenset(quoted), judged=frozenset(judged),
                          joint=frozenset(together)).within(allowed)
        cited = list(dict.fromkeys([*refs, *sorted(support.alone | support.joint)]))
        drafts.append(ClaimDraft(text=text, key=key, occurrence=occurrence, kind="fact",
                                 status=status_of(False, support), refs=tuple(cited), support=support))
    return drafts
