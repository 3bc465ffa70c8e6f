"""The HTTP API's page-merge routes: a page's resolution record, and an operator's merge and unmerge.

- `GET  /v1/pages/{type}/{slug}/merges`: every resolution decision about the page and the operator
  merges it took part in (any token of the scope);
- `POST /v1/pages/{type}/{slug}/merge` with `{"into": "TYPE/SLUG"}` and
  `POST /v1/pages/{type}/{slug}/unmerge`: an operator token only (403 otherwise), as `wiki page
  merge` / `unmerge` do (app/merges.py). A merge that cannot be done is 409 with its reason, a page
  the scope does not have 404.

Annotations are evaluated here (no `from __future__ import annotations`): the routes' dependency is
built in `add_merge_routes`, and FastAPI must see it, not its name.
"""


from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app import merges
from domain.tokens import allows
from servers.guard import Caller

PageType = Literal["entity", "topic", "decision"]
MAX_REF_CHARS = 300


class MergeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    into: str = Field(min_length=3, max_length=MAX_REF_CHARS,
                      description="The page this one joins, as TYPE/SLUG (entity/franklin-barbecue).")


def _refused(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _page_ref(ref: str) -> tuple[str, str] | None:
    page_type, slash, slug = ref.strip().partition("/")
    return (page_type, slug) if slash and page_type in ("entity", "topic", "decision") and slug else None


def add_merge_routes(api: FastAPI, engine: AsyncEngine, caller: Callable[..., Awaitable[Caller]]) -> None:
    Authorised = Annotated[Caller, Depends(caller)]  # noqa: N806 - a type alias, as in servers/http_api.py
    errors: dict[int | str, dict[str, Any]] = {403: {"description": "Not an operator token"},
                                               404: {"description": "No such page"},
                                               409: {"description": "The merge cannot be done"}}

    async def in_transaction(who: Caller, work: Callable[[AsyncConnection], Any]) -> Any:
        if who.conn is not None:  # the guard's connection: write on it and commit
            try:
                result = await work(who.conn)
            except BaseException:
                await who.conn.rollback()
                raise
            await who.conn.commit()
            return result
        async with engine.begin() as conn:
            return await work(conn)

    async def run_change(who: Caller, work: Callable[[AsyncConnection], Any]) -> Any:
        if not allows(who.rights, "operator"):
            return _refused(403, f"this {who.rights} token cannot merge pages (it needs operator rights: "
                                 "`wiki token create --rights operator`)")
        try:
            return await in_transaction(who, work)
        except merges.MergeRefused as refused:
            return _refused(404 if str(refused).startswith("no page") else 409, str(refused))

    @api.get("/v1/pages/{page_type}/{slug}/merges", response_model=merges.PageResolution, tags=["read"],
             responses={404: errors[404]})
    async def page_merges(who: Authorised, page_type: PageType, slug: str) -> Any:
        """Why the page holds its names: each resolution decision (rung or judge, evidence, answer, run),
        newest first, and the operator merges it took part in."""
        async def read(conn: AsyncConnection) -> Any:
            return await merges.page_resolution(conn, who.scope.tenant, who.scope.owner, page_type, slug)

        if who.conn is not None:
            found = await read(who.conn)
        else:
            async with engine.connect() as conn:
                found = await read(conn)
        return found if found is not None else _refused(404, f"no page {page_type}/{slug} in this scope")

    @api.post("/v1/pages/{page_type}/{slug}/merge", response_model=merges.PageMerge, tags=["operate"],
              responses=errors)
    async def merge(who: Authorised, page_type: PageType, slug: str, body: MergeRequest) -> Any:
        """Merge this page into `into`: its sections (claims, sources) and aliases move, it is archived;
        an operator token. `…/unmerge` undoes it exactly."""
        target = _page_ref(body.into)
        if target is None:
            return _refused(422, f"into must be TYPE/SLUG with TYPE entity, topic or decision, not {body.into!r}")
        return await run_change(who, lambda conn: merges.merge(conn, who.scope.tenant, who.scope.owner,
                                                               (page_type, slug), target))

    @api.post("/v1/pages/{page_type}/{slug}/unmerge", response_model=merges.PageMerge, tags=["operate"],
              responses=errors)
    async def unmerge(who: Authorised, page_type: PageType, slug: str) -> Any:
        """Undo the standing merge of this page into another: both pages as they were; an operator token."""
        return await run_change(who, lambda conn: merges.unmerge(conn, who.scope.tenant, who.scope.owner,
                                                                 (page_type, slug)))
