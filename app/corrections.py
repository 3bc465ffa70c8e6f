"""The operator's corrections, once for the CLI and the HTTP API (operator tokens): aliases added or
removed by hand, names never to promote, sections never to promote from, a scope's compiles paused
and resumed, and its deterministic links rolled back. Each survives every compile and `wiki rebuild`
(store/corrections.py says how). Arguments are checked here with the reads' sentences: a bad one
raises `BadInput`, a page the scope does not have raises `NotFound`.
"""

from __future__ import annotations

from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncEngine

from app.reads import MAX_NAME_CHARS, BadInput, NotFound, ReadScope, page_key, text_argument
from domain.aliases import normalize_alias
from store import corrections
from store.corrections import ScopeCorrections

__all__ = ["Correction", "ScopeCorrections", "add_alias", "ignore_mention", "keep_section", "remove_alias",
           "rollback_deterministic_links", "scope_corrections", "set_paused"]

MAX_ALIAS_CHARS = 200


class Correction(BaseModel):
    """What a correction did, in one sentence, and how many rows it changed where that says something."""

    done: str
    changed: int = 0


def _name(label: str, value: str) -> str:
    value = text_argument(label, value, MAX_ALIAS_CHARS)
    if not normalize_alias(value):
        raise BadInput(f"{label} must contain a letter or digit (got {value[:40]!r})")
    return value


async def _page(engine: AsyncEngine, scope: ReadScope, page: str) -> tuple[str, str]:
    async with engine.connect() as conn:
        return await page_key(conn, scope, page)


async def add_alias(engine: AsyncEngine, scope: ReadScope, page: str, alias: str) -> Correction:
    """Give the page this alias by hand: kept through every compile and rebuild, and matched exactly
    (before any fuzzy match) when a memory names it."""
    alias = _name("alias", alias)
    page_type, slug = await _page(engine, scope, page)
    async with engine.begin() as conn:
        if await corrections.set_alias(conn, scope.tenant, scope.owner, page_type, slug, alias, "add") is None:
            raise NotFound(f"no page {page_type}/{slug} in this wiki")
    return Correction(done=f"{page_type}/{slug} has the alias {normalize_alias(alias)!r}", changed=1)


async def remove_alias(engine: AsyncEngine, scope: ReadScope, page: str, alias: str) -> Correction:
    """Take an alias off the page, and keep compiles from giving it back."""
    alias = _name("alias", alias)
    page_type, slug = await _page(engine, scope, page)
    async with engine.begin() as conn:
        removed = await corrections.set_alias(conn, scope.tenant, scope.owner, page_type, slug, alias, "remove")
        if removed is None:
            raise NotFound(f"no page {page_type}/{slug} in this wiki")
    note = "" if removed else " (it had no such alias; compiles will not add it)"
    return Correction(done=f"{page_type}/{slug} no longer has the alias {normalize_alias(alias)!r}{note}",
                      changed=int(bool(removed)))


async def ignore_mention(engine: AsyncEngine, scope: ReadScope, name: str) -> Correction:
    """Never promote this name to a page, nor show it to the planner again."""
    name = _name("name", name)
    async with engine.begin() as conn:
        closed = await corrections.ignore_name(conn, scope.tenant, scope.owner, name)
    return Correction(done=f"{normalize_alias(name)!r} is ignored ({closed} open mention(s) closed)", changed=closed)


async def keep_section(engine: AsyncEngine, scope: ReadScope, page: str, section: str, *,
                       undo: bool = False) -> Correction:
    """Never promote this section of the page to a page of its own (with `undo`, allow it again)."""
    section = text_argument("section", section, MAX_NAME_CHARS)
    page_type, slug = await _page(engine, scope, page)
    async with engine.begin() as conn:
        changed = await corrections.set_section_block(conn, scope.tenant, scope.owner, page_type, slug, section,
                                                      blocked=not undo)
        if changed is None:
            raise NotFound(f"no page {page_type}/{slug} in this wiki")
    verb = "may be promoted again" if undo else "stays on its page: never promoted to a page of its own"
    return Correction(done=f"section {section!r} of {page_type}/{slug} {verb}", changed=int(changed))


async def set_paused(engine: AsyncEngine, scope: ReadScope, paused: bool) -> Correction:
    """Pause (retains are stored, compiles and the lint leave the scope alone) or resume the scope.
    The caller wakes the compile after a resume."""
    async with engine.begin() as conn:
        was = await corrections.is_paused(conn, scope.tenant, scope.owner)
        await corrections.set_paused(conn, scope.tenant, scope.owner, paused)
    state = "paused" if paused else "resumed"
    return Correction(done=f"{scope.tenant}/{scope.owner} {state}" + (" (it already was)" if was == paused else ""),
                      changed=int(was != paused))


async def rollback_deterministic_links(engine: AsyncEngine, scope: ReadScope) -> Correction:
    """Drop the scope's `deterministic:` and `co_mention:` links, and stop compiles writing them."""
    async with engine.begin() as conn:
        dropped = await corrections.rollback_deterministic_links(conn, scope.tenant, scope.owner)
    return Correction(done=f"dropped {dropped} deterministic and co-mention link(s) of {scope.tenant}/{scope.owner}; "
                           "compiles write no more of them", changed=dropped)


async def scope_corrections(engine: AsyncEngine, scope: ReadScope) -> ScopeCorrections:
    async with engine.connect() as conn:
        return await corrections.scope_corrections(conn, scope.tenant, scope.owner)
