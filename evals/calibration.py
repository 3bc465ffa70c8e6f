"""Calibration of claim confidence: on lines known true and lines with injected lies, the share of
each at every confidence level.

    python -m evals.calibration [--lie F] [--conversations N]

Reads the LoCoMo development conversations (evals/locomo_data.py: LOCOMO_DIR, else
../shared/data/locomo-dev beside the repository; never copied into the repository) as observation
memories, one scope per conversation, and compiles each twice on private services:

- offline (the scripted planner: no model, no judge);
- through the anthropic SDK and the Claude simulator (claude_sim) while it lies: a share F of the
  lines its plans propose carry a lie (`SimConfig(lies=F)`, six kinds of lie taking turns; the simulator records each),
  with the claim judge on.

Every line a plan proposed ends at one level: `rejected` (kept out by the gate), `derived` or
`unverified` (served with no confidence), or served with a confidence (0.70, 0.80, ...). A line is a
lie when the simulator injected it, else it is known true (the simulator writes the other lines
from the memories' own text, as the scripted planner would). For each level the report gives how
many true lines and how many lies ended there, each as a share of its kind, and the share of lies
among the lines at that level. A calibrated confidence puts no lie at any level with a number.
When the data folder is missing the eval says so and writes nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client

from app.worker import build_worker
from claude_sim import ClaudeSimulator, SimConfig
from domain.claim_text import claim_key
from domain.claims import DERIVED, UNVERIFIED
from domain.markup import safe_markdown
from domain.memory import MemoryIn
from evals.locomo_data import Conversation, LocomoMissing, load
from evals.run import private_services, publish, through_simulator
from runtime.settings import Settings
from runtime.temporal_client import signal_compile
from store.memories import store_memories

log = logging.getLogger("evals.calibration")
REJECTED = "rejected"
ROOT = Path(__file__).resolve().parent.parent


def level_of(status: str, confidence: float | None) -> str:
    """The level a served line sits at: its confidence, else its status (derived, unverified)."""
    return f"{confidence:.2f}" if confidence is not None else status


def _order(level: str) -> tuple[int, str]:
    fixed = {REJECTED: 0, DERIVED: 1, UNVERIFIED: 2}
    return (fixed.get(level, 3), level)


async def _levels(engine: AsyncEngine, tenant: str, owner: str) -> tuple[dict[str, str], set[str]]:
    """Every served line's level by claim key, and the keys of the lines the gate rejected."""
    async with engine.connect() as conn:
        served = (await conn.execute(text("""
            SELECT c.text, c.status, c.confidence FROM wiki_section_claims c
            JOIN wiki_page_sections s ON s.id = c.section_id JOIN wiki_pages p ON p.id = s.page_id
            WHERE p.tenant_id = :t AND p.owner_id = :o AND p.status = 'active'
        """), {"t": tenant, "o": owner})).all()
        rejected = (await conn.execute(text(
            "SELECT text FROM wiki_rejected_claims WHERE tenant_id = :t AND owner_id = :o"),
            {"t": tenant, "o": owner})).scalars().all()
    levels = {claim_key(row.text): level_of(row.status, None if row.confidence is None else float(row.confidence))
              for row in served}
    return levels, {claim_key(line) for line in rejected}


async def _compile(client: Client, engine: AsyncEngine, conversation: Conversation, settings: Settings,
                   model_client: Any = None) -> tuple[str, str]:
    tenant, owner = f"cal-{uuid.uuid4().hex[:8]}", conversation.sample_id
    memories = [MemoryIn(id=m.id, content=m.content, occurred_at=m.occurred_at)
                for m in conversation.memories["observations"]]
    await store_memories(engine, tenant, owner, memories)
    async with build_worker(client, engine, settings, model_client=model_client):
        handle = await signal_compile(client, tenant, owner, trigger="admin", settings=settings)
        await handle.result()
    return tenant, owner


def _tally(levels: dict[str, str], rejected: set[str], injected: list[str]) -> dict[str, Counter]:
    """How many true lines and lies ended at each level. A lie is found under its key as the simulator
    wrote it or as apply stored it (made safe); one neither served nor recorded went with its section
    when the gate emptied it."""
    lie_keys: set[str] = set()
    lied: Counter = Counter()
    for line in dict.fromkeys(injected):
        keys = {claim_key(line), claim_key(safe_markdown(line))}
        lie_keys |= keys
        served = [levels[k] for k in keys if k in levels]
        lied[served[0] if served else REJECTED] += 1
    true: Counter = Counter(level for key, level in levels.items() if key not in lie_keys)
    true[REJECTED] += len(rejected - set(levels) - lie_keys)
    return {"true": true, "lies": lied}


def table(tally: dict[str, Counter]) -> list[dict[str, Any]]:
    true, lied = tally["true"], tally["lies"]
    rows = []
    for level in sorted(set(true) | set(lied), key=_order):
        at = true[level] + lied[level]
        rows.append({"level": level, "true": true[level], "lies": lied[level],
                     "true_share": round(true[level] / max(1, sum(true.values())), 4),
                     "lie_share": round(lied[level] / max(1, sum(lied.values())), 4),
                     "lies_among_lines_at_level": round(lied[level] / at, 4) if at else None})
    return rows


async def run(conversations: list[Conversation], lie: float) -> dict[str, Any]:
    out: dict[str, Any] = {"lie": lie, "memories": sum(len(c.memories["observations"]) for c in conversations),
                           "conversations": [c.sample_id for c in conversations]}
    offline, model = {"true": Counter(), "lies": Counter()}, {"true": Counter(), "lies": Counter()}
    async with private_services("wiki-calibration-") as (client, engine):
        scripted = Settings(WIKI_LLM="scripted", WIKI_DEBOUNCE_SECONDS=0, WIKI_AGGREGATION_PASS_ENABLED=False,
                            WIKI_TASK_QUEUE=f"cal-{uuid.uuid4()}")
        for conversation in conversations:
            tenant, owner = await _compile(client, engine, conversation, scripted)
            for kind, counts in _tally(*await _levels(engine, tenant, owner), []).items():
                offline[kind].update(counts)
            log.info("%s offline: %s", conversation.sample_id, dict(offline["true"]))
        for conversation in conversations:
            async with ClaudeSimulator(SimConfig(lies=lie)) as sim, through_simulator(
                    sim.base_url, WIKI_AGGREGATION_PASS_ENABLED=False) as (settings, model_client):
                tenant, owner = await _compile(client, engine, conversation, settings, model_client)
                for kind, counts in _tally(*await _levels(engine, tenant, owner), [told.line for told in sim.lies]).items():
                    model[kind].update(counts)
                log.info("%s through the simulator: true %s, lies %s", conversation.sample_id,
                         dict(model["true"]), dict(model["lies"]))
    out["offline"] = table(offline)
    out["simulated"] = table(model)
    return out


def markdown(result: dict[str, Any]) -> str:
    lines = ["# Calibration of claim confidence", "",
             "Generated by `python -m evals.calibration` (`make eval`); do not edit by hand.", "",
             f"LoCoMo development conversations {', '.join(result['conversations'])} as observation memories "
             f"({result['memories']} memories), each compiled offline (no judge) and through the SDK and the "
             f"Claude simulator lying in a share {result['lie']} of its plan lines, with the claim judge on. "
             "A level is a served line's confidence, or `derived` / `unverified` (served with none), or "
             "`rejected` (kept out by the gate).", ""]
    for name, title in (("offline", "Offline (scripted planner, no judge)"),
                        ("simulated", "Through the SDK and the simulator, lying")):
        lines += [f"## {title}", "", "| level | true lines | share of true | lies | share of lies | lies among lines at level |",
                  "|---|---|---|---|---|---|"]
        for row in result[name]:
            among = "–" if row["lies_among_lines_at_level"] is None else f"{row['lies_among_lines_at_level']:.1%}"
            lines.append(f"| {row['level']} | {row['true']} | {row['true_share']:.1%} | {row['lies']} | "
                         f"{row['lie_share']:.1%} | {among} |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    parser = argparse.ArgumentParser(prog="python -m evals.calibration")
    parser.add_argument("--lie", type=float, default=0.1)
    parser.add_argument("--conversations", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None, help="write the results here only (no docs)")
    args = parser.parse_args()
    try:
        conversations = load()[:args.conversations]
    except LocomoMissing as error:
        print(f"calibration eval skipped: {error}")
        return
    result = asyncio.run(run(conversations, args.lie))
    text_out = json.dumps(result, indent=2)
    print(text_out)
    publish(result, args.out, ROOT / "evals" / "calibration_results.json", ROOT / "docs" / "CALIBRATION_EVAL.md",
            lambda stored: markdown(stored) + "\n")


if __name__ == "__main__":
    main()
