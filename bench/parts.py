"""The parts of the bench: what each measures, the figures it puts at the top of bench/results.json,
its rows of the page's summary and its section of the page.

`python -m bench [part ...]` measures the named parts (every part when none is named), in this
order, each recorded with its own run (bench/provenance.py); bench/page.py writes the whole page from
bench/results.json, whichever parts were measured last.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bench import (
    bootstrap_report,
    cli_startup,
    cost_report,
    fairness_report,
    forget_cost,
    local_model,
    many_scopes_report,
    overhead_report,
    prompt_report,
    reads_report,
    realistic_report,
    recall_report,
    server_load_report,
    web_report,
)
from bench.bootstrap import measure_bootstrap
from bench.candidates import measure_candidates
from bench.cost_realistic import (
    measure_cost_part,
    measure_growth_part,
    measure_overlap_part,
    measure_realistic_part,
)
from bench.fairness import measure_fairness
from bench.formatting import SummaryRow
from bench.many_scopes import measure_many_scopes
from bench.overhead import measure_overhead
from bench.prompt_size import measure_prompt
from bench.reads import measure_reads
from bench.recall import measure_recall
from bench.server_load import measure_server_load
from bench.services import Services
from bench.web import measure_web


@dataclass(frozen=True)
class Part:
    name: str
    title: str
    measure: Callable[[Services, int], Awaitable[dict]]  # (services, BENCH_REPEATS) -> the part's detail
    headline: Callable[[dict], dict[str, Any]]  # the detail's figures kept at the top of results.json
    rows: Callable[[dict], list[SummaryRow]]  # its rows of the page's summary
    section: Callable[[dict], list[str]]  # its section of the page, under its title
    repeated: bool = False  # whether BENCH_REPEATS applies (else one run: counts, or its own repetitions)


PARTS: tuple[Part, ...] = (
    Part("overhead", "Orchestration overhead (700-memory sample)", measure_overhead,
         overhead_report.headline, overhead_report.rows, overhead_report.section, repeated=True),
    Part("prompt", "Planner prompt size as the scope grows", measure_prompt,
         prompt_report.headline, prompt_report.rows, prompt_report.section),
    Part("many_scopes", "Many scopes sharing one model quota", measure_many_scopes,
         many_scopes_report.headline, many_scopes_report.rows, many_scopes_report.section, repeated=True),
    Part("cost", "Cost per memory (700-memory sample)", measure_cost_part,
         cost_report.cost_headline, cost_report.cost_rows, cost_report.cost_section),
    Part("realistic", "Wall time at a realistic model speed (700-memory sample)", measure_realistic_part,
         realistic_report.realistic_headline, realistic_report.realistic_rows, realistic_report.realistic_section),
    Part("local", "A local model: the 700-memory sample through an OpenAI-compatible server (the fake)",
         local_model.measure_local, local_model.headline, local_model.rows, local_model.section),
    Part("overlap", "Overlap: the next batch planned during the section writes", measure_overlap_part,
         lambda detail: {}, realistic_report.overlap_rows, realistic_report.overlap_section),
    Part("growth", "Cost growth as one scope ages", measure_growth_part,
         cost_report.growth_headline, cost_report.growth_rows, cost_report.growth_section),
    Part("candidates", "Candidate pages sent against merges missed", measure_candidates,
         lambda detail: {}, cost_report.candidates_rows, cost_report.candidates_section),
    Part("reads", "Reads over HTTP", measure_reads, reads_report.headline, reads_report.rows, reads_report.section),
    Part("recall", "Recall on a 10,000-memory scope", measure_recall, recall_report.headline, recall_report.rows,
         recall_report.section),
    Part("cli_startup", "The `wiki` command's start-up", cli_startup.measure_cli_startup,
         cli_startup.headline, cli_startup.rows, cli_startup.section, repeated=True),
    Part("server_load", "The agent-facing server under load (mixed reads and retains, 20 tokens)", measure_server_load,
         server_load_report.headline, server_load_report.rows, server_load_report.section),
    Part("forget", "Forgetting a memory: the cost of its re-derivation", forget_cost.measure_forget,
         forget_cost.headline, forget_cost.rows, forget_cost.section),
    Part("fairness", "Many tenants, one model quota: priority and fairness", measure_fairness,
         fairness_report.headline, fairness_report.rows, fairness_report.section),
    Part("web", "The web view (every view on a 10,000-page scope; every page of the 700-memory sample)", measure_web,
         web_report.headline, web_report.rows, web_report.section),
    Part("bootstrap", "Importing 10,000 memories in one compile", measure_bootstrap,
         bootstrap_report.headline, bootstrap_report.rows, bootstrap_report.section),
)
BY_NAME = {part.name: part for part in PARTS}


def headlines(detail: dict[str, dict]) -> dict[str, Any]:
    """The top-level figures of results.json: every measured part's, in the parts' order."""
    top: dict[str, Any] = {}
    for part in PARTS:
        if part.name in detail:
            top.update(part.headline(detail[part.name]))
    return top


def with_part(results: dict, name: str, part_detail: dict) -> dict:
    """`results` with one part's detail replaced and the top-level figures recomputed from every part's."""
    detail = {part.name: (part_detail if part.name == name else results.get("detail", {}).get(part.name))
              for part in PARTS}
    detail = {part_name: value for part_name, value in detail.items() if value is not None}
    return {**headlines(detail), "detail": detail}
