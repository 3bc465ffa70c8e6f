"""The operator's corrections: `wiki alias add|remove`, `wiki scope pause|resume|show`, `wiki links
rollback --deterministic` (and, in their groups, `wiki mention ignore` and `wiki page keep-section`).
Every correction survives the next compile and `wiki rebuild`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli.common import (
    EXIT_USAGE,
    CliError,
    JsonOption,
    OwnerOption,
    TenantOption,
    database,
    handled,
    run,
    scope,
    temporal,
)
from cli.output import out, print_json
from runtime.settings import get_settings

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from app.corrections import Correction
    from app.reads import ReadScope

alias_app = typer.Typer(help="Aliases by hand: kept through every compile and rebuild.", no_args_is_help=True)
scope_app = typer.Typer(help="A scope's compiles: pause, resume, and the corrections set on it.",
                        no_args_is_help=True)
links_app = typer.Typer(help="Links: roll back the deterministic ones.", no_args_is_help=True)

@links_app.callback()
def _links() -> None:
    """Links: roll back the deterministic ones."""  # a group, even of one command


PageArgument = Annotated[str, typer.Argument(metavar="PAGE", help="The page by TYPE/SLUG, slug, title or alias.")]
AliasArgument = Annotated[str, typer.Argument(metavar="ALIAS", help="The alternate name.")]


def corrected(tenant: str, owner: str, work: Callable[[AsyncEngine, ReadScope], Awaitable[Any]]) -> Any:
    """Run a correction of app/corrections.py on the scope, its bad input a usage error."""
    from app import reads

    get_settings()
    tenant, owner = scope(tenant, owner)

    async def go() -> Any:
        async with database() as engine:
            return await work(engine, reads.ReadScope.of(tenant, owner))

    try:
        return run(go())
    except reads.BadInput as error:
        raise CliError(str(error), EXIT_USAGE) from None
    except reads.NotFound as error:
        raise CliError(f"{error} ({tenant}/{owner})") from None


def report(done: Correction, json_output: bool) -> None:
    if json_output:
        print_json(done)
    else:
        out.print(done.done, soft_wrap=True)


@alias_app.command("add")
@handled
def alias_add(page: PageArgument, alias: AliasArgument, tenant: TenantOption, owner: OwnerOption,
              json_output: JsonOption = False) -> None:
    """Give a page an alias by hand: a memory naming it lands on this page (an exact match wins over
    any fuzzy one), in every compile and rebuild after."""
    from app import corrections

    report(corrected(tenant, owner, lambda engine, at: corrections.add_alias(engine, at, page, alias)), json_output)


@alias_app.command("remove")
@handled
def alias_remove(page: PageArgument, alias: AliasArgument, tenant: TenantOption, owner: OwnerOption,
                 json_output: JsonOption = False) -> None:
    """Take an alias off a page, and keep compiles from giving it back."""
    from app import corrections

    report(corrected(tenant, owner, lambda engine, at: corrections.remove_alias(engine, at, page, alias)),
           json_output)


@scope_app.command("pause")
@handled
def scope_pause(tenant: TenantOption, owner: OwnerOption, json_output: JsonOption = False) -> None:
    """Pause the scope: retains are still stored, but compiles read nothing (a running one stops after
    its batch) and the lint leaves it alone, until `wiki scope resume`."""
    from app import corrections

    report(corrected(tenant, owner, lambda engine, at: corrections.set_paused(engine, at, True)), json_output)


@scope_app.command("resume")
@handled
def scope_resume(tenant: TenantOption, owner: OwnerOption, json_output: JsonOption = False) -> None:
    """Resume a paused scope and wake its compile, which reads what was retained meanwhile."""
    from app import corrections
    from runtime.temporal_client import signal_compile

    settings = get_settings()

    async def resume(engine: AsyncEngine, at: ReadScope) -> Correction:
        done = await corrections.set_paused(engine, at, False)
        client = await temporal(settings)
        handle = await signal_compile(client, at.tenant, at.owner, trigger="admin", settings=settings)
        return done.model_copy(update={"done": f"{done.done}; compile woken: workflow {handle.id}"})

    report(corrected(tenant, owner, resume), json_output)


@scope_app.command("show")
@handled
def scope_show(tenant: TenantOption, owner: OwnerOption, json_output: JsonOption = False) -> None:
    """The corrections set on the scope: paused or not, links rolled back, aliases added and removed by
    hand, names ignored, sections kept from promotion."""
    from app import corrections

    shown = corrected(tenant, owner, corrections.scope_corrections)
    if json_output:
        print_json(shown)
        return
    out.print(f"paused: {'yes' if shown.paused else 'no'}; deterministic links: "
              f"{'rolled back' if shown.deterministic_links_off else 'on'}")
    for label, entries in (("aliases added", shown.aliases_added), ("aliases removed", shown.aliases_removed),
                           ("names ignored", shown.ignored_names), ("sections kept", shown.blocked_sections)):
        out.print(f"{label}: {', '.join(entries) or 'none'}", soft_wrap=True)


@links_app.command("rollback")
@handled
def links_rollback(tenant: TenantOption, owner: OwnerOption,
                   deterministic: Annotated[bool, typer.Option(
                       "--deterministic", help="The `deterministic:` parent and `co_mention:` links (required: the "
                                               "planner's links are never rolled back).")] = False,
                   json_output: JsonOption = False) -> None:
    """Drop the scope's deterministic links and stop compiles (and rebuilds) writing them again."""
    if not deterministic:
        raise CliError("say which links: --deterministic (the planner's links are never rolled back)", EXIT_USAGE)
    from app import corrections

    report(corrected(tenant, owner, corrections.rollback_deterministic_links), json_output)
