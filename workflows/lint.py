"""LintWorkflow: the nightly health check of every scope's wiki, started by a Schedule (docs/operations.md,
docs/cluster.md).

It counts broken links, duplicate aliases and titles, stale and oversize pages, promotion candidates
and the pages' provenance and body problems (listed by page) per scope; prunes old ledger rows; wakes the compile of each scope with promotion
candidates (trigger `lint`), which runs the planner over them even when no memory is new; and records
its report as a ledger row (kind `lint`). The report is the workflow's result.

Only orchestration lives here; the checks are SQL in activities, the report is built in `domain.lint`.
"""

from __future__ import annotations

import contextlib
from typing import Any, TypeVar

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.types import MethodAsyncSingleParam

with workflow.unsafe.imports_passed_through():
    from activities.lint import Lint
    from domain.lint import (
        LintChecks,
        LintChecksInput,
        LintInput,
        LintReport,
        PruneLedgerInput,
        RecordLintInput,
        WakeCompilesInput,
        add_page,
        failed_report,
        ledger_metrics,
        next_page,
        scope_findings,
        scopes_to_wake,
        summary_line,
    )
    from workflows.errors import one_sentence
    from workflows.policies import LINT_STEP_HEARTBEAT_TIMEOUT, LINT_STEP_RETRY, LINT_STEP_TIMEOUT

T = TypeVar("T")


@workflow.defn(name="LintWorkflow")
class LintWorkflow:
    @workflow.run
    async def run(self, inp: LintInput) -> LintReport:
        report = LintReport(trigger=inp.trigger, started_at=workflow.now())
        try:
            page: LintChecksInput | None = LintChecksInput(scope_limit=inp.scopes_per_page)
            while page is not None:
                page = await self._lint_page(report, page)
            workflow.set_current_details(f"{summary_line(report)}; pruning the ledger")
            report.totals.ledger_rows_pruned = await self._activity(
                Lint.prune_ledger, PruneLedgerInput(), "prune ledger rows older than 30 days")
        except ActivityError as error:
            message = one_sentence(error, "a lint activity failed")
            await self._record_failure(failed_report(inp.trigger, report.started_at, message))
            workflow.set_current_details(f"lint failed: {message}")
            raise ApplicationError(message, type="LintFailed", non_retryable=True) from error
        await self._record(report, "succeeded")
        workflow.set_current_details(summary_line(report))
        return report

    async def _lint_page(self, report: LintReport, page: LintChecksInput) -> LintChecksInput | None:
        """Check one page of scopes, wake the compiles of its scopes with candidates; the next page."""
        where = f"after {page.after_tenant}/{page.after_owner}" if page.after_tenant else "from the first scope"
        workflow.set_current_details(f"checking up to {page.scope_limit} scopes {where}")
        checks: LintChecks = await self._activity(Lint.run_checks, page,
                                                  f"count findings of up to {page.scope_limit} scopes {where}")
        scopes = scope_findings(checks, page.scope_limit)
        wakes = scopes_to_wake(scopes)
        if wakes:
            await self._activity(Lint.wake_compiles, WakeCompilesInput(wakes=wakes),
                                 f"wake {len(wakes)} compile(s) with trigger lint for promotion candidates")
        add_page(report, scopes, wakes)
        return next_page(scopes, page.scope_limit)

    async def _record(self, report: LintReport, status: str) -> None:
        info = workflow.info()
        await self._activity(
            Lint.record,
            RecordLintInput(workflow_id=info.workflow_id, run_id=info.run_id, trigger=report.trigger, status=status,
                            started_at=report.started_at, metrics=ledger_metrics(report), error=report.error),
            f"ledger: lint {status}",
        )

    async def _record_failure(self, report: LintReport) -> None:
        # The database is probably what failed; the workflow's own failure still says why.
        with contextlib.suppress(ActivityError):
            await self._record(report, "failed")

    async def _activity(self, step: MethodAsyncSingleParam[Any, Any, T], arg: Any, summary: str) -> T:
        return await workflow.execute_activity_method(
            step, arg, start_to_close_timeout=LINT_STEP_TIMEOUT,
            heartbeat_timeout=LINT_STEP_HEARTBEAT_TIMEOUT, retry_policy=LINT_STEP_RETRY, summary=summary,
        )
