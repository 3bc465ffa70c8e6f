"""The lint: `wiki lint` runs it now, `wiki schedule ...` manages its nightly Temporal Schedule."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table
from temporalio.client import WorkflowFailureError

from app.operations import (
    DEFAULT_LINT_HOUR,
    ScheduleView,
    delete_lint_schedule,
    describe_lint_schedule,
    install_lint_schedule,
    set_lint_schedule_paused,
    start_lint,
)
from cli.common import CliError, JsonOption, handled, in_range, run, temporal
from cli.output import out, print_json, print_workflow_location, table
from domain.lint import CHECKS, LintReport, summary_line
from runtime.settings import Settings, get_settings
from workflows.errors import one_sentence

schedule_app = typer.Typer(help="The nightly lint Schedule on Temporal.", no_args_is_help=True)


def _lint_tables(report: LintReport) -> list[Table]:
    totals = table("Lint totals", ["", "count"], report.totals.model_dump().items())
    scopes = table("Findings by scope", ["scope", *[c.replace("_", " ") for c in CHECKS], "compile started"],
                   [(f"{s.tenant}/{s.owner}", *[getattr(s, c) for c in CHECKS], "yes" if s.compile_started else "")
                    for s in report.scopes])
    provenance = table("Provenance problems by page",
                       ["scope", "page", "title", "uncited sections", "missing sources", "stray rollup sources"],
                       [(f"{s.tenant}/{s.owner}", f"{p.type}/{p.slug}", p.title, p.uncited_sections,
                         p.missing_sources, p.stray_rollup_sources)
                        for s in report.scopes for p in s.provenance_pages])
    listed = [totals, scopes] if report.scopes else [totals]
    return [*listed, provenance] if any(s.provenance_pages for s in report.scopes) else listed


async def _lint(settings: Settings, json_output: bool) -> LintReport:
    client = await temporal(settings)
    handle = await start_lint(client, settings)
    if not json_output:
        out.print(f"lint started: workflow {handle.id}", soft_wrap=True)
        print_workflow_location(settings, handle.id)
    try:
        with out.status("linting every scope…"):
            return await handle.result()
    except WorkflowFailureError as error:
        raise CliError(f"lint failed: {one_sentence(error, 'no reason given')}") from None


@handled
def lint_command(
    json_output: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Run the lint now (as the schedule does nightly) and print its report."""
    settings = get_settings()
    report = run(_lint(settings, json_output))
    if json_output:
        print_json(report)
        return
    for result in _lint_tables(report):
        out.print(result)
    if report.scopes_not_listed:
        out.print(f"({report.scopes_not_listed} more scopes with findings are counted but not listed)")
    out.print(summary_line(report), soft_wrap=True)


def _print_schedule(view: ScheduleView) -> None:
    times = ", ".join(f"{h:02d}:{m:02d}" for h in view.hours_utc for m in view.minutes)
    catchup = f"{view.catchup_window_seconds / 3600:g} h" if view.catchup_window_seconds else "server default"
    rows = [
        ("schedule", view.id),
        ("runs", f"daily at {times} {view.time_zone or 'UTC'}"),
        ("state", "paused" if view.paused else "active"),
        ("overlap", f"{view.overlap} (a run still open makes the next one skip)"),
        ("catch-up window", catchup),
        ("task queue", view.task_queue or ""),
        ("note", view.note or ""),
        ("next runs", ", ".join(t.strftime("%Y-%m-%d %H:%M UTC") for t in view.next_runs) or "none (paused)"),
        ("recent runs", ", ".join(r.workflow_id for r in view.recent_runs) or "none yet"),
    ]
    out.print(table("Lint schedule", ["", "value"], rows))


@schedule_app.command("install")
@handled
def schedule_install(
    hour: Annotated[int, typer.Option(help="Hour of the day (UTC) to lint at, 0-23.")] = DEFAULT_LINT_HOUR,
) -> None:
    """Create the nightly lint schedule, or update it in place (running it twice is safe)."""
    settings = get_settings()
    hour = in_range("hour", hour, 0, 23)

    async def install() -> ScheduleView:
        client = await temporal(settings)
        outcome = await install_lint_schedule(client, settings, hour=hour)
        out.print(f"lint schedule {outcome}")
        return await describe_lint_schedule(client)

    _print_schedule(run(install()))


@schedule_app.command("show")
@handled
def schedule_show(json_output: JsonOption = False) -> None:
    """The lint schedule: when it runs, its policies, its next and recent runs."""
    settings = get_settings()

    async def show() -> ScheduleView:
        return await describe_lint_schedule(await temporal(settings))

    view = run(show())
    if json_output:
        print_json(view)
    else:
        _print_schedule(view)


def _pause(paused: bool) -> None:
    settings = get_settings()

    async def pause() -> None:
        await set_lint_schedule_paused(await temporal(settings), paused)

    run(pause())
    out.print("lint schedule paused" if paused else "lint schedule active again")


@schedule_app.command("pause")
@handled
def schedule_pause() -> None:
    """Stop starting lint runs until `wiki schedule unpause`."""
    _pause(True)


@schedule_app.command("unpause")
@handled
def schedule_unpause() -> None:
    """Start nightly lint runs again."""
    _pause(False)


@schedule_app.command("delete")
@handled
def schedule_delete() -> None:
    """Remove the lint schedule (runs already started go on)."""
    settings = get_settings()

    async def delete() -> None:
        await delete_lint_schedule(await temporal(settings))

    run(delete())
    out.print("lint schedule deleted")
