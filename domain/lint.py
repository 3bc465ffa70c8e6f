"""The nightly lint (docs/operations.md): thresholds, the messages of LintWorkflow, and its report.

The activity counts findings per scope with SQL; everything here is pure: merging those counts into
one entry per scope, choosing the scopes whose compile must run for promotion candidates, and the
totals, summary line and ledger metrics of the report.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal
from uuid import UUID

from pydantic import BaseModel, Field

STALE_DAYS = 90
OVERSIZE_BODY_CHARS = 8000
LEDGER_RETENTION_DAYS = 30
# Candidates handed to one scope's compile per night, most mentioned first: the planner sees them all
# in one prompt, and a run creates at most 25 pages anyway. The rest stay open for a later night.
MAX_PROMOTIONS_PER_SCOPE = 20
# The checks page through scopes (in tenant, owner order) so no payload grows with the number of
# scopes; the report lists the first scopes with findings and counts all of them in its totals.
SCOPES_PER_PAGE = 100
MAX_LISTED_SCOPES = 200
# Lint covers every scope; its runs carry this as WikiTenant and WikiOwner.
ALL_SCOPES = "*"
# A compile step (one activity of an open run) whose attempts timed out, were cancelled or failed this
# many times is retrying the same step (wiki_compile_attempts), counted when its latest such attempt
# is this recent: the work is being redone rather than done.
RETRYING_ATTEMPTS = 3
RETRYING_WITHIN_HOURS = 24

# Checks of the pages' provenance and bodies, reported by page as well as counted by scope:
# - unsourced_sections: sections of active pages that cite no memory (provenance lost);
# - foreign_sources: citations that name no memory of the page's scope (provenance that is wrong);
# - repeated_lines: lines beyond the first of each that repeats within one section;
# - raw_html: sections whose body holds raw HTML (a `<` opening a tag), which bodies must never hold.
PageCheck = Literal["unsourced_sections", "foreign_sources", "repeated_lines", "raw_html"]
PAGE_CHECKS: tuple[PageCheck, ...] = ("unsourced_sections", "foreign_sources", "repeated_lines", "raw_html")
LintCheck = Literal["broken_links", "duplicate_aliases", "duplicate_titles", "stale_pages", "oversize_pages",
                    "promotion_candidates", "retrying_steps", "unsourced_sections", "foreign_sources",
                    "repeated_lines", "raw_html"]
LintTrigger = Literal["schedule", "admin"]
CHECKS: tuple[LintCheck, ...] = ("broken_links", "duplicate_aliases", "duplicate_titles", "stale_pages",
                                 "oversize_pages", "promotion_candidates", "retrying_steps", *PAGE_CHECKS)
# The pages listed per scope and page check, the most affected first; the counts have them all.
MAX_PAGES_PER_CHECK = 20
_CHECK_LABELS = {
    "broken_links": "broken links",
    "duplicate_aliases": "duplicate aliases",
    "duplicate_titles": "duplicate titles",
    "stale_pages": "stale pages",
    "oversize_pages": "oversize pages",
    "promotion_candidates": "promotion candidates",
    "retrying_steps": "compile steps retrying",
    "unsourced_sections": "sections citing nothing",
    "foreign_sources": "citations of no memory of the scope",
    "repeated_lines": "repeated lines",
    "raw_html": "sections with raw HTML",
}


class LintInput(BaseModel):
    trigger: LintTrigger = "schedule"
    scopes_per_page: int = SCOPES_PER_PAGE


class LintChecksInput(BaseModel):
    """One page of scopes: those after (after_tenant, after_owner), at most scope_limit of them."""

    after_tenant: str = ""
    after_owner: str = ""
    scope_limit: int = SCOPES_PER_PAGE


class CheckCount(BaseModel):
    """One scope's count for one check (scopes with nothing to report have no row)."""

    check: LintCheck
    tenant: str
    owner: str
    count: int


class PromotionCandidate(BaseModel):
    tenant: str
    owner: str
    mention_id: UUID


class PageFinding(BaseModel):
    """One page's count for one page check (pages with nothing to report have no row)."""

    tenant: str
    owner: str
    page: str  # type/slug
    check: PageCheck
    count: int


class PageProblem(BaseModel):
    page: str  # type/slug
    check: PageCheck
    count: int


class LintChecks(BaseModel):
    """What `lint.run_checks` found on one page: counts per check and scope (each check's first
    `scope_limit` scopes), and the candidates to promote."""

    counts: list[CheckCount] = Field(default_factory=list)
    # At most MAX_PROMOTIONS_PER_SCOPE per scope; the promotion_candidates count has them all.
    candidates: list[PromotionCandidate] = Field(default_factory=list)
    # The pages behind the page checks' counts, at most MAX_PAGES_PER_CHECK per scope and check.
    pages: list[PageFinding] = Field(default_factory=list)


class ScopeWake(BaseModel):
    tenant: str
    owner: str
    mention_ids: list[UUID]


class WakeCompilesInput(BaseModel):
    wakes: list[ScopeWake]


class WakeCompilesResult(BaseModel):
    workflow_ids: list[str] = Field(default_factory=list)


class PruneLedgerInput(BaseModel):
    retention_days: int = LEDGER_RETENTION_DAYS


class CheckCounts(BaseModel):
    """One count per check of CHECKS: a scope's findings, and the totals of a run over every scope."""

    broken_links: int = 0
    duplicate_aliases: int = 0
    duplicate_titles: int = 0  # the ledger's duplicate_candidates_count
    stale_pages: int = 0
    oversize_pages: int = 0
    promotion_candidates: int = 0
    retrying_steps: int = 0
    unsourced_sections: int = 0
    foreign_sources: int = 0
    repeated_lines: int = 0
    raw_html: int = 0


# The leading fields of ScopeLint and LintTotals: listed after CheckCounts among the bases, so pydantic
# puts them first and the stored and recorded JSON keeps its order (these models travel through history).
class _ScopeKey(BaseModel):
    tenant: str
    owner: str


class _ScopesCounted(BaseModel):
    scopes: int = 0


class ScopeLint(CheckCounts, _ScopeKey):
    promotion_mention_ids: list[UUID] = Field(default_factory=list)
    # Provenance and body problems by page (type/slug), the most affected first within each check.
    problem_pages: list[PageProblem] = Field(default_factory=list)
    compile_started: bool = False


class LintTotals(CheckCounts, _ScopesCounted):
    promotion_compiles_started: int = 0
    ledger_rows_pruned: int = 0


class LintReport(BaseModel):
    """The result of a LintWorkflow run; its totals are also the ledger row's metrics."""

    ok: bool = True
    trigger: LintTrigger = "schedule"
    started_at: datetime
    totals: LintTotals = Field(default_factory=LintTotals)
    # The first MAX_LISTED_SCOPES scopes with findings; the totals count every scope.
    scopes: list[ScopeLint] = Field(default_factory=list)
    scopes_not_listed: int = 0
    error: str | None = None


# `wiki lint` names the findings of the first scopes it lists, at most this many per check and scope.
NAMED_SCOPES = 20
NAMED_PER_CHECK = 10


class LintFinding(BaseModel):
    """One named finding: the pages (TYPE/SLUG) or the mention it is about, and what is wrong."""

    check: LintCheck
    tenant: str
    owner: str
    subject: list[str]  # pages as TYPE/SLUG; for a promotion candidate, the mention's name
    detail: str


class RecordLintInput(BaseModel):
    workflow_id: str
    run_id: str
    trigger: LintTrigger
    status: Literal["succeeded", "failed"]
    started_at: datetime
    metrics: dict[str, int | bool] = Field(default_factory=dict)
    error: str | None = None


def scope_findings(checks: LintChecks, limit: int) -> list[ScopeLint]:
    """One entry per scope with any finding, for the first `limit` scopes in (tenant, owner) order.

    Each check reports its own first `limit` scopes, so together they hold every finding of the first
    `limit` scopes overall; scopes beyond the cut come again on the next page.
    """
    scopes: dict[tuple[str, str], ScopeLint] = {}

    def entry(tenant: str, owner: str) -> ScopeLint:
        return scopes.setdefault((tenant, owner), ScopeLint(tenant=tenant, owner=owner))

    for row in checks.counts:
        if row.count > 0:
            scope = entry(row.tenant, row.owner)
            setattr(scope, row.check, getattr(scope, row.check) + row.count)
    for candidate in checks.candidates:
        ids = entry(candidate.tenant, candidate.owner).promotion_mention_ids
        if candidate.mention_id not in ids:
            ids.append(candidate.mention_id)
    for finding in checks.pages:
        if finding.count > 0:
            entry(finding.tenant, finding.owner).problem_pages.append(
                PageProblem(page=finding.page, check=finding.check, count=finding.count))
    return [scopes[key] for key in sorted(scopes)[:limit]]


def scopes_to_wake(scopes: list[ScopeLint]) -> list[ScopeWake]:
    """The scopes whose compile must run over their promotion candidates."""
    return [ScopeWake(tenant=s.tenant, owner=s.owner, mention_ids=s.promotion_mention_ids)
            for s in scopes if s.promotion_mention_ids]


def next_page(scopes: list[ScopeLint], limit: int) -> LintChecksInput | None:
    """The page after this one, or None when this page was the last."""
    if len(scopes) < limit:
        return None
    return LintChecksInput(after_tenant=scopes[-1].tenant, after_owner=scopes[-1].owner, scope_limit=limit)


def add_page(report: LintReport, scopes: list[ScopeLint], woken: list[ScopeWake]) -> None:
    """Count one page of scopes into the report, listing them while there is room."""
    woken_keys = {(w.tenant, w.owner) for w in woken}
    totals = report.totals
    totals.scopes += len(scopes)
    totals.promotion_compiles_started += len(woken_keys)
    for scope in scopes:
        scope.compile_started = (scope.tenant, scope.owner) in woken_keys
        for check in CHECKS:
            setattr(totals, check, getattr(totals, check) + getattr(scope, check))
        if len(report.scopes) < MAX_LISTED_SCOPES:
            report.scopes.append(scope)
        else:
            report.scopes_not_listed += 1


def failed_report(trigger: LintTrigger, started_at: datetime, error: str) -> LintReport:
    return LintReport(ok=False, trigger=trigger, started_at=started_at, error=error)


def summary_line(report: LintReport) -> str:
    """One line for the Temporal UI's current details and the CLI."""
    if not report.ok:
        return f"lint failed: {report.error}"
    totals = report.totals
    findings = [f"{getattr(totals, c)} {_CHECK_LABELS[c]}" for c in CHECKS if getattr(totals, c)]
    # `totals.scopes` counts the scopes with a finding: the scopes checked are counted by the reader.
    found = f"{', '.join(findings)} in {totals.scopes} scope(s)" if findings else "no findings"
    return (f"lint: {found}; {totals.promotion_compiles_started} compile(s) started "
            f"for promotions; {totals.ledger_rows_pruned} ledger row(s) pruned")


def check_label(check: LintCheck) -> str:
    return _CHECK_LABELS[check]


def ledger_metrics(report: LintReport) -> dict[str, int | bool]:
    return {"ok": report.ok, **report.totals.model_dump()}
