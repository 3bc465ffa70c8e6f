"""Resolution revisits: open mentions re-resolved against the pages a plan creates or names anew.

A name first seen once is held as an open mention; its page may appear later, from other memories
under a better-attested spelling ("Miskolhai Sq. Diner" held, then "Miskolhai Square Diner"
created). Without a revisit the held sighting would stay outside the page for good, and the order
memories arrive in would decide the wiki. So, while a plan resolves, every open mention of the
scope whose name the resolution ladder confidently calls one of the plan's pages (same type, a
confident rung: the name key, a slip of the keyboard, ...) is folded into that page: its held
sightings are cited by the page's notes section (through the writer, with the quotes it was held
with), the mention is marked promoted, and the fold is kept on record like a merge.

Only confident rungs fold: an ambiguous pair waits for its next sighting, which the planner and the
judge see in the ordinary way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.merge_questions import MergeRecord
from domain.resolution import NameSet, compare
from domain.resolved_plan import MentionPromotion, ResolvedPage

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


def revisit_target(mention: Any, pages: list[ResolvedPage]) -> tuple[ResolvedPage, str] | None:
    """The plan's page the held name confidently is, with the rung; None when there is none or more
    than one (a name two pages could be stays held)."""
    held = NameSet(type=mention.suggested_type or "entity", names=[mention.alias])
    hits = []
    for entry in pages:
        if mention.suggested_type and mention.suggested_type != entry.type:
            continue
        verdict = compare(held.model_copy(update={"type": entry.type}),
                          NameSet(type=entry.type, names=[entry.title, *entry.aliases], summary=entry.summary))
        if verdict.confident:
            hits.append((entry, verdict.rung.value))
    return hits[0] if len(hits) == 1 else None


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
                        skip: set[str]) -> list[Fold]:
    """The open mentions of the scope (but those in `skip`: ids or names this plan handles) that one
    of the plan's pages confidently is."""
    if not pages:
        return []
    folds = []
    for mention in await open_mentions_to_revisit(conn, tenant, owner, skip):
        found = revisit_target(mention, pages)
        if found is None or not (sightings := held_sightings(mention)):
            continue
        entry, rung = found
        folds.append(Fold(
            entry=entry, slug=REVISIT_SECTION.get(entry.type, "notes"),
            body="\n".join(f"- {quote}" for _, quote in sightings if quote), refs=[r for r, _ in sightings],
            promotion=MentionPromotion(mention_id=str(mention.id), alias_normalized=mention.alias_normalized,
                                       page_id=entry.page_id),
            record=MergeRecord(proposal_type=entry.type, proposal_slug=f"mention:{mention.alias_normalized}",
                               proposal_names=[mention.alias], candidate_page_id=entry.page_id, rung=rung,
                               decided_by="ladder", same=True,
                               reason=f"an open mention revisited: the names meet on the {rung} rung")))
    return folds
