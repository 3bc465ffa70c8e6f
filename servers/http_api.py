"""`wiki serve`: the agent read surface over HTTP (FastAPI), OpenAPI schema at /openapi.json and its
documentation at /docs (assets served by this server, so it renders offline).

Every /v1 route needs `Authorization: Bearer <token>`; the token alone decides the scope, so no
request can name, read or write another scope. `servers/guard.py` checks the token, the body's
size, the server's load, the token's rate and rights before a route runs. Errors are JSON
`{"error": "..."}` with one sentence: 401 without a live token, 403 for a token without the rights,
404 for what is not in the token's scope (worded as for what exists nowhere), 411/413 for a body
without a length or over the limit, 422 for bad input, 429 over the token's rate, 503 (with
Retry-After) when the server is overloaded or a retain cannot reach Temporal.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Query, Request, Security
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi_offline import FastAPIOffline
from pydantic import BaseModel, Field
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.exceptions import HTTPException as StarletteHTTPException

from app import reads
from app import recall as recall_use
from app.context import context as standing_context
from app.conversations import ConversationSummary, retain_conversation_for_agent
from app.forget import BlastRadius, ForgetQueued, forget_for_agent
from app.reads import BadInput, NotFound
from app.retain import (
    MAX_RETAIN_MEMORIES,
    CompileUnavailable,
    RetainSummary,
    TemporalConnector,
    parse_memories,
    retain_for_agent,
)
from app.search import search as search_pages
from domain.conversation import MAX_MESSAGES, ConversationIn
from domain.memory import (
    MAX_METADATA_DEPTH,
    MemoryIn,
    RetainError,
    ScopeError,
    json_outline_problem,
    parse_json,
)
from domain.recall import RETRIEVERS
from domain.related import MAX_MAX_HOPS, MAX_RELATED_LIMIT
from domain.search import MAX_SEARCH_LIMIT
from domain.tokens import allows
from runtime.settings import Settings
from runtime.temporal_client import signal_compile
from servers.corrections_api import OPERATOR_NEEDS, add_correction_routes
from servers.guard import (
    BUSY_MESSAGE,
    Caller,
    GuardRules,
    RequestGuard,
    ServerCounters,
    caller_of,
)
from servers.merge_routes import add_merge_routes
from servers.read_cache import ReadCache
from servers.web.views import add_web_views

log = logging.getLogger(__name__)
PageType = Literal["entity", "topic", "decision"]
RETAIN_ROUTE = ("POST", "/v1/memories")
CONVERSATIONS_ROUTE = ("POST", "/v1/conversations")
METRICS_ROUTE = ("GET", "/v1/metrics")
FORGET_ROUTE = ("POST", "/v1/memories/forget")
# The retain body is {"memories": [memory, ...]}: two levels above each memory's metadata.
_BODY_DEPTH = MAX_METADATA_DEPTH + 3


class ForgetRequest(BaseModel):
    memory_ids: list[str] = Field(min_length=1, max_length=1000, description="The memories to forget (UUIDs).")
    dry_run: bool = Field(False, description="Only list what forgetting them would touch (the blast radius).")


class ErrorBody(BaseModel):
    error: str = Field(description="One sentence saying what was wrong and what is allowed.")


class RetainRequest(BaseModel):
    memories: list[MemoryIn] = Field(
        min_length=1, max_length=MAX_RETAIN_MEMORIES,
        description=f"Memories to store (1 to {MAX_RETAIN_MEMORIES}): content (required, at most 32 KiB), "
                    "optional id (UUID), metadata (a JSON object, at most 64 KiB; `entities` names what the memory "
                    "is about) and occurred_at (ISO 8601), as `wiki retain` reads them.")


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


_bearer = HTTPBearer(auto_error=False, scheme_name="bearer",
                     description="A token from `wiki token create` (read, write or operator rights); it decides "
                                 "the scope of every request.")


async def _caller(request: Request,
                  _: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)] = None) -> Caller:
    """The caller the guard authenticated (the security parameter only declares the scheme). A
    coroutine, so FastAPI calls it on the event loop rather than in a worker thread."""
    return caller_of(request.scope)


Authorised = Annotated[Caller, Depends(_caller)]


# FastAPI's `responses`: status code -> its OpenAPI description.
Responses = dict[int | str, dict[str, Any]]


def _bound(description: str, high: int, low: int = 1) -> Any:
    # Bounds are declared for the schema and checked by app.reads, which words the error the same
    # way on every surface.
    return Query(description=description, json_schema_extra={"minimum": low, "maximum": high})


def _text(description: str, high: int) -> Any:
    return Query(description=description, json_schema_extra={"minLength": 1, "maxLength": high})


Offset = Annotated[int | None, Query(description="`next_offset` of the previous call, for the rest of a long page.",
                                     json_schema_extra={"minimum": 0})]
MinConfidence = Annotated[float | None, Query(
    description="Only claims at least this sure, from 0 to 1 (0.7: one memory says it, 0.8: two, ...).",
    json_schema_extra={"minimum": 0, "maximum": 1})]
AsOf = Annotated[str | None, Query(description="A date (2026-02-15) or ISO date-time: the page as its memories up "
                                               "to then supported it.", json_schema_extra={"maxLength": 60})]
History = Annotated[bool, Query(description="Also the facts since replaced, each with the day it stopped holding.")]
MaxChars = Annotated[int | None, _bound(f"Characters at most (default {reads.DEFAULT_PAGE_CHARS}).",
                                        reads.MAX_PAGE_CHARS, 200)]

UNAUTHORIZED: Responses = {401: {"model": ErrorBody, "description": "No bearer token, or not a live one"},
                429: {"model": ErrorBody, "description": "Over the token's request rate (see Retry-After)"},
                503: {"model": ErrorBody, "description": "Overloaded (see Retry-After)"}}
NOT_FOUND: Responses = {404: {"model": ErrorBody, "description": "Not in this token's scope"}}
BAD_INPUT: Responses = {422: {"model": ErrorBody, "description": "Bad input"}}


Budget = Annotated[int | None, _bound(
    f"Budget for the whole response body, at 4 characters a token (default {recall_use.DEFAULT_MAX_TOKENS}).",
    recall_use.MAX_MAX_TOKENS, recall_use.MIN_MAX_TOKENS)]
Verbose = Annotated[bool, Query(description="Also each answer's section, kind, status, confidence, validity, "
                                            "scores and retriever signals (they count in the budget).")]


def _validation_sentence(error: RequestValidationError) -> str:
    problems = []
    for item in error.errors()[:3]:
        if item.get("type") == "json_invalid":
            return "the request body is not valid JSON"
        where = ".".join(str(part) for part in item["loc"] if part not in ("body", "query", "path")) or "request"
        problems.append(f"{where}: {item['msg'][:1].lower()}{item['msg'][1:]}")
    return "; ".join(problems) or "invalid request"


def _retain_memories(body: bytes) -> list[Any]:
    """The body's memories as JSON values, refused before parsing when too deep or too many."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput("the request body must be JSON encoded as UTF-8") from None
    problem = json_outline_problem(text, _BODY_DEPTH, MAX_RETAIN_MEMORIES)
    if problem:
        raise BadInput(f"{problem} (send at most {MAX_RETAIN_MEMORIES} memories per call)"
                       if problem.startswith("at most") else problem)
    try:
        value = parse_json(text)
    except ValueError as error:
        raise BadInput(str(error)) from None
    if not isinstance(value, dict) or not isinstance(value.get("memories"), list):
        raise BadInput('the request body must be a JSON object {"memories": [...]}')
    unknown = sorted(set(value) - {"memories"})
    if unknown:
        raise BadInput(f"unknown field {unknown[0][:40]!r} in the request body (only memories is allowed)")
    return value["memories"]


# A conversation is {"messages": [{...}]}: three levels; anything deeper is refused unparsed.
_CONVERSATION_DEPTH = 3


def _conversation_body(body: bytes) -> Any:
    """The body's conversation as a JSON value, refused before parsing when too deep or too long."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput("the request body must be JSON encoded as UTF-8") from None
    if json_outline_problem(text, _CONVERSATION_DEPTH) is not None:
        raise BadInput('a conversation is {"id", "user", "messages": [{"speaker", "text", "time"}]}: '
                       "nothing in it nests deeper")
    problem = json_outline_problem(text, _CONVERSATION_DEPTH, MAX_MESSAGES)
    if problem:
        raise BadInput(f"at most {MAX_MESSAGES} messages per call; send the rest with their positions")
    try:
        return parse_json(text)
    except ValueError as error:
        raise BadInput(str(error)) from None


def create_app(engine: AsyncEngine, connect_temporal: TemporalConnector, settings: Settings,
               counters: ServerCounters | None = None) -> FastAPI:
    """The API over `engine`; `connect_temporal` is called (once, then cached) by the first retain."""
    counters = counters or ServerCounters()
    api = FastAPIOffline(
        title="wiki-compiler API", version="1", redoc_url=None,
        description="Ask an agent's compiled wiki questions (recall, context), read it (search, pages with citations, related pages, what changed) "
                    "and retain new memories. Authenticate with a per-scope bearer token from `wiki token create` "
                    "(`--rights read` by default; `write` to retain). Every error is JSON with one sentence.",
        responses={**UNAUTHORIZED, **BAD_INPUT})
    read_cache = ReadCache(settings.http_read_cache_mib * 2**20) if settings.http_read_cache_mib else None
    api.add_middleware(RequestGuard, engine=engine, settings=settings, counters=counters, share_connection=True,
                       read_cache=read_cache,
                       rules=GuardRules("/v1/", needs={RETAIN_ROUTE: "write", CONVERSATIONS_ROUTE: "write",
                                                       METRICS_ROUTE: "operator", **OPERATOR_NEEDS},
                                        write_routes=frozenset({RETAIN_ROUTE, CONVERSATIONS_ROUTE, FORGET_ROUTE,
                                                                *OPERATOR_NEEDS})))
    api.state.engine = engine
    temporal_client: list[Any] = []

    async def connect_once():
        if not temporal_client:
            temporal_client.append(await connect_temporal())
        return temporal_client[0]

    async def wake(scope: reads.ReadScope) -> None:
        try:
            client = await connect_once()
        except (RuntimeError, OSError) as error:
            raise CompileUnavailable(f"the scope is resumed, but Temporal cannot be reached to wake its compile "
                                     f"({error}); the next retain or `wiki compile` wakes it") from None
        await signal_compile(client, scope.tenant, scope.owner, trigger="admin", settings=settings)

    add_correction_routes(api, engine, _caller, wake)

    @api.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, error: StarletteHTTPException) -> JSONResponse:
        return _error(error.status_code, str(error.detail), getattr(error, "headers", None))

    @api.exception_handler(RequestValidationError)
    async def validation_error(_: Request, error: RequestValidationError) -> JSONResponse:
        return _error(422, _validation_sentence(error))

    @api.exception_handler(BadInput)
    async def bad_input(_: Request, error: BadInput) -> JSONResponse:
        return _error(422, str(error))

    @api.exception_handler(ScopeError)
    async def bad_scope(_: Request, error: ScopeError) -> JSONResponse:
        return _error(422, str(error))

    @api.exception_handler(RetainError)
    async def retain_refused(_: Request, error: RetainError) -> JSONResponse:
        return _error(422, str(error))

    @api.exception_handler(NotFound)
    async def not_found(_: Request, error: NotFound) -> JSONResponse:
        return _error(404, str(error))

    @api.exception_handler(CompileUnavailable)
    async def unavailable(_: Request, error: CompileUnavailable) -> JSONResponse:
        return _error(503, str(error), {"Retry-After": "5"})

    @api.exception_handler(PoolTimeout)
    async def pool_exhausted(_: Request, error: PoolTimeout) -> JSONResponse:
        counters.refused["pool_exhausted"] += 1
        return _error(503, BUSY_MESSAGE, {"Retry-After": "1"})

    @api.exception_handler(DBAPIError)
    async def database_error(_: Request, error: DBAPIError) -> JSONResponse:
        # Parameters are hidden by the engine; the statement and the driver's message are enough.
        log.warning("database error: %s", error.orig)
        if error.connection_invalidated or isinstance(error.orig, OSError):
            return _error(503, "the database is unreachable; retry after the time in Retry-After",
                          {"Retry-After": "5"})
        return _error(422, "the database refused a value of this request; check its text and dates")

    @api.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @api.get("/v1/metrics", response_class=PlainTextResponse, tags=["operate"],
             responses={403: {"model": ErrorBody, "description": "Not an operator token"}})
    async def metrics(_: Authorised) -> str:
        """This server process's counters (responses by status, refusals by reason, requests in flight
        and waiting) in Prometheus' text format; operator tokens only."""
        return counters.prometheus()

    @api.get("/v1/search", response_model=reads.SearchResult, tags=["read"])
    async def search(caller: Authorised,
                     q: Annotated[str, _text("Words; a word may be a prefix.", reads.MAX_QUERY_CHARS)],
                     limit: Annotated[int | None, _bound(f"Hits at most (default {reads.DEFAULT_SEARCH_LIMIT}).",
                                                        MAX_SEARCH_LIMIT)] = None) -> reads.SearchResult:
        """The pages holding the answers to the words, best first: recall's ranking grouped by page, the
        pages the words name (a title or an alias) first."""
        return await search_pages(caller.conn or engine, caller.scope, q, limit, recall_use.embedder_for(settings))

    body_doc: dict[int | str, dict[str, Any]] = {200: {"model": recall_use.RecallBody, "description": "The answers, in a body of at most "
                                                                    "max_tokens × 4 characters."}}

    @api.get("/v1/recall", response_class=Response, responses=body_doc, tags=["read"])
    async def recall(caller: Authorised,
                     q: Annotated[str, _text("The question, in plain words.", recall_use.MAX_QUESTION_CHARS)],
                     max_tokens: Budget = None,
                     as_of: Annotated[str | None, Query(description="Only what was known by this ISO-8601 time.")]
                     = None,
                     min_confidence: MinConfidence = None,
                     without: Annotated[str | None, Query(description="Retrievers to switch off, comma-separated: "
                                                          + ", ".join(RETRIEVERS) + ".")] = None,
                     verbose: Verbose = False) -> Response:
        """The answers to the question, best first, in a body of at most `max_tokens` × 4 characters: claims
        (with the memory behind a condensed one) and memories no claim stands for, each with its text,
        page, date and memory ids; `left_out` says how many did not fit."""
        found = await recall_use.recall(caller.conn or engine, caller.scope, q, max_tokens, as_of, min_confidence,
                                        without, embedder=recall_use.embedder_for(settings), verbose=verbose)
        return Response(found.body, media_type="application/json")

    @api.get("/v1/context", response_class=Response, responses=body_doc, tags=["read"])
    async def context(caller: Authorised, max_tokens: Budget = None, min_confidence: MinConfidence = None,
                      verbose: Verbose = False) -> Response:
        """The scope's most important current claims (confidence, corroboration, recency, hub pages), for
        an agent's system prompt, in a body of at most `max_tokens` × 4 characters."""
        found = await standing_context(caller.conn or engine, caller.scope, max_tokens, min_confidence, verbose)
        return Response(found.body, media_type="application/json")

    @api.get("/v1/pages", response_model=reads.PageDocument, responses=NOT_FOUND, tags=["read"])
    async def page_by_name(caller: Authorised,
                           name: Annotated[str, _text("TYPE/SLUG, slug, title or alias.", reads.MAX_NAME_CHARS)],
                           offset: Offset = None, max_chars: MaxChars = None,
                           min_confidence: MinConfidence = None, as_of: AsOf = None,
                           history: History = False) -> reads.PageDocument:
        """The page a name designates (aliases, case and accents resolved), as markdown, with each
        section's claims."""
        return await reads.get_page(caller.conn or engine, caller.scope, name, offset, max_chars, min_confidence,
                                    as_of, history)

    @api.get("/v1/pages/{page_type}/{slug}", response_model=reads.PageDocument, responses=NOT_FOUND, tags=["read"])
    async def page(caller: Authorised, page_type: PageType, slug: str, offset: Offset = None,
                   max_chars: MaxChars = None, min_confidence: MinConfidence = None, as_of: AsOf = None,
                   history: History = False) -> reads.PageDocument:
        """The page as markdown with section ids and each section's claims (the facts that hold now;
        `history` adds those since replaced, `as_of` gives the page at a past date); long pages come
        in windows (`offset`, `next_offset`)."""
        return await reads.get_page_by_key(caller.conn or engine, caller.scope, page_type, slug, offset, max_chars,
                                           min_confidence, as_of, history)

    @api.get("/v1/pages/{page_type}/{slug}/sources", response_model=reads.SourcesResult, responses=NOT_FOUND,
             tags=["read"])
    async def sources(caller: Authorised, page_type: PageType, slug: str,
                      section: Annotated[str | None, _text("A section id (from the page's sections); all sections "
                                                           "when omitted.", reads.MAX_NAME_CHARS)] = None,
                      limit: Annotated[int | None, _bound(f"Memories at most (default {reads.DEFAULT_SOURCES_LIMIT}).",
                                                          reads.MAX_SOURCES_LIMIT)] = None) -> reads.SourcesResult:
        """The memories the page, or one section of it, cites: text and date, newest first."""
        return await reads.get_sources(caller.conn or engine, caller.scope, f"{page_type}/{slug}", section, limit)

    @api.get("/v1/pages/{page_type}/{slug}/related", response_model=reads.RelatedResult, responses=NOT_FOUND,
             tags=["read"])
    async def related(caller: Authorised, page_type: PageType, slug: str,
                      limit: Annotated[int | None, _bound("Pages at most (default 10).", MAX_RELATED_LIMIT)] = None,
                      direction: Annotated[Literal["out", "in", "both"],
                                           Query(description="Links this page makes (out), links to it (in), or "
                                                             "both.")] = "both",
                      max_hops: Annotated[int | None, _bound("How many links away at most (default 3).",
                                                             MAX_MAX_HOPS)] = None,
                      query: Annotated[str | None, _text("Words to favour; default the page's title and summary.",
                                                         reads.MAX_QUERY_CHARS)] = None) -> reads.RelatedResult:
        """Pages around this one over links, ranked by graph influence, text relevance and recency."""
        return await reads.related(caller.conn or engine, caller.scope, f"{page_type}/{slug}", limit, direction, max_hops, query)

    @api.get("/v1/changes", response_model=reads.ChangesResult, responses=NOT_FOUND, tags=["read"])
    async def changes(caller: Authorised,
                      since: Annotated[str, _text("ISO 8601 time (2026-11-23T10:00:00Z), or a compile run id.", 100)],
                      limit: Annotated[int | None, _bound(f"Pages at most (default {reads.DEFAULT_CHANGES_LIMIT}).",
                                                          reads.MAX_CHANGES_LIMIT)] = None,
                      cursor: Annotated[str | None, Query(description="`next_cursor` of the previous call.")] = None,
                      ) -> reads.ChangesResult:
        """Pages and sections created or changed after `since`, oldest first, paged by `next_cursor`."""
        return await reads.changes_since(caller.conn or engine, caller.scope, since, limit, cursor)

    @api.post("/v1/memories", response_model=RetainSummary, status_code=202, tags=["write"],
              openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
                  "schema": {"$ref": "#/components/schemas/RetainRequest"}}}}},
              responses={403: {"model": ErrorBody, "description": "A read token"},
                         413: {"model": ErrorBody, "description": "Body too large"},
                         503: {"model": ErrorBody, "description": "Overloaded, or Temporal unreachable; nothing "
                                                                  "stored"}})
    async def retain(caller: Authorised, request: Request) -> RetainSummary:
        """Store memories (all or nothing, idempotent on id) and wake this wiki's compile; needs a write token.

        The body is read only after the token is checked, and refused before parsing when it is over the
        size limit, nests too deep or carries too many memories."""
        memories = parse_memories(_retain_memories(await request.body()))
        return await retain_for_agent(engine, caller.scope, memories, connect_once, settings)

    @api.post("/v1/conversations", response_model=ConversationSummary, status_code=202, tags=["write"],
              openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
                  "schema": {"$ref": "#/components/schemas/ConversationIn"}}}}},
              responses={403: {"model": ErrorBody, "description": "A read token"},
                         413: {"model": ErrorBody, "description": "Body too large"},
                         503: {"model": ErrorBody, "description": "Overloaded, or Temporal unreachable; nothing "
                                                                  "stored"}})
    async def conversation(caller: Authorised, request: Request) -> ConversationSummary:
        """Store a conversation's messages as turns (all or nothing; sent again, nothing changes) and wake
        this wiki's compile; needs a write token. Each message has a speaker (a name, or `user` /
        `assistant`), its text and its time; the user's name is `user` (needed once per wiki)."""
        return await retain_conversation_for_agent(engine, caller.scope, _conversation_body(await request.body()),
                                                   connect_once, settings)

    add_merge_routes(api, engine, _caller)

    def may_forget(caller: Caller) -> None:
        if not allows(caller.rights, "write"):
            raise StarletteHTTPException(403, f"this {caller.rights} token cannot forget (it needs write rights: "
                                              "`wiki token create --rights write`)")

    forget_responses: Responses = {**NOT_FOUND, 403: {"model": ErrorBody, "description": "A read token"},
                                   503: {"model": ErrorBody, "description": "Temporal unreachable; nothing queued"}}

    @api.delete("/v1/memories/{memory_id}", response_model=ForgetQueued, status_code=202, tags=["write"],
                responses=forget_responses)
    async def forget(caller: Authorised, memory_id: str) -> ForgetQueued:
        """Forget a memory: its text everywhere, the lines resting only on it, what is left empty; lines
        citing it and others are re-derived. Served by the wiki's compile between batches; needs a write
        token. A memory of another scope is not found."""
        may_forget(caller)
        result = await forget_for_agent(engine, caller.scope, [memory_id], connect_once, settings)
        assert isinstance(result, ForgetQueued)
        return result

    @api.get("/v1/memories/{memory_id}/forget-preview", response_model=BlastRadius, responses=NOT_FOUND,
             tags=["read"])
    async def forget_preview(caller: Authorised, memory_id: str) -> BlastRadius:
        """What forgetting the memory would touch: claims, sections, pages, aliases, mentions, rollups."""
        result = await forget_for_agent(engine, caller.scope, [memory_id], connect_once, settings, dry_run=True)
        assert isinstance(result, BlastRadius)
        return result

    @api.post("/v1/memories/forget", response_model=ForgetQueued | BlastRadius, status_code=202, tags=["write"],
              responses=forget_responses)
    async def forget_many(caller: Authorised, body: ForgetRequest) -> ForgetQueued | BlastRadius:
        """Forget several memories in one pass (a conversation, everything about one person), or with
        `dry_run` list what that would touch; forgetting needs a write token."""
        if not body.dry_run:
            may_forget(caller)
        return await forget_for_agent(engine, caller.scope, body.memory_ids, connect_once, settings,
                                      dry_run=body.dry_run)

    def openapi() -> dict[str, Any]:
        if api.openapi_schema is None:
            schema = get_openapi(title=api.title, version=api.version, description=api.description,
                                 routes=api.routes, tags=api.openapi_tags)
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            body = RetainRequest.model_json_schema(ref_template="#/components/schemas/{model}")
            components.update(body.pop("$defs", {}))
            components["RetainRequest"] = body
            talk = ConversationIn.model_json_schema(ref_template="#/components/schemas/{model}")
            components.update(talk.pop("$defs", {}))
            components["ConversationIn"] = talk
            api.openapi_schema = schema
        return api.openapi_schema

    api.openapi = openapi  # type: ignore[method-assign]
    add_web_views(api, engine, settings, counters, connect_once)
    return api


def app_from_settings() -> FastAPI:
    """The API of one `wiki serve --workers N` process, built in that process from the environment: its
    own engine (pool sized by the settings) and its own Temporal connection, made on the first retain."""
    from app.cache_eviction import forgets_followed
    from runtime.database import create_engine
    from runtime.settings import get_settings
    from runtime.temporal_client import connect

    settings = get_settings()
    engine = create_engine(settings=settings, pre_ping=False)
    api = create_app(engine, lambda: connect(settings), settings)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with forgets_followed(engine):  # this process's caches follow every forget
            yield
        await engine.dispose()

    api.router.lifespan_context = lifespan
    return api
