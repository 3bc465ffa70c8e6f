"""Resolution revisits: open mentions re-resolved against the pages a plan creates or names anew.

A name first seen once is held as an open mention; its page may appear later, from other memories
under a better-attested spelling ("Miskolhai Sq. Diner" held, then "Miskolhai Square Diner"
created). Without a revisit the held sighting would stay outside the page for good, and the order
memories arrive in would decide the wiki. So, while a plan resolves, every open mention of the
scope whose name the resolution ladder confidently calls one of the plan's pages (same type, a
confident rung: the name key, a slip of the keyboard, ...) is folded into that page: its held
sightings are cited by the page's notes section (through the writer, with the quotes it was held
with), the mention is marked promoted, and the fold is kept on record like a merge.

A confident rung folds at once; an ambiguous one ("FFG" held, "Fubrias Folk Gallery" created) is a
question for the merge judge, asked with the held sightings as evidence, and folds when it says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.merge_questions import MergeRecord, MergeSide
from domain.resolution import NameSet, Verdict, compare
from domain.resolved_plan import DirectSection, MentionPromotion, ResolvedPage
from store.merge_records import PROPOSAL_EVIDENCE_CHARS, merge_record
from store.page_matching import AskedMerge, Judgement, pair_key

# The most recently seen open mentions a revisit reads: a bound on the work per plan.
REVISITED_MENTIONS = 2000
REVISIT_SECTION = {"entity": "notes", "topic": "highlights", "decision": "consequences"}


async def open_mentions_to_revisit(conn: AsyncConnection, tenant: str, owner: str,
                                   skip: set[str]) -> list[Any]:
    rows = await conn.execute(text("""
        SELECT id, alias, alias_normalized, suggested_type, sample_contexts FROM wiki_unresolved_mentions
        WHERE tenant_id = :tenant AND owner_id = :owner AND status = 'open'
        ORDER BY last_seen_at DESC, id LIMIT :limit
    """), {"tenant": tenant, "owner": owner, "limit": REVISITED_MENTIONS})
    return [row for row in rows if str(row.id) not in skip and row.alias_normalized not in skip]


def held_sightings(mention: Any) -> list[tuple[str, str]]:
    """(memory id, quote) of each sighting the mention holds."""
    return [(str(c["source_ref"]).strip().lower(), str(c.get("quote") or c.get("context") or "").strip())
            for c in (mention.sample_contexts or []) if isinstance(c, dict) and c.get("source_ref")]


def revisit_target(mention: Any, pages: list[ResolvedPage]) -> tuple[ResolvedPage, Verdict] | None:
    """The plan's page the held name is, with the verdict: the one page a confident rung meets, else
    the one page an ambiguous rung meets (a question for the judge); None when there is none or more
    than one (a name two pages could be stays held)."""
    held = NameSet(type=mention.suggested_type or "entity", names=[mention.alias])
    confident: list[tuple[ResolvedPage, Verdict]] = []
    ambiguous: list[tuple[ResolvedPage, Verdict]] = []
    for entry in pages:
        if mention.suggested_type and mention.suggested_type != entry.type:
            continue
        verdict = compare(held.model_copy(update={"type": entry.type}),
                          NameSet(type=entry.type, names=[entry.title, *entry.aliases], summary=entry.summary))
        (confident if verdict.confident else ambiguous if verdict.ambiguous else []).append((entry, verdict))
    hits = confident or ambiguous
    return hits[0] if len(hits) == 1 else None


def _question(mention: Any, entry: ResolvedPage, verdict: Verdict, refs: list[str]) -> AskedMerge:
    direct = [s for s in entry.sections if isinstance(s, DirectSection)]
    return AskedMerge(
        key=pair_key("mention", mention.alias_normalized, entry.page_id), rung=verdict.rung, detail=verdict.detail,
        proposal=MergeSide(title=mention.alias, type=entry.type), proposal_refs=refs,
        candidate=MergeSide(title=entry.title, type=entry.type, aliases=entry.aliases, summary=entry.summary,
                            evidence=[s.body_md[:PROPOSAL_EVIDENCE_CHARS] for s in direct if s.body_md.strip()]),
        candidate_page_id=entry.page_id,
        candidate_refs=list(dict.fromkeys(ref for s in direct for ref in s.source_refs)))


@dataclass(frozen=True)
class Fold:
    """An open mention folded into a page of the plan: the section write citing its sightings, the
    mention marked promoted, and the decision on record."""

    entry: ResolvedPage
    slug: str
    body: str
    refs: list[str]
    promotion: MentionPromotion
    record: MergeRecord


async def mention_folds(conn: AsyncConnection, tenant: str, owner: str, pages: list[ResolvedPage],
                        skip: set[str], judgement: Judgement) -> list[Fold]:
    """The open mentions of the scope (but those in `skip`: ids or names this plan handles) that one
    of the plan's pages is: on a confident rung, or on an ambiguous one when the judge said so (the
    judge activity meets the question when it resolves the plan without decisions)."""
    if not pages:
        return []
    folds = []
    for mention in await open_mentions_to_revisit(conn, tenant, owner, skip):
        found = revisit_target(mention, pages)
        if found is None or not (sightings := held_sightings(mention)):
            continue
        entry, verdict = found
        refs = [r for r, _ in sightings]
        decision = None
        if not verdict.confident:
            asked = _question(mention, entry, verdict, refs)
            if not judgement.decide(asked):
                continue
            decision = judgement.decisions.get(asked.key)
        folds.append(Fold(
            entry=entry, slug=REVISIT_SECTION.get(entry.type, "notes"),
            body="\n".join(f"- {quote}" for _, quote in sightings if quote), refs=refs,
            promotion=MentionPromotion(mention_id=str(mention.id), alias_normalized=mention.alias_normalized,
                                       page_id=entry.page_id),
            record=merge_record(entry.type, f"mention:{mention.alias_normalized}", (mention.alias,), entry.page_id,
                                verdict, decision)))
    return folds
