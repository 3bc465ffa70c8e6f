"""The agent-facing servers and their credentials: `wiki mcp`, `wiki serve`, `wiki token create/list/revoke`."""

from __future__ import annotations

import signal
import sys
from datetime import UTC, datetime
from typing import Annotated
from uuid import UUID

import typer
from sqlalchemy.ext.asyncio import AsyncEngine

from app import tokens
from app.cache_eviction import forgets_followed
from app.reads import ReadScope
from cli.common import (
    EXIT_USAGE,
    CliError,
    JsonOption,
    OwnerOption,
    TenantOption,
    change,
    database,
    handled,
    reading,
    run,
    scope,
    temporal,
)
from cli.output import out, print_json, table
from domain.memory import validate_scope_part
from domain.tokens import DEFAULT_RIGHTS, RIGHTS, parse_expiry
from runtime.settings import Settings, get_settings

token_app = typer.Typer(help="Bearer tokens for `wiki serve` and `wiki mcp --http`, one scope each.",
                        no_args_is_help=True)


def parse_listen(value: str, option: str) -> tuple[str, int]:
    """HOST:PORT (an IPv6 host in brackets: [::1]:8765)."""
    host, colon, port = value.rpartition(":")
    host = host.strip("[]")
    if not colon or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise CliError(f"{option} must be HOST:PORT with a port from 1 to 65535 (got {value!r})", EXIT_USAGE)
    return host, int(port)


async def _schema_ready(engine: AsyncEngine) -> None:
    if not await tokens.token_table_ready(engine):
        raise CliError("the database has no api_tokens table yet: run `wiki migrate` first")


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(0)


async def _uvicorn(app, host: str, port: int) -> None:
    """Serve until SIGINT/SIGTERM, then shut down gracefully and exit 0.

    uvicorn finishes open requests on the signal, then raises the signal again for the handler it
    found; that handler is `_stop`, so the command ends with exit 0 instead of dying by the signal.
    """
    import uvicorn

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False, lifespan="on")
    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        await uvicorn.Server(config).serve()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


async def _mcp(settings: Settings, fixed: ReadScope | None, listen: tuple[str, int] | None) -> None:
    from servers.mcp_server import TokenScopes, build_server, http_app, quiet_sdk_logs, scope_from_token

    quiet_sdk_logs()
    async with database() as engine, forgets_followed(engine):
        await _schema_ready(engine)
        connect = lambda: temporal(settings)  # noqa: E731 - connected on the first retain only
        if listen is None:
            assert fixed is not None
            server = build_server(engine, lambda: fixed, connect, settings)
            await server.run_stdio_async()
            return
        host, port = listen
        url = f"http://{f'[{host}]' if ':' in host else host}:{port}"
        server = build_server(engine, scope_from_token, connect, settings, token_verifier=TokenScopes(engine),
                              public_url=url)
        print(f"MCP over streamable HTTP at {url}/mcp (Authorization: Bearer <token>)", file=sys.stderr, flush=True)
        await _uvicorn(http_app(server, host, engine, settings), host, port)


@handled
def mcp_command(
    tenant: Annotated[str | None, typer.Option(help="Tenant id (stdio: the scope served).")] = None,
    owner: Annotated[str | None, typer.Option(help="Owner id (stdio: the scope served).")] = None,
    http: Annotated[str | None, typer.Option("--http", metavar="HOST:PORT",
                                             help="Serve streamable HTTP at /mcp instead of stdio; each request's "
                                                  "bearer token decides its scope.")] = None,
) -> None:
    """An MCP server over the wiki (tools: search, get_page, get_sources, related, changes_since, retain)."""
    settings = get_settings()
    if http is not None:
        if tenant is not None or owner is not None:
            raise CliError("over HTTP the scope comes from each request's bearer token: drop --tenant/--owner "
                           "(`wiki token create` makes a token)", EXIT_USAGE)
        run(_mcp(settings, None, parse_listen(http, "--http")))
        return
    if tenant is None or owner is None:
        raise CliError("--tenant and --owner are required over stdio (or pass --http HOST:PORT)", EXIT_USAGE)
    run(_mcp(settings, ReadScope.of(tenant, owner), None))


async def _serve(settings: Settings, host: str, port: int) -> None:
    from servers.http_api import create_app

    async with database(pre_ping=False) as engine:
        await _schema_ready(engine)
        app = create_app(engine, lambda: temporal(settings), settings)
        print(f"wiki API at http://{host}:{port}/v1 (docs: http://{host}:{port}/docs; web view: "
              f"http://{host}:{port}/)", file=sys.stderr, flush=True)
        async with forgets_followed(engine):
            await _uvicorn(app, host, port)


def serve_on(settings: Settings, host: str, port: int) -> None:
    """`wiki serve` in this process (the API and its web view), until a signal stops it."""
    run(_serve(settings, host, port))


async def _database_ready() -> str:
    async with database() as engine:
        await _schema_ready(engine)
        return engine.url.render_as_string(hide_password=False)


def _serve_in_processes(host: str, port: int, workers: int) -> None:
    """`workers` server processes sharing the port, each with its own pool (WIKI_DB_POOL_SIZE each) and
    its own admission and rate limits; uvicorn restarts one that dies and stops them all on a signal."""
    import os

    import uvicorn

    # The processes read the database the parent checked (the embedded one is started by then).
    os.environ["DATABASE_URL"] = run(_database_ready())
    get_settings.cache_clear()
    print(f"wiki API at http://{host}:{port}/v1 in {workers} processes (docs: http://{host}:{port}/docs)",
          file=sys.stderr, flush=True)
    uvicorn.run("servers.http_api:app_from_settings", factory=True, host=host, port=port, workers=workers,
                log_level="warning", access_log=False)


@handled
def serve_command(
    host: Annotated[str, typer.Option(help="Address to listen on (loopback unless you open it up).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
    workers: Annotated[int, typer.Option(help="Server processes (each with its own connection pool).",
                                         min=1, max=64)] = 1,
) -> None:
    """The HTTP API over the wiki (search, pages, sources, related, changes, retain) and the web view at /,
    per-scope tokens."""
    settings = get_settings()
    host, port = parse_listen(f"{host}:{port}", "--host/--port")
    if workers > 1:
        _serve_in_processes(host, port, workers)
        return
    run(_serve(settings, host, port))


@token_app.command("create")
@handled
def token_create(tenant: TenantOption, owner: OwnerOption,
                 name: Annotated[str, typer.Option(help="A label to recognise the token by.")] = "",
                 rights: Annotated[str, typer.Option(help="read: search and read pages; write: also retain "
                                                          "memories; operator: also the server's counters.")]
                 = DEFAULT_RIGHTS,
                 expires: Annotated[str | None, typer.Option(help="When it stops working: a duration (90m, 12h, "
                                                                 "30d, 2w) or a date (2027-01-31).")] = None,
                 json_output: JsonOption = False) -> None:
    """Create a token for one scope and print it once (only its hash is stored)."""
    get_settings()
    tenant, owner = scope(tenant, owner)
    if len(name) > 200:
        raise CliError("--name must be at most 200 characters", EXIT_USAGE)
    if rights not in RIGHTS:
        raise CliError(f"--rights must be one of {', '.join(RIGHTS)} (got {rights!r})", EXIT_USAGE)
    try:
        expires_at = parse_expiry(expires, datetime.now(UTC)) if expires is not None else None
    except ValueError as error:
        raise CliError(str(error), EXIT_USAGE) from None
    issued = run(change(tokens.issue_token, tenant, owner, name, rights, expires_at))
    row = issued.row
    if json_output:
        print_json({**row.model_dump(mode="json"), "token": issued.token})
        return
    until = f", until {row.expires_at:%Y-%m-%d %H:%M} UTC" if row.expires_at else ""
    out.print(f"{row.rights} token {row.id} for {tenant}/{owner}{until} (shown once; only its hash is stored):",
              soft_wrap=True)
    sys.stdout.write(issued.token + "\n")


@token_app.command("list")
@handled
def token_list(tenant: Annotated[str | None, typer.Option(help="Only this tenant's tokens.")] = None,
               owner: Annotated[str | None, typer.Option(help="Only this owner's tokens.")] = None,
               json_output: JsonOption = False) -> None:
    """The tokens (never the secret: its first characters only), live and revoked."""
    get_settings()
    tenant = validate_scope_part("tenant", tenant) if tenant is not None else None
    owner = validate_scope_part("owner", owner) if owner is not None else None
    rows = run(reading(lambda conn: tokens.list_tokens(conn, tenant, owner)))
    if json_output:
        print_json([row.model_dump(mode="json") for row in rows])
    elif rows:
        # Ids shortened to what tells them apart here: `wiki token revoke` takes that start, or the token's.
        out.print(table("API tokens", ["id", "scope", "name", "rights", "starts with", "created", "expires",
                                       "revoked"],
                        [(f"{str(r.id)[:8]}…", f"{r.tenant}/{r.owner}", r.name, r.rights, f"{r.prefix}…",
                          f"{r.created_at:%Y-%m-%d %H:%M}", f"{r.expires_at:%Y-%m-%d %H:%M}" if r.expires_at else "",
                          f"{r.revoked_at:%Y-%m-%d %H:%M}" if r.revoked_at else "") for r in rows]))
    else:
        out.print("no token")


MIN_REFERENCE_CHARS = 4


def _token_by_start(reference: str) -> UUID:
    """The one token whose id, or shown start, begins with `reference`."""
    if len(reference) < MIN_REFERENCE_CHARS:
        raise CliError(f"give a token's id or at least its first {MIN_REFERENCE_CHARS} characters as "
                       f"`wiki token list` shows them (got {reference!r})", EXIT_USAGE)
    rows = run(reading(lambda conn: tokens.tokens_matching(conn, reference)))
    if not rows:
        raise CliError(f"no token starts with {reference!r} (`wiki token list` shows them)")
    if len(rows) > 1:
        raise CliError(f"{reference!r} starts more than one token ({', '.join(str(r.id)[:8] for r in rows)}…): "
                       "give more characters")
    return rows[0].id


@token_app.command("revoke")
@handled
def token_revoke(token_id: Annotated[str, typer.Argument(
        metavar="TOKEN", help="The token's id, or its start as `wiki token list` shows it (id or token).")]) -> None:
    """Revoke a token: running servers refuse it within WIKI_HTTP_TOKEN_CACHE_SECONDS (5 s)."""
    settings = get_settings()
    reference = token_id.strip().rstrip("…").strip()
    try:
        parsed = UUID(reference)
    except ValueError:
        parsed = _token_by_start(reference)
    row = run(change(tokens.revoke_token, parsed))
    if row is None:
        raise CliError(f"no token {parsed}")
    wait = settings.http_token_cache_seconds
    refused = f"running servers refuse it within {wait:g} s" if wait > 0 else "servers refuse it from now on"
    out.print(f"revoked token {row.id} of {row.tenant}/{row.owner}; {refused} (WIKI_HTTP_TOKEN_CACHE_SECONDS)",
              soft_wrap=True)
