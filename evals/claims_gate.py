"""The verification gate measured: a corpus compiled through the SDK and the Claude simulator while
the simulator lies (`ungrounded_claims`), and again while it does not.

    python -m evals.claims_gate [--size N] [--seed S] [--lie F]

For each run: how many lines the simulator made ungrounded and how many of those the gate blocked
(`blocked_share`, goal at least 0.99 at F = 0.1); how many lines the plans proposed and how many the
gate rejected (`rejected_share`; at F = 0 every rejection is an honest line lost, goal at most 0.01);
and whether every served fact claim's names and numbers are in the memories it cites, and every
claim cites a memory of its own scope.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import uuid
from typing import Any

from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client

from app.worker import build_model_client, build_worker
from claude_sim import ClaudeSimulator, SimConfig
from domain.evidence import evidence_of
from domain.grounding import APPLY_RULE, ungrounded
from domain.memory import MemoryIn
from domain.pricing import TokenUsage, cost_usd
from evals.corpus import generate
from evals.run import private_services
from planners.compact_plan import CompactPlan
from runtime.settings import Settings
from runtime.temporal_client import signal_compile
from store.memories import store_memories

log = logging.getLogger("evals.claims_gate")
SIM_KEY = "sim-anthropic-key"


class GateRun(BaseModel):
    lie: float
    memories: int
    proposed_lines: int
    injected_lines: int
    blocked_injected: int
    rejected_lines: int
    served_claims: int
    served_ungrounded: int  # fact claims with a name or number none of their memories holds
    claims_citing_outside_scope: int
    cost_usd_per_1000_memories: float = 0.0  # every model call, as the simulator billed it
    judge_cost_usd_per_1000_memories: float = 0.0  # of which the claim judge's calls
    rejected_examples: list[str] = []

    @property
    def blocked_share(self) -> float | None:
        return self.blocked_injected / self.injected_lines if self.injected_lines else None

    @property
    def rejected_share(self) -> float:
        return self.rejected_lines / self.proposed_lines if self.proposed_lines else 0.0

    def summary(self) -> dict[str, Any]:
        return {**self.model_dump(), "blocked_share": self.blocked_share, "rejected_share": round(self.rejected_share, 4)}


def _proposed_lines(sim: ClaudeSimulator) -> int:
    count = 0
    for call in sim.of_kind("planner"):
        try:
            plan = CompactPlan.model_validate(json.loads(call.reply_text))
        except ValueError:
            continue
        sections = [s for u in plan.updates for s in u.sections] + [s for p in plan.new_pages for s in p.sections]
        sections += [s for p in plan.promotions for s in p.sections]
        count += sum(1 for s in sections for line in s.lines if line.strip())
    return count


async def served_claim_check(engine: AsyncEngine, tenant: str, owner: str) -> tuple[int, int, int]:
    """(served claims, fact claims with an unsupported term, claims citing no memory of the scope)."""
    async with engine.connect() as conn:
        rows = (await conn.execute(text("""
            SELECT c.id, c.text, c.kind, p.title,
                   coalesce(array_agg(cs.memory_id) FILTER (WHERE cs.memory_id IS NOT NULL), '{}') AS refs
            FROM wiki_section_claims c JOIN wiki_page_sections s ON s.id = c.section_id
            JOIN wiki_pages p ON p.id = s.page_id LEFT JOIN wiki_claim_sources cs ON cs.claim_id = c.id
            WHERE p.tenant_id = :t AND p.owner_id = :o AND p.status = 'active'
            GROUP BY c.id, p.title
        """), {"t": tenant, "o": owner})).all()
        memories = {row.id: row for row in (await conn.execute(text(
            "SELECT id::text AS id, content, metadata, created_at FROM memory_units WHERE tenant_id = :t AND owner_id = :o"),
            {"t": tenant, "o": owner})).all()}
    evidence = {key: evidence_of(key, m.content, m.metadata, m.created_at) for key, m in memories.items()}
    unfounded = outside = 0
    for row in rows:
        cited = [evidence[r] for r in row.refs if r in evidence]
        if not cited:
            outside += 1
        elif row.kind == "fact" and ungrounded(row.text, cited, [row.title], APPLY_RULE):
            unfounded += 1
    return len(rows), unfounded, outside


async def measure(client: Client, engine: AsyncEngine, lie: float, size: int, seed: int) -> GateRun:
    corpus = generate(seed, size, tenants=("acme",))
    tenant = corpus.tenants[0]
    tenant_id = f"gate-{uuid.uuid4().hex[:8]}"
    async with ClaudeSimulator(SimConfig(ungrounded_claims=lie)) as sim:
        settings = Settings(WIKI_LLM="anthropic", ANTHROPIC_API_KEY=SIM_KEY, WIKI_DEBOUNCE_SECONDS=0,
                            WIKI_AGGREGATION_PASS_ENABLED=False, WIKI_TASK_QUEUE=f"gate-{uuid.uuid4()}")
        before = os.environ.get("ANTHROPIC_BASE_URL")
        os.environ["ANTHROPIC_BASE_URL"] = sim.base_url  # the SDK's own setting: the product never knows
        model_client = build_model_client(settings)
        try:
            await store_memories(engine, tenant_id, tenant.owner, [MemoryIn.model_validate(m) for m in tenant.memories])
            async with build_worker(client, engine, settings, model_client=model_client):
                handle = await signal_compile(client, tenant_id, tenant.owner, trigger="admin", settings=settings)
                await handle.result()
        finally:
            await model_client.aclose()
            if before is None:
                os.environ.pop("ANTHROPIC_BASE_URL", None)
            else:
                os.environ["ANTHROPIC_BASE_URL"] = before
        async with engine.connect() as conn:
            rows = (await conn.execute(text(
                "SELECT text, reason FROM wiki_rejected_claims WHERE tenant_id = :t AND owner_id = :o ORDER BY text"),
                {"t": tenant_id, "o": tenant.owner})).all()
        rejected = [row.text for row in rows]
        served, ungrounded, outside = await served_claim_check(engine, tenant_id, tenant.owner)
        injected = list(dict.fromkeys(sim.injected_lines))
        per_thousand = 1000 / max(1, len(tenant.memories))
        billed = sum(cost_usd(call.model, TokenUsage(**call.usage.as_dict())) for call in sim.calls if call.usage)
        judged = sum(cost_usd(call.model, TokenUsage(**call.usage.as_dict()))
                     for call in sim.of_kind("claim_judge") if call.usage)
        rejected_set = set(rejected)
        return GateRun(lie=lie, memories=len(tenant.memories), proposed_lines=_proposed_lines(sim),
                       injected_lines=len(injected), blocked_injected=sum(1 for line in injected if line in rejected_set),
                       rejected_lines=len(rejected), served_claims=served, served_ungrounded=ungrounded,
                       claims_citing_outside_scope=outside,
                       cost_usd_per_1000_memories=round(billed * per_thousand, 4),
                       judge_cost_usd_per_1000_memories=round(judged * per_thousand, 4),
                       rejected_examples=[f"{row.text} -- {row.reason}" for row in rows
                                          if row.text not in set(sim.injected_lines)][:12])


async def run(size: int, seed: int, lies: list[float]) -> list[GateRun]:
    async with private_services("wiki-gate-") as (client, engine):
        return [await measure(client, engine, lie, size, seed) for lie in lies]


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    parser = argparse.ArgumentParser(prog="python -m evals.claims_gate")
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7919)
    parser.add_argument("--lie", type=float, action="append", default=None)
    args = parser.parse_args()
    for result in asyncio.run(run(args.size, args.seed, args.lie or [0.1, 0.0])):
        print(json.dumps(result.summary()))


if __name__ == "__main__":
    main()
