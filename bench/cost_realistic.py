"""Cost and wall time per memory, through the anthropic SDK and the Claude simulator (claude_sim/):
the bench parts `cost`, `realistic`, `overlap` and `growth` (bench/parts.py).

- cost: the 700-memory sample at zero latency; what the simulator billed, by call kind (planner,
  writer, aggregation), priced at the model's list prices; the prompt-cache hit rate.
- realistic: the same sample with the simulator answering at a realistic speed: time to first token
  0.6 s and 150 output tokens/s (an assumed speed for Claude Haiku 4.5; we found no
  better-documented ones). Its model critical path is, per batch, every planner call's model time
  (TTFT + output tokens / speed) plus the slowest model-calling section write of each write phase.
- overlap: the realistic measurement with overlap planning off, then on (WIKI_OVERLAP_PLANNING).
- growth: one scope fed a generated corpus a thousand memories at a time (zero latency: it measures
  tokens, not time); the cost per memory of the last thousand over that of the first, with what a
  plan was shown and why the writer was called in each (bench/growth_counts.py).
"""

from __future__ import annotations

import logging
import os
import time
import uuid

from app.worker import build_model_client, build_worker
from bench.growth_counts import plan_counts, writer_counts
from bench.history import PLAN, ChainAnalysis
from bench.overhead import bench_environment, bench_settings, compile_sample
from bench.plan_tokens import plan_token_parts
from bench.services import Services
from chaos.measure import ledger_rows
from claude_sim import ClaudeSimulator, SimConfig
from domain.memory import MemoryIn
from domain.pricing import TokenUsage, cost_usd, price_for
from planners.section_edits import SECTION_BUDGET_CHARS
from runtime.database import create_engine
from runtime.temporal_client import signal_compile
from sample.corpus import generate_sample
from store.memories import store_memories as retain

REALISTIC_TTFT_SECONDS = 0.6
REALISTIC_OUTPUT_TOKENS_PER_SECOND = 150.0
# BENCH_GROWTH_THOUSANDS: the thousand compared with the first (10 for `cost_growth_ratio_10k`; fewer on a slow machine).
GROWTH_THOUSANDS = int(os.environ.get("BENCH_GROWTH_THOUSANDS", "10"))
KINDS = ("planner", "writer", "aggregation")
log = logging.getLogger("bench.cost_realistic")


def per_1000(amount: float, memories: int) -> float:
    return amount * 1000 / memories


def _by_kind(calls, memories: int, model_id: str) -> dict:
    """Billed tokens and cost of the simulator's calls, by call kind, per memory and per call."""
    totals: dict[str, dict[str, int]] = {}
    usd: dict[str, float] = {}
    for call in calls:
        if call.usage is None:
            continue
        kind = totals.setdefault(call.kind, {"calls": 0, "input_tokens": 0, "output_tokens": 0,
                                             "cache_read_tokens": 0, "cache_write_tokens": 0,
                                             "batched_calls": 0})
        # A request answered inside a Message Batch is billed at half price.
        usd[call.kind] = usd.get(call.kind, 0.0) + cost_usd(model_id, TokenUsage(
            input_tokens=call.usage.input_tokens, output_tokens=call.usage.output_tokens,
            cache_creation_input_tokens=call.usage.cache_creation_input_tokens,
            cache_read_input_tokens=call.usage.cache_read_input_tokens), batch=bool(call.batch_id))
        kind["calls"] += 1
        kind["batched_calls"] += 1 if call.batch_id else 0
        kind["input_tokens"] += call.usage.input_tokens
        kind["output_tokens"] += call.usage.output_tokens
        kind["cache_read_tokens"] += call.usage.cache_read_input_tokens
        kind["cache_write_tokens"] += call.usage.cache_creation_input_tokens
    out = {}
    for kind, counts in sorted(totals.items()):
        calls_n = max(counts["calls"], 1)
        out[kind] = {
            **counts,
            "usd": round(usd[kind], 5),
            "usd_per_1000_memories": round(per_1000(usd[kind], memories), 4),
            "tokens_per_memory": {name.removesuffix("_tokens"): round(counts[name] / memories, 1)
                                  for name in ("input_tokens", "output_tokens", "cache_read_tokens",
                                               "cache_write_tokens")},
            "per_call": {"input_tokens": round(counts["input_tokens"] / calls_n),
                         "output_tokens": round(counts["output_tokens"] / calls_n)},
        }
    return out


def cost_summary(calls, memories: int, model_id: str) -> dict:
    kinds = _by_kind(calls, memories, model_id)
    total = sum(k["usd"] for k in kinds.values())
    prompt = sum(k["input_tokens"] + k["cache_read_tokens"] + k["cache_write_tokens"] for k in kinds.values())
    read = sum(k["cache_read_tokens"] for k in kinds.values())
    # Without caching: every prompt token priced as plain input.
    uncached = cost_usd(model_id, TokenUsage(input_tokens=prompt, output_tokens=sum(
        k["output_tokens"] for k in kinds.values())))
    return {"memories": memories, "usd_per_1000_memories_uncached": round(per_1000(uncached, memories), 4), "usd": round(total, 5), "usd_per_1000_memories": round(per_1000(total, memories), 4),
            "usd_per_memory": round(total / memories, 7), "cache_hit_rate": round(read / prompt, 4) if prompt else 0.0,
            "model_calls": sum(k["calls"] for k in kinds.values()), "by_kind": kinds}


# The leaf prompt's user-message sections (planners/leaf_prompt.py), in the order it writes them.
PROMPT_PARTS = {"## Candidate pages already in this scope": "candidate_pages",
                "## Open unresolved mentions in this scope": "open_mentions",
                "## Memory records in this batch": "memories",
                "## Mentions that crossed the promotion threshold": "promotions"}


def plain_text(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content or [] if isinstance(block, dict))


def planner_prompt_parts(calls) -> dict[str, int]:
    """Mean bytes per leaf plan of each part of its prompt (the simulator counts a token per 4 bytes)."""
    totals: dict[str, int] = {}
    plans = [call for call in calls if call.kind == "planner" and call.usage is not None]
    for call in plans:
        totals["system"] = totals.get("system", 0) + len(plain_text(call.body.get("system")).encode())
        user = "".join(plain_text(m.get("content")) for m in call.body.get("messages", []) if m.get("role") == "user")
        part = "preamble"
        for block in user.split("\n\n"):
            head = block.split("\n", 1)[0]
            part = PROMPT_PARTS.get(head, part if not head.startswith("## ") else "other")
            totals[part] = totals.get(part, 0) + len(block.encode()) + 2
    return {name: round(value / len(plans)) for name, value in sorted(totals.items())} if plans else {}


async def measure_cost(services: Services, model_id: str) -> dict:
    calls: list = []
    run = await compile_sample(services, 0, calls_out=calls)
    memories = int(run.ledger["records_read"])
    batch = await measure_batch_cost(services, model_id)
    return {"model_id": model_id, "prices_usd_per_million_tokens": price_for(model_id).model_dump(exclude={"known"}),
            **cost_summary(calls, memories, model_id), "wall_seconds": round(run.wall_seconds, 1),
            "planner_prompt_bytes_per_call": planner_prompt_parts(calls),
            "planner_tokens_by_part": plan_token_parts(calls),
            "batches": run.batches, "duplicate_candidates_count": run.duplicate_candidates_count,
            "wiki": run.wiki_counts, "wiki_digest": run.wiki_digest,
            "batch_mode": {**batch, "same_wiki_as_interactive": batch.pop("wiki_digest") == run.wiki_digest}}


async def measure_batch_cost(services: Services, model_id: str) -> dict:
    """The sample as a bootstrap import: its model calls go through Message Batches (half price), all but
    the claim judge's, if any. The simulator ends a batch at once; the workflow polls it every second."""
    calls: list = []
    run = await compile_sample(services, 0, calls_out=calls, trigger="bootstrap_import",
                               WIKI_LLM_BATCH_POLL_SECONDS="1", WIKI_LLM_BATCH_WINDOW_SECONDS="0")
    memories = int(run.ledger["records_read"])
    return {**cost_summary(calls, memories, model_id), "wall_seconds": round(run.wall_seconds, 1),
            "duplicate_candidates_count": run.duplicate_candidates_count, "wiki_digest": run.wiki_digest}


def _critical_path_parts(chain: ChainAnalysis, ttft: float, speed: float) -> dict[str, float]:
    """The model critical path split into leaf plans, aggregation plans, write phases and write phases
    overlapped with the next batch's plan."""
    return {name: round(value, 1) for name, value in chain.critical_path_parts(ttft, speed).items()}


async def measure_realistic(services: Services, **env: str) -> dict:
    """The sample at the realistic speed; `env` adds settings (WIKI_… names)."""
    ttft, speed = REALISTIC_TTFT_SECONDS, REALISTIC_OUTPUT_TOKENS_PER_SECOND
    run = await compile_sample(services, int(ttft * 1000), output_tokens_per_second=speed, **env)
    critical = run.chain.model_critical_path_seconds(ttft, speed)
    plans = [a for a in run.chain.activity_runs if a.name == PLAN and a.output_tokens]
    return {
        "ttft_seconds": ttft, "output_tokens_per_second": speed,
        "wall_seconds": round(run.wall_seconds, 1),
        "model_critical_path_seconds": round(critical, 1),
        "overhead_ratio": round(run.wall_seconds / critical, 3) if critical else None,
        "critical_path_parts": _critical_path_parts(run.chain, ttft, speed),
        "batches": run.batches,
        "leaf_plan_calls": len(plans),
        "leaf_plans_ahead": sum(1 for a in plans if a.ahead),
        "leaf_plan_output_tokens_mean": round(sum(a.output_tokens for a in plans) / len(plans)) if plans else 0,
        "measured_model_activity_seconds": round(run.chain.measured_model_seconds(), 1),
        "duplicate_candidates_count": run.duplicate_candidates_count,
        "wiki_digest": run.wiki_digest,
    }


async def measure_overlap(services: Services) -> dict:
    """The realistic measurement twice, overlap planning off then on, and whether the wiki is the same."""
    off = await measure_realistic(services, WIKI_OVERLAP_PLANNING="false")
    log.info("overlap off: %.1f s wall, %.1f s model critical path", off["wall_seconds"],
             off["model_critical_path_seconds"])
    on = await measure_realistic(services, WIKI_OVERLAP_PLANNING="true")
    log.info("overlap on: %.1f s wall, %.1f s model critical path", on["wall_seconds"],
             on["model_critical_path_seconds"])
    return {"off": off, "on": on, "same_wiki": off["wiki_digest"] == on["wiki_digest"]}


async def measure_growth(services: Services, model_id: str, thousands: int = GROWTH_THOUSANDS) -> dict:
    """One scope, one database, one worker: the 1st thousand compiled and billed, the 2nd to the
    (N-1)th compiled, then the Nth thousand compiled and billed."""
    corpus = [MemoryIn.model_validate(row) for row in generate_sample(thousands * 1000)]
    steps = [(0, 1000, True)]
    if thousands > 2:
        steps.append((1000, (thousands - 1) * 1000, False))
    if thousands > 1:
        steps.append(((thousands - 1) * 1000, thousands * 1000, True))
    tenant, owner = f"growth{uuid.uuid4().hex[:8]}", "eric"
    simulator = ClaudeSimulator(SimConfig())
    await simulator.start()
    measured: list[dict] = []
    try:
        with bench_environment(ANTHROPIC_BASE_URL=simulator.base_url):
            settings = bench_settings(WIKI_LLM="anthropic", ANTHROPIC_API_KEY=next(iter(simulator.config.api_keys)))
            model_client = build_model_client(settings)
        try:
            async with services.fresh_database() as url:
                engine, worker_engine = create_engine(url), create_engine(url)
                try:
                    async with build_worker(services.client, worker_engine, settings, model_client=model_client):
                        for start, end, billed in steps:
                            mark = len(simulator.calls)
                            started = time.monotonic()
                            await retain(engine, tenant, owner, corpus[start:end])
                            handle = await signal_compile(services.client, tenant, owner, trigger="admin",
                                                          settings=settings)
                            await handle.result()
                            seconds = time.monotonic() - started
                            log.info("growth: memories %d-%d compiled in %.0f s", start + 1, end, seconds)
                            if billed:
                                calls = simulator.calls[mark:]
                                measured.append({"thousand": end // 1000, "compile_seconds": round(seconds, 1),
                                                 **cost_summary(calls, end - start, model_id),
                                                 "planner_prompt_bytes_per_call": planner_prompt_parts(calls),
                                                 "shown_per_plan": plan_counts(calls),
                                                 "writer_calls": writer_counts(calls)})
                    runs = await ledger_rows(engine, tenant, owner)
                finally:
                    await engine.dispose()
                    await worker_engine.dispose()
        finally:
            await model_client.aclose()
    finally:
        await simulator.stop()
    first, last = measured[0], measured[-1]
    return {"model_id": model_id, "thousands": thousands, "first": first, "last": last,
            "section_budget_chars": SECTION_BUDGET_CHARS,
            "ratio": round(last["usd_per_memory"] / first["usd_per_memory"], 3),
            "duplicate_candidates_count": runs[-1]["metrics"].get("duplicate_candidates_count", 0) if runs else 0}


async def measure_cost_part(services: Services, repeats: int) -> dict:
    """The cost part (a single run: the cost is a count, not a timing)."""
    return await measure_cost(services, bench_settings().model_id)


async def measure_realistic_part(services: Services, repeats: int) -> dict:
    return await measure_realistic(services)


async def measure_overlap_part(services: Services, repeats: int) -> dict:
    return await measure_overlap(services)


async def measure_growth_part(services: Services, repeats: int) -> dict:
    return await measure_growth(services, bench_settings().model_id)
