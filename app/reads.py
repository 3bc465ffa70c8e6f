"""What an agent can ask its wiki, once: the MCP server, the HTTP API and the CLI all call these.

Every operation takes the caller's scope (from the command line, the MCP connection or the bearer
token, never from an argument a model fills in) and only ever reads that scope (the one write, a
retain, is app/retain.py). Inputs are bounded here, whatever the surface: a bad value raises
`BadInput` with one sentence, a name that designates no page of the scope raises `NotFound`, worded
the same whether the page exists in another scope or nowhere.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import NamedTuple, cast
from uuid import UUID

from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from domain.claims import status_meanings
from domain.markup import safe_markdown
from domain.memory import parse_instant, validate_scope_part
from domain.plan import PAGE_TYPES
from domain.related import (
    DEFAULT_RELATED_LIMIT,
    MAX_CONE_PAGES,
    MAX_MAX_HOPS,
    MAX_RELATED_LIMIT,
    Candidate,
    Direction,
    cone,
    rank_related,
)
from store import agent_reads, scope_revisions, wiki_reads
from store.agent_reads import CitedMemory, PageChange
from store.claims import ClaimView, page_claims, page_has_history

DEFAULT_SEARCH_LIMIT = 10
MAX_QUERY_CHARS = 500
MAX_NAME_CHARS = 300
DEFAULT_PAGE_CHARS = 8_000
MAX_PAGE_CHARS = 32_000
DEFAULT_SOURCES_LIMIT = 20
MAX_SOURCES_LIMIT = 100
DEFAULT_CHANGES_LIMIT = 50
MAX_CHANGES_LIMIT = 200
MAX_NEW_SOURCES_SHOWN = 20
OTHER_MATCHES_SHOWN = 4


class BadInput(ValueError):
    """An argument out of bounds or malformed; the message says which and what is allowed."""


class NotFound(LookupError):
    """Nothing of that name in the caller's scope."""


class ReadScope(BaseModel):
    tenant: str
    owner: str

    @classmethod
    def of(cls, tenant: str, owner: str) -> ReadScope:
        return cls(tenant=validate_scope_part("tenant", tenant), owner=validate_scope_part("owner", owner))


class PageRef(BaseModel):
    type: str
    slug: str
    title: str


class Hit(BaseModel):
    type: str
    slug: str
    title: str
    summary: str | None
    score: float
    matched_alias: str | None


class SearchResult(BaseModel):
    query: str
    hits: list[Hit]


class SectionInfo(BaseModel):
    id: str
    heading: str
    source_count: int
    # Each line of the section with its own citations, confidence and status (at least
    # `min_confidence` sure when the read asked for that).
    claims: list[ClaimView] = Field(default_factory=list)


class PageDocument(BaseModel):
    type: str
    slug: str
    title: str
    summary: str | None
    aliases: list[str]
    matched_by: str
    sections: list[SectionInfo]
    markdown: str
    offset: int
    next_offset: int | None  # pass it back as `offset` for the rest of a long page
    total_chars: int
    last_compiled_at: datetime | None
    other_matches: list[PageRef]
    # What each status its claims carry means, in one line (domain/claims.py STATUS_MEANINGS).
    statuses: dict[str, str] = Field(default_factory=dict)


class SourcesResult(BaseModel):
    page: PageRef
    section: str | None
    memories: list[CitedMemory]
    total: int
    truncated: bool


class RelatedHit(BaseModel):
    type: str
    slug: str
    title: str
    summary: str | None
    score: float
    influence: float
    text_relevance: float
    recency: float
    hops: int
    direction: str


class RelatedResult(BaseModel):
    page: PageRef
    direction: str
    max_hops: int
    cone_size: int
    hits: list[RelatedHit]


class ChangesResult(BaseModel):
    since: datetime
    pages: list[PageChange]
    next_cursor: str | None  # pass it back as `cursor` for the changes that follow


Database = AsyncEngine | AsyncConnection


@asynccontextmanager
async def connection(db: Database) -> AsyncIterator[AsyncConnection]:
    """A connection of the engine, or the caller's own (a server that already holds one for the request
    reads on it: one pool checkout per request instead of two)."""
    if isinstance(db, AsyncConnection):
        yield db
        return
    async with db.connect() as conn:
        yield conn


def _bounded(name: str, value: int | None, default: int, high: int, low: int = 1) -> int:
    if value is None:
        return default
    if not low <= value <= high:
        raise BadInput(f"{name} must be between {low} and {high} (got {value})")
    return value


def _text_argument(name: str, value: str, high: int) -> str:
    if not value.strip():
        raise BadInput(f"{name} must not be empty")
    if len(value) > high:
        raise BadInput(f"{name} must be at most {high} characters (got {len(value)})")
    if "\x00" in value:
        raise BadInput(f"{name} must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise BadInput(f"{name} must be valid Unicode text (it holds a lone surrogate)") from None
    return value.strip()


# Every surface (MCP, HTTP, the CLI) checks a text argument the same way, with the same sentence.
text_argument = _text_argument
bounded = _bounded


# ------------------------------------------------------------------------------------------ pages


class _Resolved(NamedTuple):
    view: wiki_reads.PageView
    how: str  # what the name matched: "type/slug", "slug", "alias" or "title"
    others: list[PageRef]  # other pages the name could mean


async def _resolve(conn: AsyncConnection, scope: ReadScope, name: str) -> _Resolved:
    """The page a name designates (TYPE/SLUG, slug, alias or title) and the other pages it could mean."""
    name = _text_argument("page name", name, MAX_NAME_CHARS)
    page_type, slash, slug = name.partition("/")
    if slash and page_type in PAGE_TYPES and slug.strip():
        # TYPE/SLUG names one page exactly; it never falls back to a looser match.
        return _Resolved(await _page_view(conn, scope, page_type, slug.strip()), "type/slug", [])
    matches = await agent_reads.pages_named(conn, scope.tenant, scope.owner, name, limit=OTHER_MATCHES_SHOWN + 1)
    if not matches:
        raise NotFound(f"no page named {name!r} in this wiki; search finds pages by words")
    best = matches[0]
    return _Resolved(await _page_view(conn, scope, best.type, best.slug), best.how,
                     [PageRef(type=m.type, slug=m.slug, title=m.title) for m in matches[1:]])


async def page_key(conn: AsyncConnection, scope: ReadScope, name: str) -> tuple[str, str]:
    """(type, slug) of the page a name designates, as `get_page` reads it: TYPE/SLUG as given (the page
    need not exist, nor be active), else the best active page by slug, alias or title."""
    name = _text_argument("page name", name, MAX_NAME_CHARS)
    page_type, slash, slug = name.partition("/")
    if slash and page_type in PAGE_TYPES and slug.strip():
        return page_type, slug.strip()
    matches = await agent_reads.pages_named(conn, scope.tenant, scope.owner, name, limit=1)
    if not matches:
        raise NotFound(f"no page named {name!r} in this wiki; search finds pages by words")
    return matches[0].type, matches[0].slug


async def _page_view(conn: AsyncConnection, scope: ReadScope, page_type: str, slug: str) -> wiki_reads.PageView:
    view = await wiki_reads.find_page(conn, scope.tenant, scope.owner, page_type, slug)
    if view is None:
        raise NotFound(f"no page {page_type}/{slug} in this wiki")
    return view


def claim_line(claim: ClaimView) -> str:
    """A claim as a page shows it: a replaced fact says until when it held, a disputed one says so."""
    if claim.validity == "superseded" and claim.valid_to is not None:
        return f"{claim.text} _(until {claim.valid_to.date().isoformat()})_"
    if claim.validity == "disputed":
        return f"{claim.text} _(disputed)_"
    return claim.text


def page_markdown(view: wiki_reads.PageView, claims: dict[str, list[ClaimView]] | None = None) -> str:
    """The page as markdown; each section heading carries its id ({#slug}) for get_sources. With
    `claims` (a confidence filter, the facts that hold now or held at a date, or the history), each
    section shows only those claims."""
    lines = [f"# {view.title}", "", f"{view.type}/{view.slug} · aliases: {', '.join(view.aliases) or 'none'}"]
    if view.summary:
        lines += ["", view.summary]
    for section in view.sections:
        cited = len(section.source_refs)
        body = section.body_md.strip() if claims is None else "\n".join(claim_line(c) for c in claims.get(section.slug, []))
        lines += ["", f"## {section.heading} {{#{section.slug}}}", "", body, "",
                  f"_cites {cited} memor{'y' if cited == 1 else 'ies'}_"]
    # Whatever the rows hold (rows stored under an older rule included), the markdown an agent reads
    # is safe (domain.markup); for the rows written now this changes nothing.
    return safe_markdown("\n".join(lines)) + "\n"


def _window(markdown: str, offset: int, max_chars: int) -> tuple[str, int | None]:
    """markdown[offset:] cut to max_chars, at a line end when one falls in the second half."""
    end = offset + max_chars
    if end >= len(markdown):
        return markdown[offset:], None
    newline = markdown.rfind("\n", offset + max_chars // 2, end)
    if newline != -1:
        end = newline + 1
    return markdown[offset:end], end


def _document(view: wiki_reads.PageView, matched_by: str, others: list[PageRef], offset: int | None,
              max_chars: int | None, claims: dict[str, list[ClaimView]], filtered: bool) -> PageDocument:
    max_chars = _bounded("max_chars", max_chars, DEFAULT_PAGE_CHARS, MAX_PAGE_CHARS, low=200)
    markdown = page_markdown(view, claims if filtered else None)
    offset = _bounded("offset", offset, 0, max(0, len(markdown) - 1), low=0)
    chunk, next_offset = _window(markdown, offset, max_chars)
    return PageDocument(
        type=view.type, slug=view.slug, title=view.title, summary=view.summary, aliases=view.aliases,
        matched_by=matched_by, markdown=chunk, offset=offset, next_offset=next_offset, total_chars=len(markdown),
        last_compiled_at=view.last_compiled_at, other_matches=others,
        sections=[SectionInfo(id=s.slug, heading=s.heading, source_count=len(s.source_refs),
                              claims=claims.get(s.slug, [])) for s in view.sections],
        statuses=status_meanings(c.status for section in claims.values() for c in section),
    )


def _min_confidence(value: float | None) -> float:
    if value is None:
        return 0.0
    if not isinstance(value, (int, float)) or value != value or not 0.0 <= value <= 1.0:
        raise BadInput(f"min_confidence must be a number from 0 to 1 (got {value!r})")
    return float(value)


def parse_as_of(value: str | None) -> datetime | None:
    """An `as_of` argument: an ISO 8601 date (the end of that day, UTC) or date-time; None for none."""
    if value is None:
        return None
    value = _text_argument("as_of", value, 60)
    try:
        moment = parse_instant("as_of", value)
    except ValueError as error:
        raise BadInput(str(error)) from None
    if len(value) == 10:  # a day: the page as it stood at the end of it
        moment = moment + timedelta(days=1) - timedelta(microseconds=1)
    return moment


async def _claims_shown(conn: AsyncConnection, scope: ReadScope, view: wiki_reads.PageView, floor: float,
                        as_of: datetime | None, history: bool) -> tuple[dict[str, list[ClaimView]], bool]:
    """The claims a read shows, and whether the markdown is rendered from them rather than the body."""
    claims = await page_claims(conn, scope.tenant, scope.owner, view.id, floor,
                               shown="history" if history else "current", as_of=as_of)
    from_claims = as_of is not None or history or await page_has_history(conn, view.id)
    return claims, from_claims


async def get_page(db: Database, scope: ReadScope, name: str, offset: int | None = None,
                   max_chars: int | None = None, min_confidence: float | None = None,
                   as_of: str | None = None, history: bool = False) -> PageDocument:
    """The page a name designates, as markdown, at most `max_chars` from `offset` on; with
    `min_confidence`, only the claims at least that sure. Facts that were replaced are left out
    unless `history` (then each says until when it held); with `as_of` the page shows what its
    memories up to that moment supported."""
    floor = _min_confidence(min_confidence)
    moment = parse_as_of(as_of)
    async with connection(db) as conn:
        view, how, others = await _resolve(conn, scope, name)
        claims, from_claims = await _claims_shown(conn, scope, view, floor, moment, history)
    return _document(view, how, others, offset, max_chars, claims, min_confidence is not None or from_claims)


async def get_page_by_key(db: Database, scope: ReadScope, page_type: str, slug: str,
                          offset: int | None = None, max_chars: int | None = None,
                          min_confidence: float | None = None, as_of: str | None = None,
                          history: bool = False) -> PageDocument:
    if page_type not in PAGE_TYPES:
        raise BadInput(f"page type must be one of {', '.join(PAGE_TYPES)} (got {page_type[:40]!r})")
    slug = _text_argument("slug", slug, MAX_NAME_CHARS)
    floor = _min_confidence(min_confidence)
    moment = parse_as_of(as_of)
    async with connection(db) as conn:
        view = await _page_view(conn, scope, page_type, slug)
        claims, from_claims = await _claims_shown(conn, scope, view, floor, moment, history)
    return _document(view, "type/slug", [], offset, max_chars, claims, min_confidence is not None or from_claims)


# ------------------------------------------------------------------------------------------ sources


async def get_sources(db: Database, scope: ReadScope, name: str, section: str | None = None,
                      limit: int | None = None) -> SourcesResult:
    """The memories a page, or one section of it, cites: their text and date, newest first."""
    limit = _bounded("limit", limit, DEFAULT_SOURCES_LIMIT, MAX_SOURCES_LIMIT)
    section = _text_argument("section", section, MAX_NAME_CHARS) if section is not None else None
    async with connection(db) as conn:
        view = (await _resolve(conn, scope, name)).view
        if section is not None and section not in {s.slug for s in view.sections}:
            raise NotFound(f"page {view.type}/{view.slug} has no section {section!r}; its sections are "
                           f"{', '.join(s.slug for s in view.sections) or 'none'}")
        memories, total = await agent_reads.cited_memories(conn, scope.tenant, scope.owner, view.id, section, limit)
    return SourcesResult(page=PageRef(type=view.type, slug=view.slug, title=view.title), section=section,
                         memories=memories, total=total, truncated=total > len(memories))


# ------------------------------------------------------------------------------------------ related


def _take_level(relation: dict[str, set[str]], reached: set[UUID], pairs: list[tuple[UUID, UUID]]) -> list[UUID] | None:
    """Add one level of a walk to `relation` and `reached`; the next frontier, or None when the level
    would take the cone past MAX_CONE_PAGES (and is not taken)."""
    new = {far for _, far in pairs if far not in reached}
    if len(reached) + len(new) > MAX_CONE_PAGES + 1:
        return None
    for near, far in pairs:
        relation.setdefault(str(near), set()).add(str(far))
    reached |= new
    return sorted(new)


async def _walk(conn: AsyncConnection, scope: ReadScope, origin: str, ways: list[str],
                max_hops: int) -> dict[str, dict[str, set[str]]]:
    """The links each direction's walk can follow, level by level up to `max_hops`; the directions
    are walked side by side, one round trip per level.

    A level that would take a direction's cone past MAX_CONE_PAGES is not taken: the cone stays
    complete up to the hops it reached, and the ranking stays a full sort over it.
    """
    relations: dict[str, dict[str, set[str]]] = {way: {} for way in ways}
    reached = {way: {origin} for way in ways}
    frontiers = {way: [origin] for way in ways}
    for _ in range(max_hops):
        level = await agent_reads.linked_pages_each_way(conn, scope.tenant, scope.owner, frontiers)
        for way, pairs in level.items():
            new = {far for _, far in pairs if far not in reached[way]}
            if len(reached[way]) + len(new) > MAX_CONE_PAGES + 1:
                del frontiers[way]
                continue
            relation = relations[way]
            for near, far in pairs:
                relation.setdefault(near, set()).add(far)
            reached[way] |= new
            frontiers[way] = sorted(new)
            if not new:
                del frontiers[way]
        if not frontiers:
            break
    return relations


def walked_levels(origin: UUID, levels: list[list[tuple[UUID, UUID]]]) -> dict[str, set[str]]:
    """What `_walk` keeps of one direction's levels read at once (level 1 first, each level's frontier
    the pages the level before reached first)."""
    relation: dict[str, set[str]] = {}
    reached = {origin}
    for pairs in levels:
        if not _take_level(relation, reached, pairs):
            break
    return relation


async def related(db: Database, scope: ReadScope, name: str, limit: int | None = None,
                  direction: Direction = "both", max_hops: int | None = None,
                  query: str | None = None) -> RelatedResult:
    """Pages around a page: the link cone (each direction walked on its own), every candidate scored
    by random-walk influence, text relevance (to `query`, else to the page's title and summary) and
    recency, sorted fully, then cut to `limit`."""
    limit = _bounded("limit", limit, DEFAULT_RELATED_LIMIT, MAX_RELATED_LIMIT)
    max_hops = _bounded("max_hops", max_hops, 3, MAX_MAX_HOPS)
    if direction not in ("out", "in", "both"):
        raise BadInput(f"direction must be out, in or both (got {direction!r})")
    query = _text_argument("query", query, MAX_QUERY_CHARS) if query is not None else None
    async with connection(db) as conn:
        view = (await _resolve(conn, scope, name)).view
        origin = str(view.id)
        relations = await _walk(conn, scope, origin, ["out", "in"] if direction == "both" else [direction],
                                max_hops)
        found = cone(origin, relations)
        pages = await agent_reads.cone_rows(conn, scope.tenant, scope.owner, list(found))
    return rank_cone(view, relations, pages, query, limit, direction, max_hops)


def rank_cone(view: wiki_reads.PageView, relations: dict[str, dict[str, set[str]]],
              pages: Mapping[str, agent_reads.ConeRow], query: str | None, limit: int, direction: Direction,
              max_hops: int) -> RelatedResult:
    """The related pages of `view` from its walked `relations` and the cone's `pages` (by id)."""
    origin = str(view.id)
    found = cone(origin, relations)
    # The cone names a direction by its relation's key ("out", "in") or "both".
    candidates = [Candidate(id=node, hops=hops, direction=cast(Direction, way), changed_at=pages[node].changed_at,
                            text=f"{pages[node].title} {pages[node].summary or ''}")
                  for node, (hops, way) in found.items() if node in pages]
    ranked = rank_related(origin, relations, candidates, query or f"{view.title} {view.summary or ''}",
                          datetime.now(UTC), limit)
    return RelatedResult(
        page=PageRef(type=view.type, slug=view.slug, title=view.title), direction=direction, max_hops=max_hops,
        cone_size=len(candidates),
        hits=[RelatedHit(type=pages[r.id].type, slug=pages[r.id].slug, title=pages[r.id].title,
                         summary=pages[r.id].summary, score=round(r.score, 6), influence=round(r.influence, 6),
                         text_relevance=round(r.text_relevance, 6), recency=round(r.recency, 6), hops=r.hops,
                         direction=r.direction) for r in ranked],
    )


# ------------------------------------------------------------------------------------------ changes


def _encode_cursor(changed_at: datetime, page_id: UUID) -> str:
    return base64.urlsafe_b64encode(f"{changed_at.isoformat()}|{page_id}".encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[datetime, UUID]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        when, _, page_id = raw.partition("|")
        return parse_instant("cursor", when), UUID(page_id)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise BadInput("cursor is not one this API returned; pass next_cursor back unchanged") from None


def parse_since(value: str) -> datetime | UUID:
    """An ISO-8601 time (UTC when it names no zone) or a compile run id."""
    value = _text_argument("since", value, 100)
    try:
        return UUID(value)
    except ValueError:
        pass
    try:
        return parse_instant("since", value)
    except ValueError as error:
        if "out of range" in str(error):
            raise BadInput(f"since {error}") from None
        raise BadInput(f"since must be an ISO-8601 time (2026-11-23T10:00:00Z) or a compile run id "
                       f"(got {value!r})") from None


async def changes_since(db: Database, scope: ReadScope, since: str, limit: int | None = None,
                        cursor: str | None = None) -> ChangesResult:
    """Pages created or changed after a time (or after a compile run started), oldest change first,
    each with the sections added or rewritten and the memories newly cited."""
    limit = _bounded("limit", limit, DEFAULT_CHANGES_LIMIT, MAX_CHANGES_LIMIT)
    after = _decode_cursor(cursor) if cursor else None
    parsed = parse_since(since)
    async with connection(db) as conn:
        if isinstance(parsed, UUID):
            started = await agent_reads.compile_run_started_at(conn, scope.tenant, scope.owner, str(parsed))
            if started is None:
                raise NotFound(f"no compile run {parsed} in this wiki")
            parsed = started
        pages, more = await agent_reads.changed_pages(conn, scope.tenant, scope.owner, parsed, after, limit,
                                                      MAX_NEW_SOURCES_SHOWN)
    next_cursor = _encode_cursor(pages[-1].changed_at, pages[-1].id) if more and pages else None
    return ChangesResult(since=parsed, pages=pages, next_cursor=next_cursor)


async def wiki_revision(conn: AsyncConnection, scope: ReadScope) -> int:
    """A number that changes at the commit of any write to the scope's wiki tables (pages, sections,
    aliases, links, claims and their sources; not memories): answers read after it are current as of it."""
    return await scope_revisions.wiki_revision(conn, scope.tenant, scope.owner)
