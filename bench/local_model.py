"""The bench part `local`: the 700-memory sample through WIKI_LLM=openai-compatible, the `openai` SDK
streaming over loopback HTTP to the fake of a local model server (openai_sim/, Ollama's profile).

`make bench PARTS="cost realistic" PROVIDER=openai-compatible` (or `python -m bench --provider
openai-compatible cost realistic`) measures this part instead of those two. Once at zero latency:
the tokens the server reported by call kind, the structured-output mode the ledger recorded, the
requests it refused as invalid (the target is none), the cost (0: no price is set for a local
server; what it would be at WIKI_LLM_PRICE_*_PER_MTOK is the tokens times that price), and whether
the wiki is the one the Anthropic path writes through the Claude simulator (the fake answers through
the simulator's brain, so every difference is the gateway's). Then at a local model's speed
(LOCAL_TTFT_SECONDS, LOCAL_OUTPUT_TOKENS_PER_SECOND: an assumed speed for a 14B model on one
consumer GPU, not a measurement of one) for the wall time.
"""

from __future__ import annotations

import uuid

from app.worker import build_model_client
from bench.formatting import SummaryRow, seconds
from bench.overhead import bench_settings, compile_sample_with, sample_memories
from bench.services import Services
from openai_sim import OpenAISimulator, SimConfig

LOCAL_MODEL = "qwen2.5:14b"
LOCAL_TTFT_SECONDS = 1.0
LOCAL_OUTPUT_TOKENS_PER_SECOND = 40.0
KINDS = ("planner", "writer", "aggregation", "judge", "claim_judge", "rederive")


async def compile_through_fake(services: Services, ttft: float = 0.0, speed: float = 0.0) -> dict:
    simulator = OpenAISimulator(SimConfig(ttft_seconds=ttft, output_tokens_per_second=speed))
    await simulator.start()
    try:
        settings = bench_settings(WIKI_LLM="openai-compatible", WIKI_OPENAI_SERVER="ollama",
                                  WIKI_OPENAI_BASE_URL=simulator.base_url, WIKI_MODEL_ID=LOCAL_MODEL)
        gateway = build_model_client(settings)
        try:
            run = await compile_sample_with(services, int(ttft * 1000), f"local{uuid.uuid4().hex[:8]}", "eric",
                                            settings, gateway, sample_memories(), "admin")
        finally:
            await gateway.aclose()
    finally:
        await simulator.stop()
    answered = [call for call in simulator.calls if call.status == 200]
    memories = int(run.ledger["records_read"])
    by_kind = {}
    for kind in KINDS:
        calls = [call for call in answered if call.kind == kind]
        if calls:
            by_kind[kind] = {"calls": len(calls), "prompt_tokens": sum(c.prompt_tokens for c in calls),
                             "completion_tokens": sum(c.completion_tokens for c in calls),
                             "tokens_per_memory": round(sum(c.prompt_tokens + c.completion_tokens
                                                            for c in calls) / memories, 1)}
    return {"memories": memories, "wall_seconds": round(run.wall_seconds, 1), "model_calls": len(answered),
            "repair_calls": sum(1 for call in answered if call.repair),
            "invalid_requests": len(simulator.invalid_requests()),
            "structured_output": sorted({call.mode for call in answered if call.mode}),
            "prompt_tokens_per_memory": round(sum(c.prompt_tokens for c in answered) / memories, 1),
            "completion_tokens_per_memory": round(sum(c.completion_tokens for c in answered) / memories, 1),
            "ledger_cost_usd": run.ledger.get("cost_usd", 0.0), "by_kind": by_kind,
            "duplicate_candidates_count": run.duplicate_candidates_count, "wiki": run.wiki_counts,
            "wiki_digest": run.wiki_digest}


async def measure_local(services: Services, repeats: int) -> dict:
    from bench.provenance import load_results

    counted = await compile_through_fake(services)
    timed = await compile_through_fake(services, LOCAL_TTFT_SECONDS, LOCAL_OUTPUT_TOKENS_PER_SECOND)
    claude = (load_results().get("detail", {}).get("cost") or {}).get("wiki_digest")
    return {"model_id": LOCAL_MODEL, "server": "ollama (the fake)", **counted,
            "same_wiki_as_claude_path": (counted["wiki_digest"] == claude) if claude else None,
            "local_speed": {"ttft_seconds": LOCAL_TTFT_SECONDS, "output_tokens_per_second": LOCAL_OUTPUT_TOKENS_PER_SECOND,
                            "wall_seconds": timed["wall_seconds"], "same_wiki": timed["wiki_digest"] == counted["wiki_digest"]}}


def headline(local: dict) -> dict:
    return {"local_invalid_requests": local["invalid_requests"],
            "local_tokens_per_memory": round(local["prompt_tokens_per_memory"] + local["completion_tokens_per_memory"], 1),
            "local_wall_700_seconds": local["local_speed"]["wall_seconds"]}


def rows(local: dict) -> list[SummaryRow]:
    same = local["same_wiki_as_claude_path"]
    return [
        SummaryRow("requests the local server refused as invalid (700-memory sample)", "local_invalid_requests",
                   str(local["invalid_requests"]), "0", local["invalid_requests"] == 0),
        SummaryRow("its wiki the same as the Claude path's (digest of sections, provenance, bodies)", "",
                   "yes" if same else "no" if same is not None else "not compared", "yes", same),
        SummaryRow(f"700-memory compile at {local['local_speed']['output_tokens_per_second']:g} tokens/s (assumed local "
                   "speed)", "local_wall_700_seconds", seconds(local["local_speed"]["wall_seconds"]), "–", None),
    ]


def section(local: dict) -> list[str]:
    kinds = ", ".join(f"{kind} {v['calls']} calls ({v['tokens_per_memory']:g} tokens a memory)"
                      for kind, v in local["by_kind"].items())
    speed = local["local_speed"]
    return [
        "The 700-memory sample compiled through `WIKI_LLM=openai-compatible`: the `openai` SDK streaming over "
        "loopback HTTP to `openai_sim/`, a fake of a local server (Ollama's profile: structured output as "
        "`response_format` json_schema). The fake answers through the Claude simulator's brain, so this measures "
        "the gateway (requests, modes, repairs, usage), never a real model's quality: docs/local-models.md says "
        "how to measure yours.",
        "",
        f"**{local['invalid_requests']} invalid requests** of {local['model_calls']} model calls "
        f"({local['repair_calls']} repair calls); structured output {', '.join(local['structured_output'])}; "
        f"{local['prompt_tokens_per_memory']:g} prompt and {local['completion_tokens_per_memory']:g} completion "
        f"tokens a memory, as the server reported them ({kinds}). Ledger cost ${local['ledger_cost_usd']:g}: no "
        "price is set for a local server.",
        "",
        f"**Same wiki as the Claude path:** {local['same_wiki_as_claude_path']} (the digests of the cost part's "
        f"compile and this one); {local['wiki'].get('active_pages', 0)} pages, "
        f"{local['duplicate_candidates_count']} duplicate candidates.",
        "",
        f"**At {speed['ttft_seconds']:g} s to the first token and {speed['output_tokens_per_second']:g} tokens/s** "
        f"(an assumed speed for a 14B model on one consumer GPU): {seconds(speed['wall_seconds'])} wall; the same "
        f"wiki as at zero latency: {speed['same_wiki']}.",
    ]
