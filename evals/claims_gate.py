"""The verification gate measured against a model that lies: corpora compiled through the anthropic SDK
and the Claude simulator while the simulator makes a share of its plan lines lies of six kinds
(claude_sim/lies.py), its claim judge reading each line against its memories (claude_sim/judge.py).

    python -m evals.claims_gate [--size N] [--seeds 3] [--lies 0.1] [--locomo-limit N]

Corpora: generated ones (evals/corpus.py, one per seed, each seed also choosing which lines lie) and
the three LoCoMo development conversations' observations (evals/locomo_data.py, read from
LOCOMO_DIR or ../shared; the eval says so and goes on without them when they are missing).

For each kind of lie: how many were told, the share blocked (rejected by the gate) or left
unverified, the share served as verified and as quoted (the target is 0 quoted), and lines not found
in the wiki at all (dropped with their plan, or folded by the writer). For honest lines: how many the
plans proposed and the share rejected. Targets at a lie share of 0.1: each kind >= 95% blocked or
left unverified, 0 served as quoted, <= 1% of honest lines rejected. Writes evals/claims_gate.json and
docs/CLAIMS_GATE.md.

The judge here is the simulator's rule-based reader, not a model: the figures say what the product's
gate does with its verdicts, and how well that reader reads; docs/claude.md says what that proves.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client

from app.worker import build_worker
from claude_sim import ClaudeSimulator, SimConfig, claim_judge_wire
from claude_sim.lies import KINDS
from claude_sim.reading import Confused
from domain.memory import MemoryIn
from domain.pricing import TokenUsage, cost_usd
from evals import locomo_data
from evals.corpus import generate
from evals.run import private_services, through_simulator
from runtime.temporal_client import signal_compile
from store.memories import store_memories

log = logging.getLogger("evals.claims_gate")
ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "evals" / "claims_gate.json"
PAGE = ROOT / "docs" / "CLAIMS_GATE.md"
OUTCOMES = ("blocked", "unverified", "verified", "quoted", "not_found")


class KindResult(BaseModel):
    told: int = 0
    outcomes: dict[str, int] = Field(default_factory=dict)
    judged: int = 0  # lies the product sent to the claim judge
    judge_said_unsupported: int = 0  # of which the judge's answer said its memories do not support it

    def share(self, *outcomes: str) -> float | None:
        found = self.told - self.outcomes.get("not_found", 0)
        return round(sum(self.outcomes.get(o, 0) for o in outcomes) / found, 4) if found else None


class GateRun(BaseModel):
    corpus: str
    lie_share: float
    memories: int
    proposed_lines: int
    honest_lines: int
    honest_rejected: int
    kinds: dict[str, KindResult]
    cost_usd_per_1000_memories: float = 0.0
    judge_cost_usd_per_1000_memories: float = 0.0
    judge_calls: int = 0
    honest_rejected_examples: list[str] = []
    lies_served_examples: list[str] = []

    @property
    def honest_rejected_share(self) -> float:
        return round(self.honest_rejected / self.honest_lines, 4) if self.honest_lines else 0.0


def _key(line: str) -> str:
    """A line as the wiki may store it: bullet, emphasis, case and spacing aside."""
    unlinked = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", line)  # a name the compiler linked to its page
    plain = re.sub(r"[*_`]+", "", re.sub(r"^\s*[-*]\s+", "", unlinked))
    return " ".join(plain.casefold().split()).rstrip(".")


def _judge_verdicts(sim: ClaudeSimulator) -> dict[str, bool]:
    """Each line the claim judge was asked about (by key) -> whether its answer said it is supported."""
    verdicts: dict[str, bool] = {}
    for call in sim.of_kind("claim_judge"):
        try:
            questions = claim_judge_wire.read_questions(_user_text(call.body))
            said = json.loads(call.reply_text)
            supported = said.get("supported") or {}
        except (Confused, ValueError, AttributeError):
            continue
        for question in questions:
            verdicts[_key(question.claim)] = bool(supported.get(question.id))
    return verdicts


def _user_text(body: dict[str, Any]) -> str:
    content = (body.get("messages") or [{}])[-1].get("content", "")
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content if isinstance(b, dict))


def _proposed(sim: ClaudeSimulator) -> list[str]:
    lines: list[str] = []
    for call in sim.of_kind("planner"):
        try:
            reply = json.loads(call.reply_text)
        except ValueError:
            continue
        for key in ("updates", "new_pages", "promotions"):
            for page in reply.get(key) or []:
                for section in page.get("sections") or []:
                    body = section[1] if isinstance(section, list) and len(section) > 1 else \
                        section.get("lines", []) if isinstance(section, dict) else []
                    lines += [line for line in body if isinstance(line, str) and line.strip()
                              and not line.startswith("=")]
    return lines


async def _outcomes(engine: AsyncEngine, tenant: str, owner: str) -> tuple[dict[str, str], dict[str, str]]:
    """Each served claim's key -> its status, and each rejected line's text -> why it was rejected."""
    async with engine.connect() as conn:
        served = (await conn.execute(text(
            "SELECT c.text, c.status FROM wiki_section_claims c JOIN wiki_page_sections s ON s.id = c.section_id "
            "JOIN wiki_pages p ON p.id = s.page_id WHERE p.tenant_id = :t AND p.owner_id = :o AND p.status = 'active'"),
            {"t": tenant, "o": owner})).all()
        rejected = (await conn.execute(text(
            "SELECT text, stage, reason FROM wiki_rejected_claims WHERE tenant_id = :t AND owner_id = :o"),
            {"t": tenant, "o": owner})).all()
    return ({_key(row.text): row.status for row in served},
            {row.text: f"{row.stage}: {row.reason}" for row in rejected})


async def measure(client: Client, engine: AsyncEngine, corpus: str, memories: list[MemoryIn], owner: str,
                  lie_share: float, seed: int) -> GateRun:
    tenant = f"gate-{uuid.uuid4().hex[:8]}"
    async with ClaudeSimulator(SimConfig(lies=lie_share, lie_seed=seed)) as sim:
        # The SDK reaches the simulator through its own base-URL setting: the product never knows.
        async with through_simulator(sim.base_url, WIKI_AGGREGATION_PASS_ENABLED=False,
                                     WIKI_TASK_QUEUE=f"gate-{uuid.uuid4()}") as (settings, model_client):
            await store_memories(engine, tenant, owner, memories)
            async with build_worker(client, engine, settings, model_client=model_client):
                handle = await signal_compile(client, tenant, owner, trigger="admin", settings=settings)
                await handle.result()
        served, rejected = await _outcomes(engine, tenant, owner)
        rejected_keys = {_key(line) for line in rejected}
        kinds = {kind: KindResult() for kind in KINDS}
        lie_keys: set[str] = set()
        served_lies: list[str] = []
        verdicts = _judge_verdicts(sim)
        for lie in sim.lies:
            key = _key(lie.line)
            lie_keys.add(key)
            result = kinds[lie.kind]
            result.told += 1
            if key in verdicts:
                result.judged += 1
                result.judge_said_unsupported += 0 if verdicts[key] else 1
            outcome = "blocked" if key in rejected_keys else served.get(key, "not_found")
            result.outcomes[outcome] = result.outcomes.get(outcome, 0) + 1
            if outcome in ("verified", "quoted"):
                served_lies.append(f"[{lie.kind}] {lie.line}")
        proposed = _proposed(sim)
        honest = [line for line in proposed if _key(line) not in lie_keys]
        honest_rejected = [f"{line} ({why})" for line, why in rejected.items() if _key(line) not in lie_keys]
        per_thousand = 1000 / max(1, len(memories))
        billed = sum(cost_usd(c.model, TokenUsage(**c.usage.as_dict())) for c in sim.calls if c.usage)
        judged = sum(cost_usd(c.model, TokenUsage(**c.usage.as_dict())) for c in sim.of_kind("claim_judge") if c.usage)
        return GateRun(corpus=corpus, lie_share=lie_share, memories=len(memories), proposed_lines=len(proposed),
                       honest_lines=len(honest), honest_rejected=len(honest_rejected), kinds=kinds,
                       cost_usd_per_1000_memories=round(billed * per_thousand, 4),
                       judge_cost_usd_per_1000_memories=round(judged * per_thousand, 4),
                       judge_calls=len(sim.of_kind("claim_judge")),
                       honest_rejected_examples=honest_rejected[:10], lies_served_examples=served_lies[:10])


def corpora(size: int, seeds: list[int], locomo_limit: int | None) -> tuple[list[tuple[str, list[MemoryIn], str, int]],
                                                                            str]:
    out = []
    for seed in seeds:
        tenant = generate(seed, size, tenants=("acme",)).tenants[0]
        out.append((f"generated seed {seed}", [MemoryIn.model_validate(m) for m in tenant.memories], tenant.owner, seed))
    try:
        conversations = locomo_data.load()
    except locomo_data.LocomoMissing as missing:
        return out, f"LoCoMo dev conversations not measured: {missing}"
    for n, conversation in enumerate(conversations):
        memories = [MemoryIn(content=m.content, occurred_at=m.occurred_at.isoformat())
                    for m in conversation.memories["observations"]][:locomo_limit]
        out.append((f"LoCoMo {conversation.sample_id} observations", memories, "speaker", 100 + n))
    return out, ""


def totals(runs: list[GateRun]) -> dict[str, Any]:
    kinds: dict[str, KindResult] = {kind: KindResult() for kind in KINDS}
    for run in runs:
        for kind, result in run.kinds.items():
            kinds[kind].told += result.told
            kinds[kind].judged += result.judged
            kinds[kind].judge_said_unsupported += result.judge_said_unsupported
            for outcome, count in result.outcomes.items():
                kinds[kind].outcomes[outcome] = kinds[kind].outcomes.get(outcome, 0) + count
    honest = sum(r.honest_lines for r in runs)
    return {"kinds": {kind: {"told": r.told, "outcomes": r.outcomes, "judged": r.judged,
                             "judge_said_unsupported": r.judge_said_unsupported,
                             "blocked_or_unverified": r.share("blocked", "unverified"),
                             "served_verified": r.share("verified"), "served_quoted": r.share("quoted")}
                      for kind, r in kinds.items()},
            "honest_lines": honest, "honest_rejected": sum(r.honest_rejected for r in runs),
            "honest_rejected_share": round(sum(r.honest_rejected for r in runs) / honest, 4) if honest else 0.0}


def page(runs: list[GateRun], summary: dict[str, Any], note: str) -> str:
    rows = ["| kind of lie | told | blocked | left unverified | served verified | served quoted | not in the wiki |"
            " blocked or unverified | sent to the judge | the judge said unsupported |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for kind, result in summary["kinds"].items():
        o = Counter(result["outcomes"])
        rows.append(f"| {kind} | {result['told']} | {o['blocked']} | {o['unverified']} | {o['verified']} | "
                    f"{o['quoted']} | {o['not_found']} | {result['blocked_or_unverified']} | {result['judged']} | "
                    f"{result['judge_said_unsupported']} |")
    per_run = ["| corpus | memories | lie share | proposed lines | honest lines rejected | judge calls | "
               "cost per 1,000 memories (judge) |", "|---|---|---|---|---|---|---|"]
    per_run += [f"| {r.corpus} | {r.memories} | {r.lie_share} | {r.proposed_lines} | {r.honest_rejected} of "
                f"{r.honest_lines} ({r.honest_rejected_share:.2%}) | {r.judge_calls} | "
                f"${r.cost_usd_per_1000_memories:.3f} (${r.judge_cost_usd_per_1000_memories:.3f}) |" for r in runs]
    examples = [f"- {line}" for r in runs for line in r.lies_served_examples[:3]] or ["- none"]
    honest = [f"- {line}" for r in runs for line in r.honest_rejected_examples[:3]] or ["- none"]
    return "\n".join([
        "# The verification gate against a lying model (generated by `python -m evals.claims_gate`)", "",
        "Corpora compiled through the anthropic SDK and the Claude simulator, which makes a share of its leaf "
        "plans' lines lies of six kinds (claude_sim/lies.py) and judges claims with a rule-based reader "
        "(claude_sim/judge.py; what that proves: docs/claude.md). A lie is *blocked* when the gate rejected it, "
        "*left unverified* when it is served marked unverified; *not in the wiki* when its plan or section never "
        "kept it (not counted in the shares). Targets at a lie share of 0.1: each kind >= 95% blocked or left "
        "unverified, 0 served as quoted, <= 1% of honest lines rejected.", "",
        *([f"_{note}_", ""] if note else []),
        *rows, "",
        f"Honest lines rejected: {summary['honest_rejected']} of {summary['honest_lines']} "
        f"({summary['honest_rejected_share']:.2%}).", "",
        *per_run, "", "Lies served as verified or quoted (first examples):", *examples, "",
        "Honest lines rejected (first examples):", *honest, ""])


async def run(size: int, seeds: list[int], lie_share: float, locomo_limit: int | None) -> tuple[list[GateRun], str]:
    chosen, note = corpora(size, seeds, locomo_limit)
    if note:
        log.warning(note)
    async with private_services("wiki-gate-") as (client, engine):
        runs = []
        for name, memories, owner, seed in chosen:
            log.info("compiling %s (%d memories)", name, len(memories))
            runs.append(await measure(client, engine, name, memories, owner, lie_share, seed))
    return runs, note


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    parser = argparse.ArgumentParser(prog="python -m evals.claims_gate")
    parser.add_argument("--size", type=int, default=200, help="memories per generated corpus")
    parser.add_argument("--seeds", type=int, default=3, help="generated corpora (seeds 7919, 7920, ...)")
    parser.add_argument("--lies", type=float, default=0.1, help="share of plan lines that lie")
    parser.add_argument("--locomo-limit", type=int, default=None, help="memories per LoCoMo conversation (all)")
    args = parser.parse_args()
    runs, note = asyncio.run(run(args.size, [7919 + n for n in range(args.seeds)], args.lies, args.locomo_limit))
    summary = totals(runs)
    RESULTS.write_text(json.dumps({"summary": summary, "note": note, "runs": [r.model_dump() for r in runs]},
                                  indent=1) + "\n")
    PAGE.write_text(page(runs, summary, note))
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
