"""`wiki mcp`: the agent read surface as an MCP server (the official `mcp` SDK), over stdio or
streamable HTTP.

Ten tools with short descriptions, because every advertised tool costs the agent context. The
scope is never a tool argument: over stdio it is the one the server was started for; over HTTP it
is the one the bearer token was created for (`wiki token create`), checked on every request.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Callable
from importlib import metadata
from typing import Annotated, Any, Literal

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.applications import Starlette
from starlette.types import ASGIApp

from app import reads, tokens
from app import recall as recall_use
from app.context import context as standing_context
from app.conversations import ConversationSummary, retain_conversation_for_agent
from app.forget import BlastRadius, ForgetOutcome, forget_for_agent
from app.reads import BadInput, NotFound, ReadScope
from app.retain import (
    MAX_RETAIN_MEMORIES,
    CompileUnavailable,
    RetainSummary,
    TemporalConnector,
    retain_for_agent,
)
from app.search import search as search_pages
from domain.conversation import MAX_MESSAGES, MessageIn
from domain.memory import MAX_CONTENT_BYTES, MAX_METADATA_BYTES, MemoryIn, RetainError, ScopeError
from domain.related import MAX_MAX_HOPS, MAX_RELATED_LIMIT
from domain.search import MAX_SEARCH_LIMIT
from domain.tokens import allows
from runtime.settings import Settings
from servers.guard import BUSY_MESSAGE, CURRENT_CALLER, GuardRules, RequestGuard, ServerCounters

INSTRUCTIONS = (
    "This server reads one agent's compiled wiki: pages (entity, topic, decision) made of sections, each "
    "citing the memories it was written from. Ask a question with `recall` (the claims that answer it, "
    "within a token budget); `context` gives the most important claims for a system prompt. "
    "Find pages with `search`, read one with `get_page` (by "
    "TYPE/SLUG, title or alias), see its evidence with `get_sources`, explore around it with `related`, "
    "catch up with `changes_since`, add memories with `retain` (a conversation's messages with "
    "`retain_conversation`: each kept as a turn with its speaker), and forget them with `forget` (a user's "
    "\"forget that\": `forget` with dry_run first shows what it would touch)."
)
BUDGET_HELP = (f"Budget for the whole result, at 4 characters a token ({recall_use.MIN_MAX_TOKENS}-"
               f"{recall_use.MAX_MAX_TOKENS}).")
VERBOSE_HELP = ("Also each answer's section, kind, status, confidence, validity, scores and retriever signals "
                "(they count in the budget).")
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)

ScopeOf = Callable[[], ReadScope]


class TokenScopes:
    """Bearer tokens of `wiki token create`, checked against the database on every request (once: the
    request guard's lookup of the same request is reused)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def verify_token(self, token: str) -> AccessToken | None:
        checked = CURRENT_CALLER.get()
        found = checked[1] if checked is not None and checked[0] == token else None
        if found is None:
            found = await tokens.scope_of_token(self.engine, token)
        if found is None or found.expired:
            return None
        return AccessToken(token=token, client_id=str(found.token_id), scopes=[found.rights],
                           subject=str(found.token_id),
                           claims={"tenant": found.tenant, "owner": found.owner, "rights": found.rights})


def scope_from_token() -> ReadScope:
    token = get_access_token()
    if token is None or not token.claims:
        # The transport refuses unauthenticated requests before any tool runs; this is a second lock.
        raise ToolError("not authenticated")
    return ReadScope(tenant=token.claims["tenant"], owner=token.claims["owner"])


def may_write(verb: str = "retain") -> None:
    """Over HTTP, a retain needs a write (or operator) token; over stdio the operator started the server
    for one scope and it may write."""
    token = get_access_token()
    if token is not None and not allows(str((token.claims or {}).get("rights", "")), "write"):
        raise ToolError(f"this read token cannot {verb}; create one with `wiki token create --rights write`")


def _refused(error: Exception) -> ToolError:
    return ToolError(str(error))


def _server_version() -> str:
    try:
        return metadata.version("wiki-compiler")
    except metadata.PackageNotFoundError:
        return "0.0.0"


def _field_name(location: tuple[Any, ...]) -> str:
    name = ""
    for part in location:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    return name


def argument_sentence(error: ValidationError, schema: dict[str, Any] | None) -> str:
    """The first thing wrong with a tool's arguments, in one sentence as the CLI and HTTP say it
    ("limit must be between 1 and 50 (got 51)"): no framework dump, no links."""
    first = error.errors(include_url=False)[0]
    field = _field_name(tuple(first["loc"])) or "the arguments"
    got = first.get("input")
    bounds = ((schema or {}).get("properties") or {}).get(str(first["loc"][0]) if first["loc"] else "", {})
    kind = first["type"]
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than") \
            and "minimum" in bounds and "maximum" in bounds:
        return f"{field} must be between {bounds['minimum']} and {bounds['maximum']} (got {got!r})"
    if kind == "missing":
        return f"{field} is required"
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return f"{field} must be a whole number (got {got!r})"
    if kind == "literal_error":
        return f"{field} must be {first['ctx']['expected']} (got {got!r})"
    if kind in ("too_short", "too_long"):
        limit = first["ctx"].get("min_length" if kind == "too_short" else "max_length")
        return f"{field} must have {'at least' if kind == 'too_short' else 'at most'} {limit} item(s)"
    message = str(first["msg"]).removeprefix("Value error, ")
    message = message[:1].lower() + message[1:]
    if first["loc"] and message.startswith(f"{first['loc'][-1]} "):
        # "content must not be empty" names its field already: say where it is, once.
        parent = _field_name(tuple(first["loc"][:-1]))
        return f"{parent}: {message}" if parent else message
    return f"{field}: {message}"


class WikiServer(MCPServer):
    """The SDK's server, with argument errors said in one sentence instead of pydantic's report."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            result = await super().call_tool(name, arguments, context)
        except ToolError as error:
            cause = error.__cause__
            if isinstance(cause, ValidationError):
                tool = self._tool_manager.get_tool(name)
                raise ToolError(argument_sentence(cause, tool.parameters if tool else None)) from None
            if isinstance(cause, ToolError):
                raise ToolError(str(cause)) from None  # without the SDK's "Error executing tool" prefix
            raise
        if isinstance(result, CallToolResult) and result.structured_content is not None:
            # Clients that read only text get the same data, as compact JSON rather than indented:
            # the result is not paid for twice at full size in the agent's context.
            compact = json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":"))
            result = result.model_copy(update={"content": [TextContent(type="text", text=compact)]})
        return result


def _described(fn: Callable) -> str:
    # The docstring as one paragraph: the indentation of the source never reaches the agent.
    return " ".join((inspect.getdoc(fn) or "").split())


MEMORY_FIELDS = (
    f"Memories to store, 1-{MAX_RETAIN_MEMORIES}: each {{content (required, at most "
    f"{MAX_CONTENT_BYTES // 1024} KiB of UTF-8), id (optional UUID: the same id updates it), occurred_at "
    "(optional ISO-8601 time), metadata (optional object, at most "
    f"{MAX_METADATA_BYTES // 1024} KiB)}}. The compile reads metadata.entities "
    "([{name, type: entity|topic|decision, kind, aliases}]: what the memory is about), metadata.place "
    "({name, city, address}) and metadata.journal ({id, title}); without entities it reads the names "
    "in the text."
)


def build_server(engine: AsyncEngine, scope_of: ScopeOf, connect_temporal: TemporalConnector, settings: Settings,
                 *, token_verifier: TokenScopes | None = None, public_url: str | None = None) -> MCPServer:
    """The ten tools over `engine`, each in the scope `scope_of()` returns for the current request."""
    auth = None
    if token_verifier is not None:
        url = public_url or "http://127.0.0.1"
        # The server only checks tokens it issued itself; the issuer URL is required by the SDK's
        # settings and names this server.
        auth = AuthSettings(issuer_url=url, resource_server_url=url, validate_token_resource=False)
    server = WikiServer("wiki", instructions=INSTRUCTIONS, token_verifier=token_verifier, auth=auth,
                        log_level="WARNING", version=_server_version())
    temporal_client: list = []

    async def connect_once():
        if not temporal_client:
            temporal_client.append(await connect_temporal())
        return temporal_client[0]

    async def guarded(call):
        try:
            return await call
        except (BadInput, NotFound, CompileUnavailable, ScopeError, RetainError) as error:
            raise _refused(error) from None
        except PoolTimeout:
            raise ToolError(BUSY_MESSAGE.replace(" after the time in Retry-After", " in a second")) from None
        except DBAPIError as error:
            # Parameters are hidden by the engine; the driver's message alone is logged.
            logging.getLogger(__name__).warning("database error: %s", error.orig)
            raise ToolError("the database could not answer this call; retry in a few seconds") from None

    def tool(annotations: ToolAnnotations):
        def register(fn):
            return server.tool(annotations=annotations, description=_described(fn))(fn)
        return register

    @tool(READ_ONLY)
    async def search(query: Annotated[str, Field(description=f"Words to find, at most {reads.MAX_QUERY_CHARS} "
                                                 "characters; a word may be a prefix (brisk finds brisket).")],
                     limit: Annotated[int, Field(ge=1, le=MAX_SEARCH_LIMIT, description="At most this many pages, "
                                                 f"best first (1-{MAX_SEARCH_LIMIT}).")]
                     = reads.DEFAULT_SEARCH_LIMIT,
                     ) -> reads.SearchResult:
        """Find the pages holding the answers to some words (recall's ranking by page, named pages
        first): type, slug, title, summary and score per page."""
        return await guarded(search_pages(engine, scope_of(), query, limit, recall_use.embedder_for(settings)))

    @tool(READ_ONLY)
    async def recall(question: Annotated[str, Field(description="The question, in plain words (at most "
                                                    f"{recall_use.MAX_QUESTION_CHARS} characters).")],
                     max_tokens: Annotated[int, Field(ge=recall_use.MIN_MAX_TOKENS, le=recall_use.MAX_MAX_TOKENS,
                                                      description=BUDGET_HELP)]
                     = recall_use.DEFAULT_MAX_TOKENS,
                     as_of: Annotated[str | None, Field(description="Only what was known by this ISO-8601 time.")]
                     = None,
                     min_confidence: Annotated[float | None, Field(ge=0, le=1, description="Only claims at least "
                                                                   "this sure.")] = None,
                     verbose: Annotated[bool, Field(description=VERBOSE_HELP)] = False,
                     ) -> CallToolResult:
        """Answer a question: the claims and memories that answer it best (text, page, date, memory ids),
        in at most max_tokens × 4 characters; says how many did not fit."""
        found = await guarded(recall_use.recall(engine, scope_of(), question, max_tokens, as_of, min_confidence,
                                                embedder=recall_use.embedder_for(settings), verbose=verbose))
        return CallToolResult(content=[TextContent(type="text", text=found.body)])

    @tool(READ_ONLY)
    async def context(max_tokens: Annotated[int, Field(ge=recall_use.MIN_MAX_TOKENS, le=recall_use.MAX_MAX_TOKENS,
                                                       description=BUDGET_HELP)]
                      = recall_use.DEFAULT_MAX_TOKENS,
                      min_confidence: Annotated[float | None, Field(ge=0, le=1, description="Only claims at "
                                                                    "least this sure.")] = None,
                      verbose: Annotated[bool, Field(description=VERBOSE_HELP)] = False,
                      ) -> CallToolResult:
        """The wiki's most important current claims (sure, corroborated, recent, on hub pages), for a
        system prompt, in at most max_tokens × 4 characters."""
        found = await guarded(standing_context(engine, scope_of(), max_tokens, min_confidence, verbose))
        return CallToolResult(content=[TextContent(type="text", text=found.body)])

    @tool(READ_ONLY)
    async def get_page(name: Annotated[str, Field(description="The page: TYPE/SLUG (entity/franklin-barbecue), "
                                                  "slug, title or alias.")],
                       offset: Annotated[int, Field(ge=0, description="Where to go on: next_offset of the "
                                                    "previous call; 0 for the start.")] = 0,
                       max_chars: Annotated[int, Field(ge=200, le=reads.MAX_PAGE_CHARS, description="At most this "
                                                       f"many characters of markdown (200-{reads.MAX_PAGE_CHARS}).")]
                       = reads.DEFAULT_PAGE_CHARS,
                       min_confidence: Annotated[float | None, Field(ge=0, le=1, description=(
                           "Only claims at least this sure (0.7: one memory says it, 0.8: two, ...)."))] = None,
                       as_of: Annotated[str | None, Field(max_length=60, description=(
                           "A date (2026-02-15) or ISO date-time: the page as its memories up to then "
                           "supported it."))] = None,
                       history: Annotated[bool, Field(description=(
                           "Also the facts since replaced, each with the day it stopped holding."))] = False,
                       ) -> reads.PageDocument:
        """Read a page as markdown (section ids {#id}), each line with sources and confidence, facts as
        they hold now (or as_of a date). Long pages: call again with offset=next_offset."""
        return await guarded(reads.get_page(engine, scope_of(), name, offset, max_chars, min_confidence, as_of,
                                            history))

    @tool(READ_ONLY)
    async def get_sources(page: Annotated[str, Field(description="The page, named as for get_page.")],
                          section: Annotated[str | None, Field(description="A section id (the {#id} of its "
                                                               "heading); every section when omitted.")] = None,
                          limit: Annotated[int, Field(ge=1, le=reads.MAX_SOURCES_LIMIT, description="At most this "
                                                      f"many memories, newest first (1-{reads.MAX_SOURCES_LIMIT}).")]
                          = reads.DEFAULT_SOURCES_LIMIT,
                          ) -> reads.SourcesResult:
        """The memories a page or one of its sections cites (the evidence), with text and date."""
        return await guarded(reads.get_sources(engine, scope_of(), page, section, limit))

    @tool(READ_ONLY)
    async def related(page: Annotated[str, Field(description="The page, named as for get_page.")],
                      limit: Annotated[int, Field(ge=1, le=MAX_RELATED_LIMIT, description="At most this many "
                                                  f"pages, best first (1-{MAX_RELATED_LIMIT}).")] = 10,
                      direction: Annotated[Literal["out", "in", "both"], Field(
                          description="Which links to follow: out (pages this one links to), in (pages "
                                      "linking to it) or both.")] = "both",
                      max_hops: Annotated[int, Field(ge=1, le=MAX_MAX_HOPS, description="How many links away "
                                                     f"to look (1-{MAX_MAX_HOPS}).")] = 3,
                      query: Annotated[str | None, Field(description="Words to favour; default the page's own.")]
                      = None) -> reads.RelatedResult:
        """Pages linked around a page (out: it links to; in: link to it), ranked by link influence,
        text relevance and recency."""
        return await guarded(reads.related(engine, scope_of(), page, limit, direction, max_hops, query))

    @tool(READ_ONLY)
    async def changes_since(since: Annotated[str, Field(description="An ISO-8601 time (2026-11-01T00:00:00Z), or "
                                                        "a compile run id.")],
                            limit: Annotated[int, Field(ge=1, le=reads.MAX_CHANGES_LIMIT, description="At most "
                                                        f"this many pages (1-{reads.MAX_CHANGES_LIMIT}).")]
                            = reads.DEFAULT_CHANGES_LIMIT,
                            cursor: Annotated[str | None, Field(description="next_cursor of the previous call.")]
                            = None) -> reads.ChangesResult:
        """Pages and sections created or changed after a time, with the memories newly cited."""
        return await guarded(reads.changes_since(engine, scope_of(), since, limit, cursor))

    @tool(ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                          open_world_hint=False))
    async def retain(memories: Annotated[list[MemoryIn], Field(min_length=1, max_length=MAX_RETAIN_MEMORIES,
                                                               description=MEMORY_FIELDS)],
                     ) -> RetainSummary:
        """Store new memories (idempotent on id) and wake the wiki's compile, which folds them into pages."""
        may_write()
        return await guarded(retain_for_agent(engine, scope_of(), memories, connect_once, settings))

    @tool(ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                          open_world_hint=False))
    async def retain_conversation(
        id: Annotated[str, Field(description="The conversation's id (1-128 letters, digits and _ . : @ -); sending "
                                             "it again with more messages stores only the new ones.")],
        messages: Annotated[list[MessageIn], Field(min_length=1, max_length=MAX_MESSAGES, description=(
            "The messages in order: speaker (a person's name, or `user` / `assistant`), text, time (ISO 8601; "
            "by default the previous message's) and optionally position (from 0)."))],
        user: Annotated[str | None, Field(description="The user's name: needed when a speaker is `user` and the "
                                                      "wiki does not know it yet.")] = None,
        assistant: Annotated[str | None, Field(description="The assistant's name (default Assistant).")] = None,
    ) -> ConversationSummary:
        """Store a conversation's messages as turns (all or nothing, idempotent per conversation and
        position) and wake the wiki's compile: first-person words are their speaker's, the user has one page."""
        may_write()
        raw = {"id": id, "messages": [m.model_dump(exclude_none=True) for m in messages], "user": user,
               "assistant": assistant}
        return await guarded(retain_conversation_for_agent(engine, scope_of(), raw, connect_once, settings))

    @tool(ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                          open_world_hint=False))
    async def forget(memory_ids: Annotated[list[str], Field(min_length=1, max_length=1000, description=(
                         "The memories to forget (their ids, as get_sources shows them)."))],
                     dry_run: Annotated[bool, Field(description="Only list what forgetting them would touch "
                                                    "(claims, sections, pages, aliases, mentions, rollups).")]
                     = False,
                     ) -> ForgetOutcome:
        """Forget memories: their text everywhere, the lines resting only on them and pages left empty;
        lines citing them and others are re-derived. The wiki's compile does it between batches."""
        if not dry_run:
            may_write("forget")
        result = await guarded(forget_for_agent(engine, scope_of(), memory_ids, connect_once, settings,
                                                dry_run=dry_run))
        if isinstance(result, BlastRadius):
            return ForgetOutcome(blast_radius=result)
        return ForgetOutcome(queued=result)

    return server


def http_app(server: MCPServer, host: str, engine: AsyncEngine, settings: Settings,
             counters: ServerCounters | None = None) -> ASGIApp:
    """The streamable HTTP app at /mcp (DNS-rebinding protection on for a loopback host), behind the
    request guard the HTTP API has (token before body, size, load shedding, rate)."""
    app: Starlette = server.streamable_http_app(host=host, stateless_http=True, json_response=True)
    return RequestGuard(app, engine=engine, settings=settings, counters=counters or ServerCounters(),
                        rules=GuardRules("/mcp"))


def quiet_sdk_logs() -> None:
    # Over stdio, stdout is the protocol; the SDK logs to stderr, and only warnings matter there.
    for name in ("mcp", "mcp.server", "uvicorn.access"):
        logging.getLogger(name).setLevel(logging.WARNING)
