"""The operator's corrections over HTTP, for operator tokens only (an agent's read or write token gets
403): the same use cases as the `wiki` commands (app/corrections.py), on the token's scope.

    GET  /v1/corrections                      what is set on the scope
    POST /v1/corrections/aliases              {"page": ..., "alias": ...}   add an alias by hand
    POST /v1/corrections/aliases/remove       {"page": ..., "alias": ...}   remove one, for good
    POST /v1/corrections/mentions/ignore      {"name": ...}                 never promote the name
    POST /v1/corrections/sections/keep        {"page": ..., "section": ..., "undo": false}
    POST /v1/corrections/scope/pause          retains stored, compiles and lint leave the scope alone
    POST /v1/corrections/scope/resume         and wake its compile
    POST /v1/corrections/links/rollback       {"deterministic": true}
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Depends, FastAPI
from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncEngine

from app import corrections
from app.corrections import Correction, ScopeCorrections
from app.reads import MAX_NAME_CHARS, BadInput
from servers.guard import Caller

PREFIX = "/v1/corrections"
ROUTES = [("GET", PREFIX), *(("POST", f"{PREFIX}/{path}") for path in (
    "aliases", "aliases/remove", "mentions/ignore", "sections/keep", "scope/pause", "scope/resume", "links/rollback"))]
# What the guard (servers/guard.py) asks of a token for each route.
OPERATOR_NEEDS: dict[tuple[str, str], Any] = {route: "operator" for route in ROUTES}


class AliasRequest(BaseModel):
    page: str = Field(min_length=1, max_length=MAX_NAME_CHARS, description="TYPE/SLUG, slug, title or alias.")
    alias: str = Field(min_length=1, max_length=corrections.MAX_ALIAS_CHARS)


class IgnoreRequest(BaseModel):
    name: str = Field(min_length=1, max_length=corrections.MAX_ALIAS_CHARS, description="The name as written.")


class KeepSectionRequest(BaseModel):
    page: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    section: str = Field(min_length=1, max_length=MAX_NAME_CHARS, description="The section's id (slug).")
    undo: bool = Field(False, description="Allow promoting the section again.")


class RollbackRequest(BaseModel):
    deterministic: bool = Field(description="Must be true: the deterministic and co-mention links are dropped; "
                                            "the planner's links never are.")


def add_correction_routes(api: FastAPI, engine: AsyncEngine, authorised: Any,
                          wake: Callable[[Any], Awaitable[Any]]) -> None:
    """The routes, on `api`; `authorised` is the app's caller dependency (the caller the guard let in),
    `wake(scope)` wakes a compile."""
    operator_only: dict[int | str, dict[str, Any]] = {403: {"description": "Not an operator token"}}

    @api.get(PREFIX, response_model=ScopeCorrections, tags=["operate"], responses=operator_only)
    async def shown(caller: Caller = Depends(authorised)) -> ScopeCorrections:
        """The corrections set on this scope."""
        return await corrections.scope_corrections(engine, caller.scope)

    @api.post(f"{PREFIX}/aliases", response_model=Correction, tags=["operate"], responses=operator_only)
    async def alias_add(body: AliasRequest, caller: Caller = Depends(authorised)) -> Correction:
        """Give a page an alias by hand, kept through every compile and rebuild."""
        return await corrections.add_alias(engine, caller.scope, body.page, body.alias)

    @api.post(f"{PREFIX}/aliases/remove", response_model=Correction, tags=["operate"], responses=operator_only)
    async def alias_remove(body: AliasRequest, caller: Caller = Depends(authorised)) -> Correction:
        """Take an alias off a page, and keep compiles from giving it back."""
        return await corrections.remove_alias(engine, caller.scope, body.page, body.alias)

    @api.post(f"{PREFIX}/mentions/ignore", response_model=Correction, tags=["operate"], responses=operator_only)
    async def mention_ignore(body: IgnoreRequest, caller: Caller = Depends(authorised)) -> Correction:
        """Never promote a name to a page, nor offer it to the planner again."""
        return await corrections.ignore_mention(engine, caller.scope, body.name)

    @api.post(f"{PREFIX}/sections/keep", response_model=Correction, tags=["operate"], responses=operator_only)
    async def section_keep(body: KeepSectionRequest, caller: Caller = Depends(authorised)) -> Correction:
        """Never promote a section of a page to a page of its own (`undo` allows it again)."""
        return await corrections.keep_section(engine, caller.scope, body.page, body.section, undo=body.undo)

    @api.post(f"{PREFIX}/scope/pause", response_model=Correction, tags=["operate"], responses=operator_only)
    async def pause(caller: Caller = Depends(authorised)) -> Correction:
        """Pause this scope: retains are stored, compiles and the lint leave it alone."""
        return await corrections.set_paused(engine, caller.scope, True)

    @api.post(f"{PREFIX}/scope/resume", response_model=Correction, tags=["operate"], responses=operator_only)
    async def resume(caller: Caller = Depends(authorised)) -> Correction:
        """Resume this scope and wake its compile."""
        done = await corrections.set_paused(engine, caller.scope, False)
        await wake(caller.scope)
        return done

    @api.post(f"{PREFIX}/links/rollback", response_model=Correction, tags=["operate"], responses=operator_only)
    async def links_rollback(body: RollbackRequest, caller: Caller = Depends(authorised)) -> Correction:
        """Drop this scope's deterministic and co-mention links, and stop compiles writing them."""
        if not body.deterministic:
            raise BadInput("deterministic must be true: only the deterministic links are rolled back")
        return await corrections.rollback_deterministic_links(engine, caller.scope)
