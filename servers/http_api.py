"""`wiki serve`: the agent read surface over HTTP (FastAPI), OpenAPI schema at /openapi.json.

Every /v1 route needs `Authorization: Bearer <token>`; the token alone decides the scope, so no
request can name, read or write another scope. Errors are JSON `{"error": "..."}`: 401 without a
live token, 404 for what is not in the token's scope (worded as for what exists nowhere), 413 for
a body over the limit, 422 for bad input, 503 when a retain cannot reach Temporal.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal, NamedTuple

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from app import reads, tokens
from app.reads import BadInput, NotFound, ReadScope
from app.retain import (
    CompileUnavailable,
    RetainSummary,
    TemporalConnector,
    retain_for_agent,
)
from domain.memory import MemoryIn, RetainError, ScopeError
from runtime.settings import Settings

# A retain of MAX_RETAIN_MEMORIES memories at the per-memory limits (32 KiB content, 64 KiB
# metadata) is about 10 MiB; anything larger is refused before it is read.
MAX_BODY_BYTES = 10 * 1024 * 1024

PageType = Literal["entity", "topic", "decision"]


class ErrorBody(BaseModel):
    error: str


class RetainRequest(BaseModel):
    memories: list[MemoryIn] = Field(description="Memories to store (at most 100): content, optional id, "
                                                 "metadata and occurred_at, as `wiki retain` reads them.")


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


class _BodyLimit:
    """Refuses a request body over MAX_BODY_BYTES before reading it.

    A body must declare its length (HTTP/1.1 framing then holds the client to it); a chunked body
    of unknown length is refused with 411 rather than read without a bound.
    """

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in ("POST", "PUT", "PATCH"):
            declared = dict(scope.get("headers") or []).get(b"content-length")
            if declared is None or not declared.isdigit():
                await _error(411, "the request body must declare its Content-Length")(scope, receive, send)
                return
            if int(declared) > self.limit:
                await _error(413, f"request body over {self.limit} bytes; send fewer memories per call")(
                    scope, receive, send)
                return
        await self.app(scope, receive, send)


class Authorised(NamedTuple):
    scope: ReadScope
    conn: AsyncConnection  # the request's connection: the token check and the read share it


async def authorised(request: Request) -> AsyncIterator[Authorised]:
    """The scope of the request's bearer token, and a connection to read it on; 401 without a live token."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    challenge = {"WWW-Authenticate": "Bearer"}
    if scheme.lower() != "bearer" or not token.strip():
        raise StarletteHTTPException(401, "missing bearer token (Authorization: Bearer <token>)", challenge)
    async with request.app.state.engine.connect() as conn:
        found = await tokens.scope_of_token(conn, token.strip())
        if found is None:
            raise StarletteHTTPException(401, "unknown or revoked token", challenge)
        yield Authorised(ReadScope(tenant=found.tenant, owner=found.owner), conn)


Caller = Annotated[Authorised, Depends(authorised)]
Limit = Annotated[int | None, Query(description="How many results at most (bounds in the error if exceeded).")]
MinConfidence = Annotated[float | None, Query(description="Only claims at least this sure, from 0 to 1 (0.7: one memory says it, 0.8: two, ...).")]

# FastAPI's `responses`: status code -> its OpenAPI description.
Responses = dict[int | str, dict[str, Any]]
UNAUTHORIZED: Responses = {401: {"model": ErrorBody, "description": "No bearer token, or not a live one"}}
NOT_FOUND: Responses = {404: {"model": ErrorBody, "description": "Not in this token's scope"}}
BAD_INPUT: Responses = {422: {"model": ErrorBody, "description": "Bad input"}}


def create_app(engine: AsyncEngine, connect_temporal: TemporalConnector, settings: Settings) -> FastAPI:
    """The API over `engine`; `connect_temporal` is called (once, then cached) by the first retain."""

    api = FastAPI(title="wiki-compiler API", version="1",
                  description="Read an agent's compiled wiki (search, pages with citations, related pages, "
                              "what changed) and retain new memories. Authenticate with a per-scope bearer "
                              "token from `wiki token create`.",
                  responses={**UNAUTHORIZED, **BAD_INPUT})
    api.add_middleware(_BodyLimit)
    api.state.engine = engine
    temporal_client: list[Any] = []

    async def connect_once():
        if not temporal_client:
            temporal_client.append(await connect_temporal())
        return temporal_client[0]

    @api.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, error: StarletteHTTPException) -> JSONResponse:
        return _error(error.status_code, str(error.detail), getattr(error, "headers", None))

    @api.exception_handler(RequestValidationError)
    async def validation_error(_: Request, error: RequestValidationError) -> JSONResponse:
        problems = []
        for item in error.errors()[:3]:
            where = ".".join(str(part) for part in item["loc"] if part != "body") or "request"
            problems.append(f"{where}: {item['msg']}")
        return _error(422, "; ".join(problems) or "invalid request")

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
        return _error(503, str(error))

    @api.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @api.get("/v1/search", response_model=reads.SearchResult, tags=["read"])
    async def search(caller: Caller, q: Annotated[str, Query(description="Words; a word may be a prefix.")],
                     limit: Limit = None) -> reads.SearchResult:
        """Full-text search of the wiki's pages (plain and prefix matches, alias bonus), best first."""
        return await reads.search(caller.conn, caller.scope, q, limit)

    @api.get("/v1/pages", response_model=reads.PageDocument, responses=NOT_FOUND, tags=["read"])
    async def page_by_name(caller: Caller,
                           name: Annotated[str, Query(description="TYPE/SLUG, slug, title or alias.")],
                           offset: int | None = None, max_chars: int | None = None,
                           min_confidence: MinConfidence = None) -> reads.PageDocument:
        """The page a name designates (aliases, case and accents resolved), as markdown, with each
        section's claims."""
        return await reads.get_page(caller.conn, caller.scope, name, offset, max_chars, min_confidence)

    @api.get("/v1/pages/{page_type}/{slug}", response_model=reads.PageDocument, responses=NOT_FOUND, tags=["read"])
    async def page(caller: Caller, page_type: PageType, slug: str, offset: int | None = None,
                   max_chars: int | None = None, min_confidence: MinConfidence = None) -> reads.PageDocument:
        """The page as markdown with section ids and each section's claims; long pages come in windows
        (`offset`, `next_offset`)."""
        return await reads.get_page_by_key(caller.conn, caller.scope, page_type, slug, offset, max_chars,
                                           min_confidence)

    @api.get("/v1/pages/{page_type}/{slug}/sources", response_model=reads.SourcesResult, responses=NOT_FOUND,
             tags=["read"])
    async def sources(caller: Caller, page_type: PageType, slug: str, section: str | None = None,
                      limit: Limit = None) -> reads.SourcesResult:
        """The memories the page, or one section of it, cites: text and date, newest first."""
        return await reads.get_sources(caller.conn, caller.scope, f"{page_type}/{slug}", section, limit)

    @api.get("/v1/pages/{page_type}/{slug}/related", response_model=reads.RelatedResult, responses=NOT_FOUND,
             tags=["read"])
    async def related(caller: Caller, page_type: PageType, slug: str, limit: Limit = None,
                      direction: Literal["out", "in", "both"] = "both", max_hops: int | None = None,
                      query: str | None = None) -> reads.RelatedResult:
        """Pages around this one over links, ranked by graph influence, text relevance and recency."""
        return await reads.related(caller.conn, caller.scope, f"{page_type}/{slug}", limit, direction, max_hops, query)

    @api.get("/v1/changes", response_model=reads.ChangesResult, responses=NOT_FOUND, tags=["read"])
    async def changes(caller: Caller,
                      since: Annotated[str, Query(description="ISO-8601 time, or a compile run id.")],
                      limit: Limit = None, cursor: str | None = None) -> reads.ChangesResult:
        """Pages and sections created or changed after `since`, oldest first, paged by `next_cursor`."""
        return await reads.changes_since(caller.conn, caller.scope, since, limit, cursor)

    @api.post("/v1/memories", response_model=RetainSummary, status_code=202, tags=["write"],
              responses={413: {"model": ErrorBody, "description": "Body too large"},
                         503: {"model": ErrorBody, "description": "Temporal unreachable; nothing stored"}})
    async def retain(caller: Caller, body: RetainRequest) -> RetainSummary:
        """Store memories (all or nothing, idempotent on id) and wake this wiki's compile."""
        return await retain_for_agent(engine, caller.scope, body.memories, connect_once, settings)

    return api
