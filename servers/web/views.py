"""The web view of `wiki serve`: server-rendered HTML pages for people, beside the API for agents.

Views: `/` (search box, counts, recent changes, hubs), `/search`, `/wiki/<type>/<slug>` (a page with
its claims, their citations, backlinks and related pages), `/memories/<id>` (a memory and everything
citing it), `/graph` (the scope's links), `/runs` (the compile ledger, each run linked to its
workflow in the Temporal UI), `/sign-in` and `/sign-out`. Templates are Jinja2 with autoescape on;
markdown goes through `servers/web/render.py`. Every response carries a Content-Security-Policy
with no script source at all: the views use none (citations and the history open with <details>).

The scope is the signed-in token's (servers/web/session.py), looked up like the API's bearer token
(a lookup trusted for WIKI_HTTP_TOKEN_CACHE_SECONDS, as the API's guard does), with the same admission
and per-token rate as the API's guard grants.

The home, the graph and each page are read once per scope revision and kept (`app/view_cache.py`):
a view served again costs one revision read and the template; any committed write to the scope
moves its revision, so the next view reads afresh.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app import reads, web_views
from app.reads import BadInput, NotFound, ReadScope
from app.recall import embedder_for
from app.retain import CompileUnavailable, TemporalConnector
from app.search import search as search_pages
from app.tokens import scope_of_token
from app.view_cache import ScopeViewCache
from domain.claims import STATUS_MEANINGS, status_meanings
from domain.tokens import allows
from runtime.settings import Settings
from servers.guard import Admission, RateLimiter, Refusal, ServerCounters, TokenCache
from servers.web import render
from servers.web.session import (
    CSRF_FIELD,
    MAX_TOKEN_CHARS,
    SECURITY_HEADERS,
    SESSION_COOKIE,
    SIGNIN_COOKIE,
    FormRefused,
    check_same_origin,
    clear_cookie,
    csrf_for,
    new_signin_nonce,
    read_form,
    same_token,
    set_cookie,
)

_ASSETS = Path(__file__).with_name("assets")
# The only files served from it, by name (no path from a request ever reaches the file system).
ASSETS = {"web.css": "text/css", "favicon.svg": "image/svg+xml"}
_templates = Environment(loader=PackageLoader("servers.web", "templates"), autoescape=select_autoescape(["html"]),
                         undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
_templates.filters["markdown"] = render.markdown_html
_templates.filters["claim_html"] = lambda text: render.markdown_html(_without_bullet(text), inline=True)
_templates.globals["quote"] = lambda value: quote(str(value), safe="")
# Citations shown beside a claim; the rest open from "+N more".
_templates.globals["citations_shown"] = 5
# What each claim status means, one sentence each, as every surface says it (domain/claims.py).
_templates.globals["status_meanings"] = STATUS_MEANINGS
_templates.globals["statuses_of"] = lambda claims: list(status_meanings(claim.status for claim in claims))


def _without_bullet(text: str) -> str:
    stripped = text.lstrip()
    for bullet in ("- ", "* ", "+ "):
        if stripped.startswith(bullet):
            return stripped[2:]
    return stripped


class SignInNeeded(Exception):
    """No token on the request: a browser is sent to the sign-in page."""


class WebRefusal(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


@dataclass(frozen=True)
class Viewer:
    scope: ReadScope
    rights: str
    token: str
    conn: AsyncConnection
    by_cookie: bool

    @property
    def csrf(self) -> str:
        return csrf_for(self.token)


def page(request: Request, template: str, status: int = 200, viewer: Viewer | None = None,
         headers: dict[str, str] | None = None, **values: Any) -> HTMLResponse:
    html = _templates.get_template(template).render(viewer=viewer, path=request.url.path, **values)
    return HTMLResponse(html, status_code=status, headers={**SECURITY_HEADERS, **(headers or {})})


def page_not_found() -> Response:
    return Response("not found", status_code=404, media_type="text/plain", headers=SECURITY_HEADERS)


def _token_of(request: Request) -> tuple[str | None, bool]:
    header = request.headers.get("authorization")
    if header is not None:
        scheme, _, token = header.partition(" ")
        return (token.strip() or None) if scheme.lower() == "bearer" else None, False
    return request.cookies.get(SESSION_COOKIE) or None, True


def temporal_ui_link(settings: Settings, workflow_id: str, run_id: str) -> str | None:
    """The run's page in the embedded Temporal UI (None for an external cluster, whose UI is unknown)."""
    if settings.temporal_address:
        return None
    from runtime.devservices import DevTemporal

    base = DevTemporal.from_settings(settings).ui_url
    return (f"{base}/namespaces/{quote(settings.temporal_namespace, safe='')}/workflows/"
            f"{quote(workflow_id, safe='')}/{quote(run_id, safe='')}/history")


@dataclass(frozen=True)
class WebGate:
    """What a view passes before it reads: the API's admission lanes and per-token rate, kept apart."""

    engine: AsyncEngine
    admission: Admission
    limiter: RateLimiter
    views: ScopeViewCache
    tokens: TokenCache  # the API's rule: a lookup trusted for WIKI_HTTP_TOKEN_CACHE_SECONDS


async def _viewer(request: Request) -> AsyncIterator[Viewer]:
    """The signed-in caller, on a connection held for the view (one pool checkout per request)."""
    gate: WebGate = request.app.state.web_gate
    token, by_cookie = _token_of(request)
    if token is None:
        raise SignInNeeded()
    if len(token) > MAX_TOKEN_CHARS:
        raise WebRefusal(401, "unknown or revoked token")
    try:
        async with gate.admission.turn(False), gate.engine.connect() as conn:
            found = gate.tokens.get(token)
            if found is None:
                found = await scope_of_token(conn, token)
                if found is not None:
                    gate.tokens.put(token, found)
            if found is None or found.expired or (found.expires_at is not None
                                                  and found.expires_at <= datetime.now(UTC)):
                raise WebRefusal(401, "this token has expired; create a new one with `wiki token create`"
                                 if found is not None else "unknown or revoked token")
            wait = gate.limiter.wait_needed(found.token_id)
            if wait > 0:
                raise WebRefusal(429, "too many requests with this token; wait a moment",
                                 {"Retry-After": str(max(1, math.ceil(wait)))})
            yield Viewer(ReadScope(tenant=found.tenant, owner=found.owner), found.rights, token, conn, by_cookie)
    except Refusal as refusal:
        raise WebRefusal(refusal.status, refusal.message, refusal.headers) from None


Signed = Annotated[Viewer, Depends(_viewer)]


def add_web_views(api: FastAPI, engine: AsyncEngine, settings: Settings, counters: ServerCounters,
                  connect: TemporalConnector) -> None:
    """The web view's routes on the API's app (they share its process, pool and tokens)."""
    kept = ScopeViewCache()
    api.state.web_gate = WebGate(engine, Admission(settings, counters),
                                 RateLimiter(settings.http_rate_per_second, settings.http_rate_burst), kept,
                                 TokenCache(settings.http_token_cache_seconds))
    router = APIRouter(include_in_schema=False)

    async def shown(request: Request, who: Viewer, template: str,
                    read: Callable[[], Awaitable[Any]], **values: Any) -> HTMLResponse:
        try:
            found = await read()
        except NotFound as error:
            return page(request, "error.html", 404, who, title="Not found", message=str(error))
        except BadInput as error:
            return page(request, "error.html", 422, who, title="Bad request", message=str(error))
        return page(request, template, viewer=who, view=found, **values)

    def once_per_revision(who: Viewer, what: tuple, read: Callable[[], Awaitable[Any]]) -> Callable[[], Awaitable[Any]]:
        return lambda: kept.view(who.conn, who.scope.tenant, who.scope.owner, what, read)

    @router.get("/", response_class=HTMLResponse)
    async def home(request: Request, who: Signed) -> HTMLResponse:
        return await shown(request, who, "home.html", once_per_revision(
            who, ("home",), lambda: web_views.home_view(who.conn, who.scope)))

    @router.get("/search", response_class=HTMLResponse)
    async def search(request: Request, who: Signed, q: str = "") -> HTMLResponse:
        if not q.strip():
            return RedirectResponse("/", status_code=303, headers=SECURITY_HEADERS)  # type: ignore[return-value]
        return await shown(request, who, "search.html", lambda: search_pages(who.conn, who.scope, q, 30, embedder_for(settings)),
                           query=q)

    @router.get("/wiki/{page_type}/{slug}", response_class=HTMLResponse)
    async def wiki_page(request: Request, who: Signed, page_type: str, slug: str) -> HTMLResponse:
        return await shown(request, who, "page.html", once_per_revision(
            who, ("page", page_type[:20], slug[:reads.MAX_NAME_CHARS + 1]),
            lambda: web_views.page_view(who.conn, who.scope, page_type[:20], slug)))

    @router.get("/memories/{memory_id}", response_class=HTMLResponse)
    async def memory(request: Request, who: Signed, memory_id: str) -> HTMLResponse:
        return await shown(request, who, "memory.html", lambda: web_views.memory_view(who.conn, who.scope, memory_id),
                           can_forget=allows(who.rights, "operator"))

    @router.get("/graph", response_class=HTMLResponse)
    async def graph(request: Request, who: Signed,
                    offset: int = 0) -> HTMLResponse:
        async def read() -> Any:
            view = await web_views.graph_view(who.conn, who.scope, offset)
            nodes, edges = render.layout([(str(p.id), p.type, p.slug, p.title, p.hubness) for p in view.drawn],
                                         [(str(e.source), str(e.target), e.kind) for e in view.edges])
            # The drawing and the list hold nothing of the viewer: rendered once, kept with the view.
            drawn = {"graph": view, "nodes": nodes, "edges": edges, "size": render.GRAPH_SIZE}
            return {"body": Markup(_templates.get_template("graph_body.html").render(view=drawn))}  # noqa: S704

        return await shown(request, who, "graph.html", once_per_revision(who, ("graph", offset), read))

    @router.get("/runs", response_class=HTMLResponse)
    async def runs(request: Request, who: Signed) -> HTMLResponse:
        return await shown(request, who, "runs.html", lambda: web_views.runs_view(who.conn, who.scope),
                           ui_link=lambda run: temporal_ui_link(settings, run.workflow_id, run.run_id))

    # ------------------------------------------------------------------ signing in and out

    @router.get("/sign-in", response_class=HTMLResponse)
    async def sign_in_form(request: Request) -> HTMLResponse:
        nonce = request.cookies.get(SIGNIN_COOKIE) or new_signin_nonce()
        response = page(request, "sign_in.html", csrf=nonce, message=None)
        set_cookie(response, request, SIGNIN_COOKIE, nonce, max_age=3600)
        return response

    @router.post("/sign-in", response_class=HTMLResponse)
    async def sign_in(request: Request) -> Response:
        check_same_origin(request)
        form = await read_form(request)
        if not same_token(form.get(CSRF_FIELD), request.cookies.get(SIGNIN_COOKIE)):
            raise FormRefused(403, "the sign-in form has expired; reload the page and sign in again")
        token = form.get("token", "").strip()
        if not token or len(token) > MAX_TOKEN_CHARS:
            return page(request, "sign_in.html", 401, csrf=request.cookies[SIGNIN_COOKIE],
                        message="unknown or revoked token")
        async with engine.connect() as conn:
            found = await scope_of_token(conn, token)
        if found is None or found.expired:
            return page(request, "sign_in.html", 401, csrf=request.cookies[SIGNIN_COOKIE],
                        message="this token has expired" if found is not None else "unknown or revoked token")
        response = RedirectResponse("/", status_code=303, headers=SECURITY_HEADERS)
        set_cookie(response, request, SESSION_COOKIE, token)
        clear_cookie(response, request, SIGNIN_COOKIE)
        return response

    @router.post("/sign-out")
    async def sign_out(request: Request, who: Signed) -> Response:
        await _checked_form(request, who)
        response = RedirectResponse("/sign-in", status_code=303, headers=SECURITY_HEADERS)
        clear_cookie(response, request, SESSION_COOKIE)
        return response

    @router.post("/memories/{memory_id}/forget")
    async def forget(request: Request, who: Signed, memory_id: str) -> Response:
        await _checked_form(request, who)
        if not allows(who.rights, "operator"):
            return page(request, "error.html", 403, who, title="Not allowed",
                        message="only an operator token can forget a memory")
        await who.conn.commit()  # the read transaction ends before the use case takes its own
        try:
            await web_views.forget_memory(engine, who.scope, memory_id[:80], connect, settings)
        except NotFound as error:
            return page(request, "error.html", 404, who, title="Not found", message=str(error))
        except BadInput as error:
            return page(request, "error.html", 422, who, title="Bad request", message=str(error))
        except CompileUnavailable as error:
            return page(request, "error.html", 503, who, title="Not queued", message=str(error))
        return RedirectResponse("/", status_code=303, headers=SECURITY_HEADERS)

    @router.get("/assets/{name}")
    async def asset(name: str) -> Response:
        media_type = ASSETS.get(name)
        if media_type is None:
            return page_not_found()
        return FileResponse(_ASSETS / name, media_type=media_type,
                            headers={"Cache-Control": "max-age=3600", "X-Content-Type-Options": "nosniff"})

    @router.get("/favicon.ico")
    async def favicon() -> Response:
        return RedirectResponse("/assets/favicon.svg", status_code=301)

    api.include_router(router)

    @api.exception_handler(SignInNeeded)
    async def to_sign_in(request: Request, _: SignInNeeded) -> Response:
        return RedirectResponse("/sign-in", status_code=303, headers=SECURITY_HEADERS)

    @api.exception_handler(WebRefusal)
    async def refused(request: Request, error: WebRefusal) -> Response:
        response = page(request, "error.html", error.status, None, headers=error.headers,
                        title="Sign in again" if error.status == 401 else "Refused", message=error.message,
                        sign_in=error.status == 401)
        if error.status == 401:
            clear_cookie(response, request, SESSION_COOKIE)
        return response

    @api.exception_handler(FormRefused)
    async def form_refused(request: Request, error: FormRefused) -> Response:
        return page(request, "error.html", error.status, None, title="Refused", message=error.message)


async def _checked_form(request: Request, who: Viewer) -> dict[str, str]:
    """The form of a state-changing request from a signed-in browser, refused from another site or
    without the session's CSRF token."""
    check_same_origin(request)
    form = await read_form(request)
    if not same_token(form.get(CSRF_FIELD), who.csrf):
        raise FormRefused(403, "this form carries no valid CSRF token; reload the page and try again")
    return form
