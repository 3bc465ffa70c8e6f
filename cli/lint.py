"""The lint: `wiki lint` runs it now, `wiki schedule ...` manages its nightly Temporal Schedule."""

from __future__ import annotations

from collections import Counter
from typing import Annotated

import typer
from rich.table import Table
from temporalio.client import WorkflowFailureError

from app import pages
from app.operations import (
    DEFAULT_LINT_HOUR,
    ScheduleView,
    delete_lint_schedule,
    describe_lint_schedule,
    install_lint_schedule,
    lint_checked_counts,
    named_lint_findings,
    set_lint_schedule_paused,
    start_lint,
)
from cli.common import (
    CliError,
    JsonOption,
    database,
    handled,
    in_range,
    reading,
    require_worker,
    run,
    temporal,
)
from cli.output import Col, WideOption, out, print_json, print_workflow_location, table
from domain.lint import (
    CHECKS,
    NAMED_PER_CHECK,
    NAMED_SCOPES,
    PAGE_CHECKS,
    LintFinding,
    LintReport,
    check_label,
    summary_line,
)
from runtime.settings import Settings, get_settings
from workflows.errors import one_sentence

schedule_app = typer.Typer(help="The nightly lint Schedule on Temporal.", no_args_is_help=True)


def _findings_table(report: LintReport, findings: list[LintFinding]) -> Table:
    """Each named finding, and the pages with provenance or body problems; a check with more findings
    than named says how many more."""
    rows = [(f"{f.tenant}/{f.owner}", check_label(f.check), ", ".join(f.subject), f.detail) for f in findings]
    rows += [(f"{s.tenant}/{s.owner}", check_label(problem.check), problem.page, f"{problem.count} found")
             for s in report.scopes[:NAMED_SCOPES] for problem in s.problem_pages]
    named = Counter((f.tenant, f.owner, f.check) for f in findings)
    for scope in report.scopes[:NAMED_SCOPES]:
        for check in CHECKS:
            if check in PAGE_CHECKS:
                continue  # listed by page above, the most affected first
            more = getattr(scope, check) - named[(scope.tenant, scope.owner, check)]
            if more > 0:
                rows.append((f"{scope.tenant}/{scope.owner}", check_label(check), "…", f"and {more} more"))
    rows.sort(key=lambda row: (row[0], CHECKS.index(_CHECK_BY_LABEL[row[1]]), row[2] == "…"))
    return table("Findings", [Col("scope", "key"), Col("check", "key"), Col("page or mention"), Col("detail")],
                 rows, boxed=False)


_CHECK_BY_LABEL = {check_label(check): check for check in CHECKS}


async def _lint(settings: Settings, json_output: bool) -> tuple[LintReport, list[LintFinding], tuple[int, int]]:
    client = await temporal(settings)
    await require_worker(client, settings)
    handle = await start_lint(client, settings)
    if not json_output:
        out.print(f"lint started: workflow {handle.id}", soft_wrap=True)
        print_workflow_location(settings, handle.id)
    try:
        with out.status("linting every scope…"):
            report = await handle.result()
    except WorkflowFailureError as error:
        raise CliError(f"lint failed: {one_sentence(error, 'no reason given')}") from None
    # The report counts; the names are read right after, for the first scopes it lists.
    async with database() as engine:
        findings = await named_lint_findings(engine, report)
        checked = await lint_checked_counts(engine)
    return report, findings, checked


MAX_DISPUTED_NAMED = 50


@handled
def lint_command(
    json_output: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    wide: WideOption = False,
) -> None:
    """Run the lint now (as the schedule does nightly) and print its report, naming what it found."""
    settings = get_settings()
    report, findings, (scopes_checked, pages_checked) = run(_lint(settings, json_output))
    totals = run(reading(lambda conn: pages.claim_totals(conn, NAMED_SCOPES)))
    disputed = run(reading(lambda conn: pages.disputed_claims(conn, MAX_DISPUTED_NAMED)))
    unsure = run(reading(lambda conn: pages.unsure_pairs(conn, MAX_DISPUTED_NAMED)))
    if json_output:
        print_json({**report.model_dump(mode="json"), "findings": [f.model_dump() for f in findings],
                    "checked": {"scopes": scopes_checked, "active_pages": pages_checked},
                    "claims": [{**t.model_dump(), "compression": t.compression} for t in totals],
                    "disputed": disputed, "unsure_pairs": unsure})
        return
    out.print(table("Lint totals", ["", "count"], report.totals.model_dump().items()))
    if report.scopes:
        out.print(_findings_table(report, findings))
    if totals:
        out.print(table("Claims (compression: memories to durable claims; `wiki claims rejected` lists rejections)",
                        [Col("scope", "key"), Col("memories", "num"), Col("claims", "num"), Col("durable", "num"),
                         Col("compression"), Col("rejected", "num")],
                        [(f"{t.tenant}/{t.owner}", t.memories, t.claims, t.durable_claims, t.compression,
                          t.rejected_claims) for t in totals], boxed=False))
    if disputed:
        out.print(table("Disputed facts (rival values with no clear order; a dated memory settles them)",
                        [Col("scope", "key"), Col("page", "key"), Col("section", "key"), Col("claim")],
                        [(f"{d['tenant']}/{d['owner']}", d["page"], d["section"], d["text"]) for d in disputed],
                        boxed=False))
    if unsure:
        out.print(table("Possibly one fact replacing another (both kept current: the rules could not tell)",
                        [Col("scope", "key"), Col("page", "key"), Col("claim"), Col("and claim")],
                        [(f"{u['tenant']}/{u['owner']}", u["page"], u["line"], u["other"]) for u in unsure],
                        boxed=False))
    if len(report.scopes) > NAMED_SCOPES or report.scopes_not_listed:
        out.print(f"(findings named for the first {NAMED_SCOPES} scopes only, at most {NAMED_PER_CHECK} per check; "
                  "the totals count every scope)")
    woken = [f"{s.tenant}/{s.owner}" for s in report.scopes if s.compile_started]
    if woken:
        out.print(f"compiles started for promotion candidates: {', '.join(woken)}")
    out.print(f"checked {pages_checked} active page(s) in {scopes_checked} scope(s)")
    out.print(summary_line(report), soft_wrap=True)


def _print_schedule(view: ScheduleView) -> None:
    times = ", ".join(f"{h:02d}:{m:02d}" for h in view.hours_utc for m in view.minutes)
    catchup = f"{view.catchup_window_seconds / 3600:g} h" if view.catchup_window_seconds else "server default"
    rows = [
        ("schedule", view.id),
        ("runs", f"daily at {times} {view.time_zone or 'UTC'}"),
        ("state", f"paused ({view.note})" if view.paused else "active"),
        ("overlap", f"{view.overlap} (a run still open makes the next one skip)"),
        ("catch-up window", catchup),
        ("task queue", view.task_queue or ""),
        ("next runs", ", ".join(t.strftime("%Y-%m-%d %H:%M UTC") for t in view.next_runs)
         or "none while paused (`wiki schedule unpause`)"),
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
