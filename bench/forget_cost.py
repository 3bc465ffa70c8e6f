"""What forgetting one memory costs: its re-derivation, through the SDK and the Claude simulator.

A slice of the sample is compiled through the SDK against the simulator (realistic time to first
token); then memories are forgotten one at a time, each a pass of its own, chosen with a seeded
random draw among the memories some section cites along with others (so each pass calls the writer,
the case that costs anything). Per forget: the writer calls' cost (the receipt's `cost_usd`, checked
against what the simulator billed for those calls), the whole run's cost (with the aggregation pass
over the pages it changed) and the wall time from the request to the receipt.
"""

from __future__ import annotations

import random
import statistics
import time
import uuid

from sqlalchemy import text

from app.forget import forget_memories
from app.reads import ReadScope
from app.worker import build_model_client, build_worker
from bench.formatting import SummaryRow
from bench.overhead import bench_environment, bench_settings, sample_memories
from bench.services import Services
from claude_sim import ClaudeSimulator, SimConfig
from domain.pricing import TokenUsage, cost_usd
from messages.compile import compile_workflow_id
from runtime.database import create_engine
from runtime.temporal_client import signal_compile
from store.memories import store_memories

MEMORIES = 150
FORGETS = 8
SEED = 26
TTFT_SECONDS = 0.4
OUTPUT_TOKENS_PER_SECOND = 150.0


async def _shared_memories(engine, tenant: str, owner: str) -> list[str]:
    """Memories cited by some claim that cites other memories too, in id order."""
    async with engine.connect() as conn:
        rows = await conn.execute(text("""
            SELECT DISTINCT cs.memory_id FROM wiki_claim_sources cs
            WHERE cs.tenant_id = :t AND cs.owner_id = :o
              AND (SELECT count(*) FROM wiki_claim_sources other WHERE other.claim_id = cs.claim_id) > 1
            ORDER BY cs.memory_id
        """), {"t": tenant, "o": owner})
        return [row.memory_id for row in rows]


async def _receipt(engine, tenant: str, owner: str) -> dict:
    async with engine.connect() as conn:
        return (await conn.execute(text("""
            SELECT metrics FROM wiki_compile_jobs WHERE kind = 'forget' AND tenant_id = :t AND owner_id = :o
            ORDER BY started_at DESC LIMIT 1
        """), {"t": tenant, "o": owner})).scalar_one()


async def _run_cost(engine, tenant: str, owner: str, after: int) -> float:
    """The cost of the compile runs the ledger recorded after its first `after` rows."""
    async with engine.connect() as conn:
        rows = (await conn.execute(text("""
            SELECT metrics FROM wiki_compile_jobs WHERE kind = 'compile' AND tenant_id = :t AND owner_id = :o
            ORDER BY started_at, run_id
        """), {"t": tenant, "o": owner})).scalars().all()
    return round(sum(float(m.get("cost_usd", 0)) for m in rows[after:]), 6)


async def _ledger_size(engine, tenant: str, owner: str) -> int:
    async with engine.connect() as conn:
        return (await conn.execute(text("SELECT count(*) FROM wiki_compile_jobs WHERE kind = 'compile' "
                                        "AND tenant_id = :t AND owner_id = :o"), {"t": tenant, "o": owner})).scalar_one()


async def measure_forget(services: Services, repeats: int) -> dict:
    tenant, owner = f"bench{uuid.uuid4().hex[:8]}", "eric"
    simulator = ClaudeSimulator(SimConfig(ttft_seconds=TTFT_SECONDS, output_tokens_per_second=OUTPUT_TOKENS_PER_SECOND))
    await simulator.start()
    try:
        with bench_environment(ANTHROPIC_BASE_URL=simulator.base_url):
            settings = bench_settings(WIKI_LLM="anthropic", ANTHROPIC_API_KEY=next(iter(simulator.config.api_keys)))
            model_client = build_model_client(settings)
        async with services.fresh_database() as url:
            engine = create_engine(url)
            try:
                await store_memories(engine, tenant, owner, sample_memories()[:MEMORIES])
                async with build_worker(services.client, engine, settings, model_client=model_client):
                    await (await signal_compile(services.client, tenant, owner, trigger="admin",
                                                settings=settings)).result()
                    shared = await _shared_memories(engine, tenant, owner)
                    chosen = random.Random(SEED).sample(shared, min(FORGETS, len(shared)))
                    forgets = []
                    for memory_id in chosen:
                        calls_before, runs_before = len(simulator.calls), await _ledger_size(engine, tenant, owner)
                        started = time.monotonic()
                        await forget_memories(engine, ReadScope.of(tenant, owner), [memory_id], services.client,
                                              settings)
                        await services.client.get_workflow_handle(compile_workflow_id(tenant, owner)).result()
                        wall = time.monotonic() - started
                        receipt = await _receipt(engine, tenant, owner)
                        calls = [c for c in simulator.calls[calls_before:] if c.kind == "rederive"]
                        billed = sum(cost_usd(settings.model_id, TokenUsage(**c.usage.as_dict()))
                                     for c in calls if c.usage is not None)
                        forgets.append({"rederive_usd": receipt["cost_usd"], "billed_rederive_usd": round(billed, 6),
                                        "writer_calls": len(calls),
                                        "sections_rederived": len(receipt["sections_rederived"]),
                                        "claims_removed": receipt["claims_removed"],
                                        "run_usd": await _run_cost(engine, tenant, owner, runs_before),
                                        "wall_seconds": round(wall, 2)})
            finally:
                await engine.dispose()
                await model_client.aclose()
    finally:
        await simulator.stop()
    return {"memories": MEMORIES, "model_id": settings.model_id, "ttft_seconds": TTFT_SECONDS,
            "output_tokens_per_second": OUTPUT_TOKENS_PER_SECOND, "forgets": forgets,
            "forget_cost_usd": round(statistics.mean(f["rederive_usd"] for f in forgets), 6),
            "forget_run_cost_usd": round(statistics.mean(f["run_usd"] for f in forgets), 6),
            "forget_wall_seconds": round(statistics.median(f["wall_seconds"] for f in forgets), 2),
            "receipt_matches_billed": all(abs(f["rederive_usd"] - f["billed_rederive_usd"]) < 1e-6 for f in forgets)}


def headline(detail: dict) -> dict:
    return {key: detail[key] for key in ("forget_cost_usd", "forget_run_cost_usd", "forget_wall_seconds")}


def rows(detail: dict) -> list[SummaryRow]:
    return [SummaryRow("forgetting one memory (its re-derivation, through the SDK)", "forget_cost_usd",
                       f"${detail['forget_cost_usd']:.5f}", "measured", None)]


def section(detail: dict) -> list[str]:
    lines = [
        f"{detail['memories']} memories of the sample compiled through the SDK against the simulator "
        f"(model {detail['model_id']}, first token after {detail['ttft_seconds']} s, "
        f"{detail['output_tokens_per_second']:.0f} output tokens/s); then {len(detail['forgets'])} memories, each "
        "cited by some line along with others, forgotten one at a time (one pass each). The writer's cost is the "
        "receipt's, which " + ("matches" if detail["receipt_matches_billed"] else "does NOT match") +
        " what the simulator billed; the run's adds the aggregation pass over the pages the forget changed.",
        "",
        f"Mean per forget: writer ${detail['forget_cost_usd']:.5f}, whole run ${detail['forget_run_cost_usd']:.5f}; "
        f"median wall time from the request to the receipt {detail['forget_wall_seconds']:.1f} s.",
        "",
        "| writer calls | sections re-derived | claims removed | writer $ | run $ | wall s |",
        "|---|---|---|---|---|---|",
    ]
    for f in detail["forgets"]:
        lines.append(f"| {f['writer_calls']} | {f['sections_rederived']} | {f['claims_removed']} | "
                     f"{f['rederive_usd']:.5f} | {f['run_usd']:.5f} | {f['wall_seconds']:.1f} |")
    return lines
