"""What the web view (servers/web/) shows, read once per view: the home, a page with its claims and
what they cite, a memory with everything citing it, the link graph, the compile runs.

Every function takes the signed-in caller's `ReadScope` and reads only that scope; inputs are
bounded here (`BadInput`), a name of nothing in the scope raises `NotFound`, worded as for what
exists nowhere. The forget form an operator sees on a memory queues the forget through `app/forget.py`,
as the API's forget does; the view never deletes anything itself.
"""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app import reads
from app.forget import ForgetQueued, forget_for_agent
from app.reads import BadInput, NotFound, PageRef, ReadScope, RelatedHit
from app.retain import TemporalConnector
from app.scope_report import JobRow, list_jobs
from domain.plan import PAGE_TYPES
from runtime.settings import Settings
from store import claims as claim_store
from store import web_reads, wiki_reads
from store.claims import ClaimView
from store.web_reads import CitedText, ClaimCiting, GraphEdge, PageCard, ScopeCounts
from store.wiki_reads import Backlink, CitingSection, MemoryView

RECENT_SHOWN = 12
HUBS_SHOWN = 12
RUNS_SHOWN = 50
RELATED_SHOWN = 8
# The related pages of a page view come from the pages within two links (the API's default walks three):
# the view shows a handful, and the third level is most of a large scope's walk. Both levels are read in
# one statement with the page's citations and backlinks (store/web_reads.py `page_surroundings`).
RELATED_HOPS = 2
# The graph draws the best-connected pages (every page is listed beside it, a window at a time).
GRAPH_DRAWN = 300
GRAPH_LISTED = 200
MAX_GRAPH_OFFSET = 1_000_000

__all__ = ["BadInput", "NotFound", "ReadScope", "forget_memory", "graph_view", "home_view",
           "memory_view", "page_view", "runs_view"]


class HomeView(BaseModel):
    counts: ScopeCounts
    recent: list[PageCard]
    hubs: list[PageCard]


class SectionShown(BaseModel):
    slug: str
    heading: str
    body_md: str
    claims: list[ClaimView]


class PageShown(BaseModel):
    type: str
    slug: str
    title: str
    summary: str | None
    aliases: list[str]
    updated_at: datetime
    last_compiled_at: datetime | None
    sections: list[SectionShown]
    cited: dict[str, CitedText]  # every memory a claim or section of the page cites, by id
    backlinks: list[Backlink]
    related: list[RelatedHit]


class MemoryShown(BaseModel):
    memory: MemoryView
    sections: list[CitingSection]
    claims: list[ClaimCiting]


class GraphView(BaseModel):
    total: int
    drawn: list[PageCard]
    edges: list[GraphEdge]
    listed: list[PageCard]
    offset: int
    next_offset: int | None


class RunsView(BaseModel):
    runs: list[JobRow]


async def home_view(conn: AsyncConnection, scope: ReadScope) -> HomeView:
    return HomeView(counts=await web_reads.scope_counts(conn, scope.tenant, scope.owner),
                    recent=await web_reads.recent_pages(conn, scope.tenant, scope.owner, RECENT_SHOWN),
                    hubs=await web_reads.hub_pages(conn, scope.tenant, scope.owner, HUBS_SHOWN))


async def page_view(conn: AsyncConnection, scope: ReadScope, page_type: str, slug: str) -> PageShown:
    """The active page with its claims, the memories they cite, its backlinks and its related pages:
    three statements (the page, its claims, what surrounds it)."""
    if page_type not in PAGE_TYPES:
        raise NotFound(f"no page {page_type[:40]}/{slug[:40]} in this wiki")
    slug = reads.text_argument("slug", slug, reads.MAX_NAME_CHARS)
    view = await wiki_reads.find_page(conn, scope.tenant, scope.owner, page_type, slug)
    if view is None:
        raise NotFound(f"no page {page_type}/{slug} in this wiki")
    # Superseded claims too: the page shows them behind its history toggle, with their end date.
    claimed = await claim_store.page_claims(conn, scope.tenant, scope.owner, view.id, shown="history")
    around = await web_reads.page_surroundings(conn, scope.tenant, scope.owner, view.id)
    # The API's related ranking over the cone two links deep.
    relations = {way: reads.walked_levels(view.id, around.levels[way]) for way in ("out", "in")}
    related = reads.rank_cone(view, relations, around.cards, None, RELATED_SHOWN, "both", RELATED_HOPS)
    return PageShown(
        type=view.type, slug=view.slug, title=view.title, summary=view.summary, aliases=view.aliases,
        updated_at=view.updated_at, last_compiled_at=view.last_compiled_at,
        sections=[SectionShown(slug=s.slug, heading=s.heading, body_md=s.body_md, claims=claimed.get(s.slug, []))
                  for s in view.sections],
        cited=around.cited, backlinks=around.backlinks, related=related.hits)


def parse_memory_id(value: str) -> UUID:
    try:
        return UUID(value[:64])
    except ValueError:
        raise NotFound("no such memory in this wiki") from None


async def memory_view(conn: AsyncConnection, scope: ReadScope, memory_id: str) -> MemoryShown:
    """The memory whole and its blast radius: every section and claim of an active page citing it."""
    found = await wiki_reads.find_memory(conn, scope.tenant, scope.owner, parse_memory_id(memory_id))
    if found is None:
        raise NotFound("no such memory in this wiki")
    return MemoryShown(memory=found,
                       sections=await wiki_reads.sections_citing(conn, scope.tenant, scope.owner, found.id),
                       claims=await web_reads.claims_citing(conn, scope.tenant, scope.owner, str(found.id)))


async def graph_view(conn: AsyncConnection, scope: ReadScope, offset: int = 0) -> GraphView:
    if not 0 <= offset <= MAX_GRAPH_OFFSET:
        raise BadInput(f"offset must be between 0 and {MAX_GRAPH_OFFSET} (got {offset})")
    total = await web_reads.active_page_count(conn, scope.tenant, scope.owner)
    drawn = await web_reads.best_connected_pages(conn, scope.tenant, scope.owner, GRAPH_DRAWN)
    edges = await web_reads.links_among(conn, scope.tenant, scope.owner, [page.id for page in drawn])
    listed = await web_reads.pages_in_order(conn, scope.tenant, scope.owner, GRAPH_LISTED, offset)
    following = offset + len(listed)
    return GraphView(total=total, drawn=drawn, edges=edges, listed=listed, offset=offset,
                     next_offset=following if following < total else None)


async def runs_view(conn: AsyncConnection, scope: ReadScope) -> RunsView:
    return RunsView(runs=await list_jobs(conn, tenant=scope.tenant, owner=scope.owner, limit=RUNS_SHOWN))


async def forget_memory(engine: AsyncEngine, scope: ReadScope, memory_id: str, connect: TemporalConnector,
                        settings: Settings) -> ForgetQueued:
    """Queue the forget of one memory of the caller's scope, as `DELETE /v1/memories/{id}` does: served
    by the scope's compile between batches; NotFound for a memory of another scope or none."""
    queued = await forget_for_agent(engine, scope, [memory_id], connect, settings)
    assert isinstance(queued, ForgetQueued)
    return queued


def page_ref(card: PageCard) -> PageRef:
    return PageRef(type=card.type, slug=card.slug, title=card.title)
