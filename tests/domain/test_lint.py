"""The lint report: per-scope merging and paging, which scopes get a compile, totals and the summary."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from domain import lint
from domain.lint import (
    CheckCount,
    LintChecks,
    LintReport,
    PageFinding,
    PromotionCandidate,
    ScopeLint,
    add_page,
    failed_report,
    ledger_metrics,
    next_page,
    scope_findings,
    scopes_to_wake,
    summary_line,
)

NOW = datetime(2026, 5, 1, 2, 0, tzinfo=UTC)
M1, M2, M3 = (uuid.UUID(int=n) for n in (1, 2, 3))


def _checks() -> LintChecks:
    return LintChecks(
        counts=[
            CheckCount(check="broken_links", tenant="t2", owner="o", count=2),
            CheckCount(check="stale_pages", tenant="t1", owner="o", count=4),
            CheckCount(check="broken_links", tenant="t1", owner="o", count=1),
            CheckCount(check="promotion_candidates", tenant="t1", owner="o", count=3),
            CheckCount(check="oversize_pages", tenant="t3", owner="o", count=0),  # nothing: no entry
        ],
        candidates=[
            PromotionCandidate(tenant="t1", owner="o", mention_id=M1),
            PromotionCandidate(tenant="t1", owner="o", mention_id=M2),
            PromotionCandidate(tenant="t1", owner="o", mention_id=M1),  # repeated: kept once
        ],
    )


def _report() -> LintReport:
    return LintReport(trigger="schedule", started_at=NOW)


def test_findings_are_merged_per_scope_in_scope_order():
    scopes = scope_findings(_checks(), limit=10)
    assert [(s.tenant, s.owner) for s in scopes] == [("t1", "o"), ("t2", "o")]
    t1, t2 = scopes
    assert (t1.broken_links, t1.stale_pages, t1.promotion_candidates) == (1, 4, 3)
    assert t1.promotion_mention_ids == [M1, M2]
    assert (t2.broken_links, t2.promotion_mention_ids) == (2, [])


def test_a_page_keeps_only_its_first_scopes_and_says_where_the_next_one_starts():
    # Each check lists its own first two scopes; together: t1, t2, t3 — t3 belongs to the next page.
    checks = LintChecks(counts=[
        CheckCount(check="stale_pages", tenant="t1", owner="o", count=1),
        CheckCount(check="stale_pages", tenant="t3", owner="o", count=1),
        CheckCount(check="broken_links", tenant="t2", owner="o", count=1),
        CheckCount(check="broken_links", tenant="t3", owner="o", count=5),
    ], candidates=[PromotionCandidate(tenant="t3", owner="o", mention_id=M3)])
    scopes = scope_findings(checks, limit=2)
    assert [s.tenant for s in scopes] == ["t1", "t2"]
    following = next_page(scopes, limit=2)
    assert (following.after_tenant, following.after_owner, following.scope_limit) == ("t2", "o", 2)
    assert next_page(scopes[:1], limit=2) is None


def test_only_scopes_with_candidates_get_a_compile():
    wakes = scopes_to_wake(scope_findings(_checks(), limit=10))
    assert [(w.tenant, w.owner, w.mention_ids) for w in wakes] == [("t1", "o", [M1, M2])]


def test_candidates_of_a_scope_without_counted_findings_still_make_an_entry():
    checks = LintChecks(candidates=[PromotionCandidate(tenant="t9", owner="o", mention_id=M3)])
    assert [w.mention_ids for w in scopes_to_wake(scope_findings(checks, limit=10))] == [[M3]]


def test_pages_add_up_in_the_totals_and_woken_scopes_are_marked():
    report = _report()
    scopes = scope_findings(_checks(), limit=10)
    add_page(report, scopes, scopes_to_wake(scopes))
    add_page(report, [ScopeLint(tenant="t4", owner="o", oversize_pages=2)], [])
    totals = report.totals
    assert (totals.scopes, totals.broken_links, totals.stale_pages, totals.promotion_candidates) == (3, 3, 4, 3)
    assert (totals.duplicate_aliases, totals.duplicate_titles, totals.oversize_pages) == (0, 0, 2)
    assert totals.promotion_compiles_started == 1
    assert [s.compile_started for s in report.scopes] == [True, False, False]
    assert report.ok and report.error is None and report.scopes_not_listed == 0


def test_the_report_lists_a_bounded_number_of_scopes_but_counts_them_all(monkeypatch):
    monkeypatch.setattr(lint, "MAX_LISTED_SCOPES", 2)
    report = _report()
    add_page(report, [ScopeLint(tenant=f"t{n}", owner="o", stale_pages=1) for n in range(5)], [])
    assert [s.tenant for s in report.scopes] == ["t0", "t1"]
    assert (report.scopes_not_listed, report.totals.scopes, report.totals.stale_pages) == (3, 5, 5)


def test_the_summary_names_only_checks_with_findings():
    report = _report()
    scopes = scope_findings(_checks(), limit=10)
    add_page(report, scopes, scopes_to_wake(scopes))
    assert summary_line(report) == ("lint: 3 broken links, 4 stale pages, 3 promotion candidates in 2 scope(s); "
                                    "1 compile(s) started for promotions; 0 ledger row(s) pruned")
    # No "in 0 scope(s)": the scopes with findings are counted only when there are findings.
    assert summary_line(_report()).startswith("lint: no findings; 0 compile(s)")


def test_a_failed_report_says_why_in_its_summary_and_metrics():
    report = failed_report("schedule", NOW, "database unavailable")
    assert summary_line(report) == "lint failed: database unavailable"
    assert ledger_metrics(report)["ok"] is False


def test_ledger_metrics_are_the_flat_totals():
    report = _report()
    add_page(report, scope_findings(_checks(), limit=10), [])
    report.totals.ledger_rows_pruned = 2
    assert ledger_metrics(report) == {
        "ok": True, "scopes": 2, "broken_links": 3, "duplicate_aliases": 0, "duplicate_titles": 0, "stale_pages": 4,
        "oversize_pages": 0, "promotion_candidates": 3, "retrying_steps": 0, "unsourced_sections": 0, "foreign_sources": 0,
        "repeated_lines": 0, "raw_html": 0, "promotion_compiles_started": 0, "ledger_rows_pruned": 2}


def test_provenance_problems_are_reported_by_page_in_their_scope():
    checks = _checks().model_copy(update={
        "counts": [*_checks().counts, CheckCount(check="unsourced_sections", tenant="t2", owner="o", count=3),
                   CheckCount(check="foreign_sources", tenant="t2", owner="o", count=1)],
        "pages": [PageFinding(tenant="t2", owner="o", page="entity/uchi", check="unsourced_sections", count=2),
                  PageFinding(tenant="t2", owner="o", page="topic/austin", check="unsourced_sections", count=1),
                  PageFinding(tenant="t2", owner="o", page="entity/uchi", check="foreign_sources", count=1)]})
    report = _report()
    scopes = scope_findings(checks, limit=10)
    add_page(report, scopes, [])

    t1, t2 = scopes
    assert t1.problem_pages == []
    assert (t2.unsourced_sections, t2.foreign_sources) == (3, 1)
    assert [(p.page, p.check, p.count) for p in t2.problem_pages] == [
        ("entity/uchi", "unsourced_sections", 2), ("topic/austin", "unsourced_sections", 1),
        ("entity/uchi", "foreign_sources", 1)]
    assert (report.totals.unsourced_sections, report.totals.foreign_sources) == (3, 1)
    assert "3 sections citing nothing, 1 citations of no memory of the scope" in summary_line(report)


def test_the_counts_a_scope_and_the_totals_share_are_one_per_check():
    assert tuple(lint.CheckCounts.model_fields) == lint.CHECKS
    assert list(lint.LintTotals.model_fields)[0] == "scopes"
    assert list(lint.ScopeLint.model_fields)[:2] == ["tenant", "owner"]
