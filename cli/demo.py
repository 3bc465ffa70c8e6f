"""The sample corpus: `wiki sample` writes it, `wiki demo` compiles it end to end and shows the wiki."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Annotated

import typer
from rich.table import Table
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client, WorkflowHandle

from app.retain import retain_and_signal
from app.scope_report import ScopeReport, memory_counts, scope_report
from cli.common import EXIT_USAGE, CliError, database, handled, require_worker, run, temporal
from cli.compiles import wait_for_compile
from cli.memories import print_retained
from cli.output import out, print_workflow_location, table
from cli.services import ensure_dev_services, migrate_configured, print_services, start_dev_worker
from cli.status import ledger_table
from domain.memory import MemoryIn
from messages.compile import compile_workflow_id
from runtime.settings import Settings, get_settings
from runtime.temporal_client import signal_compile

DEMO_TENANT = "demo"
DEMO_OWNER = "eric"  # the sample's memories are about Eric
DEMO_MEMORIES = 700
DEMO_SEED = 7


@handled
def sample_command(
    memories: Annotated[int, typer.Option(min=1, help="How many memories (at least 1).")] = DEMO_MEMORIES,
    seed: Annotated[int, typer.Option(help="Random seed; the same seed gives the same file.")] = DEMO_SEED,
    out_path: Annotated[str, typer.Option("--out", help="Output file, or - for stdout.")] = "-",
) -> None:
    """Write a deterministic sample corpus of one person's memories as JSONL."""
    from sample.corpus import main_write

    try:
        count = main_write(out_path, memories, seed)
    except OSError as error:
        raise CliError(f"cannot write {out_path}: {error.strerror or error}", EXIT_USAGE) from None
    if out_path != "-":
        out.print(f"wrote {count} memories to {out_path}", soft_wrap=True)


def _demo_settings() -> Settings:
    """The demo compiles at once: no debounce window, unless the user chose one."""
    settings = get_settings()
    if "WIKI_DEBOUNCE_SECONDS" in os.environ:
        return settings
    return settings.model_copy(update={"debounce_seconds": 0.0})


async def _resume_if_behind(client: Client, settings: Settings, engine: AsyncEngine) -> WorkflowHandle | None:
    """Nothing new was retained; still finish a compile an earlier demo left half done."""
    async with engine.connect() as conn:
        _, pending = await memory_counts(conn, DEMO_TENANT, DEMO_OWNER)
    if pending == 0:
        return None
    out.print(f"{pending} memories are not compiled yet (an earlier compile was interrupted): resuming")
    return await signal_compile(client, DEMO_TENANT, DEMO_OWNER, trigger="resume", settings=settings)


async def _retain_and_compile(client: Client, engine: AsyncEngine, settings: Settings) -> None:
    from sample.corpus import generate_sample

    memories = [MemoryIn.model_validate(row) for row in generate_sample(DEMO_MEMORIES, seed=DEMO_SEED)]
    outcome = await retain_and_signal(engine, DEMO_TENANT, DEMO_OWNER, memories, client=client, settings=settings)
    print_retained(outcome, DEMO_TENANT, DEMO_OWNER)
    handle = outcome.compile or await _resume_if_behind(client, settings, engine)
    if handle is None:
        out.print("wiki already up to date: the sample was retained before and nothing changed, "
                  "so there was nothing to compile", soft_wrap=True)
    else:
        await wait_for_compile(handle)


async def _demo(settings: Settings) -> ScopeReport:
    async with database() as engine:
        client = await temporal(settings)
        if settings.temporal_address:
            # An external cluster: its workers are the operator's; this one serves the demo and goes.
            from app.worker import build_worker

            async with build_worker(client, engine, settings):
                await _retain_and_compile(client, engine, settings)
        else:
            # The embedded dev server: the background worker compiles, and stays for the commands after.
            await require_worker(client, settings)
            await _retain_and_compile(client, engine, settings)
        return await scope_report(engine, DEMO_TENANT, DEMO_OWNER)


def _counts_table(title: str, counts: dict[str, int], order: Iterable[str]) -> Table:
    keys = list(order) + sorted(set(counts) - set(order))
    rows = [(key, counts.get(key, 0)) for key in keys]
    return table(title, ["", "count"], [*rows, ("total", sum(counts.values()))])


def _print_hubs(report: ScopeReport) -> None:
    """The aggregation pass's work: hub pages, their rollup sections, and pages promoted out of them."""
    rows = [
        (f"{hub.title} (/wiki/topic/{hub.slug})", str(hub.hubness),
         "\n".join(f"{heading}: {linked} pages" + (f" [{status}]" if status != "none" else "")
                   for heading, linked, status in hub.rollups),
         " · ".join(hub.children) or "-")
        for hub in report.hubs
    ]
    out.print(table("Hub pages (aggregation pass)", ["hub", "hubness", "rollup sections", "promoted children"], rows))
    out.print(f"rollup sections updated: {report.parent_sections_updated}; "
              f"sections promoted into pages: {report.sections_promoted}")


def _print_report(report: ScopeReport, settings: Settings) -> None:
    out.print(_counts_table("Pages by type", report.pages_by_type, ["entity", "topic", "decision"]))
    out.print(_counts_table("Links by kind", report.links_by_kind, ["reference", "parent_of", "child_of"]))
    out.print(_counts_table("Unresolved mentions", report.mentions_by_status, ["open", "promoted", "ignored"]))
    out.print(f"sections: {report.sections}; section sources (citations): {report.section_sources}")
    out.print(f"merges: {report.alias_dedup_merged} by exact alias, {report.ladder_merges} by the resolution ladder "
              f"(article, appositive, typo...), {report.fuzzy_dedupe_merges} by trigram similarity, "
              f"{report.judged_merges} judged one thing ({report.judged_apart} judged two)")
    out.print(ledger_table(f"Compile ledger of {DEMO_TENANT}/{DEMO_OWNER} (wiki_compile_jobs)", report.ledger))
    titles = [(page_type, " · ".join(names)) for page_type, names in sorted(report.titles_by_type.items())]
    out.print(table("Some pages (most linked first)", ["type", "titles"], titles))
    _print_hubs(report)
    out.print(f"memories stored: {report.memories}; not compiled yet: {report.pending_memories}")
    print_workflow_location(settings, compile_workflow_id(DEMO_TENANT, DEMO_OWNER))


@handled
def demo_command() -> None:
    """Start the services and a background worker, retain the 700-memory sample for demo/eric, compile it,
    and show the wiki."""
    settings = _demo_settings()
    ensure_dev_services(settings)
    migrate_configured()  # before the background worker starts: it would migrate too, concurrently
    start_dev_worker(settings)
    print_services(settings)
    _print_report(run(_demo(settings)), settings)
