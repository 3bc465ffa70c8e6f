"""The aggregation part: what the pass above the leaf pages builds on the 3,000-memory sample.

The sample compiled at zero latency twice: with the scripted planners in-process (WIKI_LLM=scripted,
as the demo and the tests run), and through the anthropic SDK and the Claude simulator (which
answers as the scripted planners do, from the requests the Claude planner sends). Each time the wiki
is read: hub pages, rollup sections by promotion status, and the pages promoted out of a rollup
section. The promotion rule itself is proven by tests/compile/test_aggregation.py on a corpus built
for it; this says how often it fires on a realistic mix of memories, on each path.
"""

from __future__ import annotations

import uuid

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from bench.formatting import SummaryRow, seconds
from bench.overhead import SampleCompile, _compile_sample, bench_settings, compile_sample
from bench.services import Services
from domain.memory import MemoryIn
from sample.corpus import generate_sample

SAMPLE_SIZE = 3_000


async def read_aggregation(engine: AsyncEngine, tenant: str, owner: str) -> dict:
    """Hubs, rollup sections by promotion status, and each promoted section with its page."""
    scope = {"t": tenant, "o": owner}
    async with engine.connect() as conn:
        statuses = dict((await conn.execute(text("""
            SELECT s.aggregation->>'promotion_status', count(*) FROM wiki_page_sections s
            JOIN wiki_pages p ON p.id = s.page_id
            WHERE p.tenant_id = :t AND p.owner_id = :o AND p.status = 'active'
              AND jsonb_array_length(coalesce(s.aggregation->'linked_page_ids', '[]'::jsonb)) > 0
            GROUP BY 1 ORDER BY 1"""), scope)).all())
        hubs = (await conn.execute(text("""
            SELECT count(DISTINCT p.id) FROM wiki_pages p JOIN wiki_page_sections s ON s.page_id = p.id
            WHERE p.tenant_id = :t AND p.owner_id = :o AND p.status = 'active'
              AND jsonb_array_length(coalesce(s.aggregation->'linked_page_ids', '[]'::jsonb)) > 0"""),
            scope)).scalar_one()
        promoted = (await conn.execute(text("""
            SELECT parent.title AS parent, s.heading, child.title AS page,
                   jsonb_array_length(s.aggregation->'linked_page_ids') AS linked,
                   (s.aggregation->>'supporting_record_count')::int AS supporting
            FROM wiki_page_sections s JOIN wiki_pages parent ON parent.id = s.page_id
            JOIN wiki_pages child ON child.id = CAST(s.aggregation->>'promoted_page_id' AS uuid)
            WHERE parent.tenant_id = :t AND parent.owner_id = :o AND s.aggregation->>'promotion_status' = 'promoted'
            ORDER BY parent.title, s.heading"""), scope)).all()
    return {"hub_pages": hubs, "rollup_sections_by_status": statuses,
            "promoted": [dict(row._mapping) for row in promoted]}


PATHS = {"scripted": "scripted planners in-process", "sdk": "through the SDK and the simulator"}


def _summary(run: SampleCompile) -> dict:
    return {"wall_seconds": round(run.wall_seconds, 1), "batches": run.batches, "workflow_runs": run.chain.runs,
            "wiki": run.wiki_counts, "aggregation_planner_calls": run.ledger["aggregation_planner_calls"],
            "parent_sections_updated": run.ledger["parent_sections_updated"],
            "sections_promoted": run.ledger["sections_promoted"], **run.wiki_read}


async def measure_aggregation(services: Services, repeats: int) -> dict:
    """One compile of the sample on each path (`repeats` does not apply: the figures are counts)."""
    memories = [MemoryIn.model_validate(row) for row in generate_sample(SAMPLE_SIZE)]
    scripted = await _compile_sample(services, 0, f"agg{uuid.uuid4().hex[:8]}", "eric", bench_settings(), None,
                                     memories, read_wiki=read_aggregation)
    sdk = await compile_sample(services, 0, memories=memories, read_wiki=read_aggregation)
    return {"memories": SAMPLE_SIZE, "paths": {"scripted": _summary(scripted), "sdk": _summary(sdk)}}


def headline(detail: dict) -> dict:
    return {"sections_promoted_3000": len(detail["paths"]["sdk"]["promoted"])}


def rows(detail: dict) -> list[SummaryRow]:
    return [SummaryRow(f"rollup sections promoted to pages of their own, {detail['memories']:,}-memory sample, "
                       f"{label}", "sections_promoted_3000" if path == "sdk" else None,
                       str(len(detail["paths"][path]["promoted"])), "≥ 1", len(detail["paths"][path]["promoted"]) >= 1)
            for path, label in PATHS.items()]


def section(detail: dict) -> list[str]:
    lines = [
        "How much of the layer above the leaf pages (hubs, rollup sections, promotions) the "
        f"{detail['memories']:,}-memory sample grows.",
        "",
        "**How.** The sample (`sample/corpus.py`, seed 7) compiled at zero latency in one scope, twice: with the "
        "scripted planners in-process (`WIKI_LLM=scripted`, as the demo and the tests run), and through the "
        "anthropic SDK to the Claude simulator, which answers as the scripted planners do "
        "(`planners/scripted_aggregation.py` for the aggregation pass) but only from what the Claude planner's "
        "request contains; then the wiki read (`bench/aggregation.py`).",
        "",
        "| | " + " | ".join(PATHS.values()) + " |",
        "|---|---|---|",
    ]
    runs = [detail["paths"][path] for path in PATHS]
    table = [
        ("pages", lambda r: f"{r['wiki']['active_pages']:,}"),
        ("compile (batches, workflow runs)", lambda r: f"{seconds(r['wall_seconds'])} ({r['batches']}, "
                                                      f"{r['workflow_runs']})"),
        ("aggregation passes / rollup sections written",
         lambda r: f"{r['aggregation_planner_calls']:g} / {r['parent_sections_updated']:g}"),
        ("hub pages with rollup sections", lambda r: str(r["hub_pages"])),
        ("rollup sections by promotion status",
         lambda r: ", ".join(f"{count} {status}" for status, count in r["rollup_sections_by_status"].items()) or "none"),
        ("sections promoted", lambda r: str(len(r["promoted"]))),
    ]
    lines += [f"| {label} | " + " | ".join(render(run) for run in runs) + " |" for label, render in table]
    for path, label in PATHS.items():
        promoted = detail["paths"][path]["promoted"]
        if promoted:
            lines += ["", f"Promoted, {label}:", "", "| parent page | section | promoted to | linked pages | "
                      "supporting memories |", "|---|---|---|---|---|"]
            lines += [f"| {row['parent']} | {row['heading']} | {row['page']} | {row['linked']} | {row['supporting']} |"
                      for row in promoted]
    return lines
