"""Starting compiles: `wiki compile`, `wiki resume`, `wiki rebuild`, and waiting for one to end."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import typer
from temporalio.client import WorkflowFailureError, WorkflowHandle

from app.operations import rebuild_scope, resume_all_failed, resume_scope
from app.scope_report import memory_counts
from cli.common import (
    EXIT_USAGE,
    CliError,
    OwnerOption,
    TenantOption,
    YesOption,
    confirm,
    database,
    handled,
    require_worker,
    run,
    scope,
    temporal,
)
from cli.output import MODEL_ONLY_METRICS, cost_text, out, print_workflow_location, table
from cli.status import PROGRESS_POLL_SECONDS, progress_of
from domain.progress import progress_text
from messages.compile import Progress as CompileProgress
from messages.compile import Trigger
from runtime.settings import Settings, get_settings
from runtime.temporal_client import signal_compile
from workflows.errors import one_sentence

WaitOption = Annotated[bool, typer.Option("--wait/--no-wait", help="Wait for the compile and print its metrics.")]


def _progress_line(progress: CompileProgress) -> str:
    compiled = progress_text(progress.memories_compiled, progress.memories_total, progress.seconds_left,
                             progress.memories_per_second)
    return (f"compiling: run {progress.run_no}, {progress.phase}, batch {progress.batches_done}, "
            + (f"{compiled}, " if compiled else f"{progress.records_read} memories read, ")
            + f"{progress.pages_created} pages created, cursor {progress.cursor}")


async def wait_for_compile(handle: WorkflowHandle) -> dict[str, Any]:
    """The compile's result (following continue-as-new), with its progress on a spinner meanwhile."""
    result = asyncio.ensure_future(handle.result())
    with out.status("compiling…") as status:
        while not result.done():
            progress = await progress_of(handle)
            if progress is not None:
                status.update(_progress_line(progress))
            await asyncio.wait({result}, timeout=PROGRESS_POLL_SECONDS)
    try:
        return result.result()
    except WorkflowFailureError as error:
        raise CliError(f"compile failed: {one_sentence(error, 'no reason given')}") from None


def _print_metrics(metrics: dict[str, Any], settings: Settings) -> None:
    if not metrics.get("records_read"):
        out.print("nothing new to compile: the wiki is up to date")
    scripted = settings.llm == "scripted"
    rows = [(key, value) for key, value in metrics.items() if value not in (0, 0.0, False, [], None)
            and not (scripted and key in MODEL_ONLY_METRICS)]
    rows.append(("cost", cost_text(float(metrics.get("cost_usd") or 0), settings)))
    out.print(table("Compile metrics", ["metric", "value"], rows))
    out.print("(the last run of the workflow; zero values omitted; `wiki status` shows the ledger)")


async def _follow_compile(settings: Settings, handle: WorkflowHandle, wait: bool) -> None:
    """Where the compile can be watched; with `wait`, its metrics once it ends."""
    print_workflow_location(settings, handle.id)
    if wait:
        _print_metrics(await wait_for_compile(handle), settings)


async def _compile(settings: Settings, tenant: str, owner: str, trigger: Trigger, model: str | None,
                   wait: bool) -> None:
    async with database() as engine, engine.connect() as conn:
        memories, _ = await memory_counts(conn, tenant, owner)
    if memories == 0:
        raise CliError(f"no memories are stored for {tenant}/{owner}: nothing to compile "
                       f"(`wiki retain --tenant {tenant} --owner {owner} FILE.jsonl` stores some)")
    client = await temporal(settings)
    await require_worker(client, settings, wait=wait)
    handle = await signal_compile(client, tenant, owner, trigger=trigger, model_id=model, settings=settings)
    out.print(f"compile {trigger}: workflow {handle.id}", soft_wrap=True)
    await _follow_compile(settings, handle, wait)


@handled
def compile_command(
    tenant: TenantOption,
    owner: OwnerOption,
    bootstrap: Annotated[bool, typer.Option(help="Bootstrap import: 1000 records per run instead of 500.")] = False,
    model: Annotated[str | None, typer.Option(help="Model id for this compile (default WIKI_MODEL_ID).")] = None,
    wait: WaitOption = True,
) -> None:
    """Compile a scope now (no debounce): starts its workflow, or wakes the running one."""
    settings = get_settings()
    tenant, owner = scope(tenant, owner)
    if model is not None:
        model = model.strip()
        if not model:
            raise CliError("--model must name a model (got an empty string)", EXIT_USAGE)
    run(_compile(settings, tenant, owner, "bootstrap_import" if bootstrap else "admin", model, wait))


async def _resume(settings: Settings, tenant: str, owner: str, wait: bool) -> None:
    async with database() as engine:
        client = await temporal(settings)
        handle = await resume_scope(client, engine, settings, tenant, owner,
                                    before_start=lambda: require_worker(client, settings, wait=wait))
    out.print(f"compile resumed from the stored cursor: workflow {handle.id}", soft_wrap=True)
    await _follow_compile(settings, handle, wait)


async def _resume_all(settings: Settings) -> None:
    async with database() as engine:
        client = await temporal(settings)
        await require_worker(client, settings, wait=False)
        outcomes = await resume_all_failed(client, engine, settings)
    if not outcomes:
        out.print("no scope's latest compile failed, was terminated or timed out: nothing to resume")
    for outcome in outcomes:
        if outcome.resumed:
            out.print(f"resumed {outcome.tenant}/{outcome.owner}: workflow {outcome.workflow_id}", soft_wrap=True)
        else:
            out.print(f"skipped {outcome.tenant}/{outcome.owner}: {outcome.reason}", soft_wrap=True)


@handled
def resume_command(
    tenant: Annotated[str | None, typer.Option(help="Tenant id.")] = None,
    owner: Annotated[str | None, typer.Option(help="Owner id.")] = None,
    all_failed: Annotated[bool, typer.Option(help="Every scope whose latest compile failed, was terminated "
                                                  "or timed out.")] = False,
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Wait for the resumed compile (one scope).")] = True,
) -> None:
    """Start a new compile run from the stored cursor after a failed, terminated or timed-out one."""
    settings = get_settings()
    if all_failed:
        if tenant is not None or owner is not None:
            raise CliError("give either --all-failed or --tenant and --owner, not both", EXIT_USAGE)
        run(_resume_all(settings))
        return
    if tenant is None or owner is None:
        raise CliError("give --tenant and --owner (or --all-failed)", EXIT_USAGE)
    tenant, owner = scope(tenant, owner)
    run(_resume(settings, tenant, owner, wait))


async def _rebuild(settings: Settings, tenant: str, owner: str, wait: bool) -> None:
    async with database() as engine:
        client = await temporal(settings)
        reset, handle = await rebuild_scope(client, engine, settings, tenant, owner,
                                            before_start=lambda: require_worker(client, settings, wait=wait))
    out.print(f"removed {reset.pages_removed} pages and {reset.mentions_cleared} unresolved mentions of "
              f"{tenant}/{owner}; the cursor is back at the start", soft_wrap=True)
    out.print(f"compile rebuild: workflow {handle.id}", soft_wrap=True)
    await _follow_compile(settings, handle, wait)


@handled
def rebuild_command(
    tenant: TenantOption,
    owner: OwnerOption,
    yes: YesOption = False,
    wait: WaitOption = True,
) -> None:
    """Empty the scope's wiki, rewind its cursor and compile every memory again."""
    settings = get_settings()
    tenant, owner = scope(tenant, owner)
    confirm(f"Remove every page of {tenant}/{owner} and compile all its memories again?", yes)
    run(_rebuild(settings, tenant, owner, wait))
