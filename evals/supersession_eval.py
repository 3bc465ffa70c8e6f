"""`python -m evals.supersession_eval`: facts that change, measured through the real compile.

Generated lives (evals/fact_changes.py: a generator written apart from the compiler's rules, sharing
no phrasing with them) are retained and compiled the way `wiki retain` and `wiki compile` do, in two
arrival orders: `forward` (each value retained and compiled after the one it replaces) and `reverse`
(the newest first, the oldest last: the order must come from when memories happened, never from when
they were compiled). Each run is done offline (the scripted planner) and through the anthropic SDK
against the Claude simulator (which marks replacements by its own reading of the prompt,
claude_sim/supersession.py); with `--claude` and ANTHROPIC_API_KEY set, through Claude as well.

Read back for every memory: the claim that states it on its holder's page, and that claim's intervals.

- changes caught (supersession recall): of the consecutive values of one attribute, the share whose
  older line stopped holding when the newer was said;
- precision: of the eval's claims that were retired (superseded), the share that a newer value of the
  same attribute did retire;
- true facts retired: accumulating facts retired, and latest values not current (must be 0);
- re-asserted values current: chains that came back to their first value, and hold it now;
- current value right: chains whose claims shown as current (`validity` current, what `wiki page
  show` reads) are exactly the line said last;
- as-of accuracy: at every date a memory of the eval happened (and the day before it), for every
  attribute, the claims held then (the same condition `--as-of` reads use, store/claims.py
  CLAIM_HELD) are exactly the value said last by then;
- absent: lines no claim states (a planner left them out, or a section condensed them away): a
  change with a line absent is not caught; an accumulating fact absent is not read as of a date.

Writes evals/supersession_results.json and docs/SUPERSESSION_EVAL.md (use --out for the results alone).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import time
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client

from app.worker import build_model_client, build_worker
from claude_sim import ClaudeSimulator, SimConfig
from domain.aliases import normalize_alias
from domain.memory import MemoryIn
from evals.fact_changes import Chain, Lives, Statement, generate
from evals.metrics import share
from evals.run import private_services, through_simulator
from runtime.settings import Settings
from runtime.temporal_client import signal_compile
from store.claims import CLAIM_HELD
from store.memories import store_memories

log = logging.getLogger("evals.supersession")
SEEDS = (11, 7919)  # the development seed, and one never looked at while writing the rules
RESULTS_PATH = Path(__file__).with_name("supersession_results.json")
DOC_PATH = Path(__file__).resolve().parent.parent / "docs" / "SUPERSESSION_EVAL.md"


class Scores(BaseModel):
    mode: str
    order: str
    seed: int
    memories: int
    attributes: int
    changes: int
    caught: int
    retired_claims: int  # eval claims superseded at the end
    retired_rightly: int
    accumulating_retired: int
    latest_not_current: int
    reasserted: int
    reasserted_current: int
    as_of_checks: int
    as_of_right: int
    absent: int  # of the changes: a line of the pair no claim states
    absent_accumulating: int = 0  # accumulating facts no claim states (left out, or condensed away)
    accumulating: int = 0
    chains: int = 0
    current_right: int = 0  # chains whose current claims are exactly the latest value's claim
    seconds: float
    by_attribute: dict[str, list[int]] = {}  # attribute -> [caught, changes]
    examples: list[str] = []

    @property
    def recall(self) -> float:
        return share(self.caught, self.changes, 1.0)

    @property
    def precision(self) -> float:
        return share(self.retired_rightly, self.retired_claims, 1.0)

    @property
    def as_of_accuracy(self) -> float:
        return share(self.as_of_right, self.as_of_checks, 1.0)

    def summary(self) -> dict[str, Any]:
        return {**self.model_dump(), "recall": round(self.recall, 4), "precision": round(self.precision, 4),
                "as_of_accuracy": round(self.as_of_accuracy, 4)}


def _rounds(lives: Lives, order: str) -> list[list[Statement]]:
    """The memories retained at each compile: by rank within their chain (or accumulating pair)."""
    ranked: dict[int, list[Statement]] = defaultdict(list)
    groups: list[list[Statement]] = [c.statements for c in lives.chains]
    by_family: dict[tuple[str, str], list[Statement]] = defaultdict(list)
    for statement in lives.accumulating:
        by_family[(statement.holder, statement.attribute)].append(statement)
    groups += [sorted(group, key=lambda s: s.at) for group in by_family.values()]
    for group in groups:
        for rank, statement in enumerate(group if order == "forward" else list(reversed(group))):
            ranked[rank].append(statement)
    return [ranked[rank] for rank in sorted(ranked)]


def _key(line: str) -> str:
    return normalize_alias(line)


async def _claims(engine: AsyncEngine, tenant: str, owner: str) -> dict[str, list[dict[str, Any]]]:
    """memory id -> the fact claims citing it (text, validity, intervals), on active pages."""
    async with engine.connect() as conn:
        rows = (await conn.execute(text("""
            SELECT cs.memory_id, c.id, c.text, c.validity, c.valid_during, p.title
            FROM wiki_claim_sources cs JOIN wiki_section_claims c ON c.id = cs.claim_id
            JOIN wiki_page_sections s ON s.id = c.section_id JOIN wiki_pages p ON p.id = s.page_id
            WHERE p.tenant_id = :t AND p.owner_id = :o AND p.status = 'active' AND c.kind = 'fact'
        """), {"t": tenant, "o": owner})).all()
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        out[row.memory_id].append({"id": str(row.id), "text": row.text, "validity": row.validity, "page": row.title})
    return out


def _claim_of(statement: Statement, claims: dict[str, list[dict[str, Any]]]) -> dict[str, Any] | None:
    """The claim stating this memory on its holder's page: citing it, its words in the line."""
    said = _key(statement.text)
    found = [c for c in claims.get(statement.id, []) if said in _key(c["text"])
             and _key(statement.holder) == _key(c["page"])]
    return found[0] if found else None


async def _held(engine: AsyncEngine, tenant: str, owner: str, moment: datetime) -> set[str]:
    """The ids of the claims held at `moment`, by the condition every as-of read uses."""
    async with engine.connect() as conn:
        rows = await conn.execute(text(f"""
            SELECT c.id FROM wiki_section_claims c JOIN wiki_page_sections s ON s.id = c.section_id
            JOIN wiki_pages p ON p.id = s.page_id
            WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active' AND {CLAIM_HELD}
        """), {"tenant": tenant, "owner": owner, "as_of": moment, "history": False})
        return {str(row.id) for row in rows}


def _distinct(older: Statement, newer: Statement) -> bool:
    return not (older.value is not None and older.value == newer.value)


async def score(engine: AsyncEngine, lives: Lives, tenant: str, owner: str, mode: str, order: str,
                seconds: float) -> Scores:
    claims = await _claims(engine, tenant, owner)
    of = {s.id: _claim_of(s, claims) for s in lives.statements}
    changes = caught = absent = 0
    by_attribute: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    examples: list[str] = []
    moments = sorted({s.at for s in lives.statements} | {s.at - timedelta(days=1) for s in lives.statements})
    held = {moment: await _held(engine, tenant, owner, moment) for moment in moments}
    rightly: set[str] = set()
    for chain in lives.chains:
        for older, newer in zip(chain.statements, chain.statements[1:], strict=False):
            if not _distinct(older, newer):
                continue
            changes += 1
            by_attribute[chain.attribute][1] += 1
            claim, newer_claim = of[older.id], of[newer.id]
            if claim is None or newer_claim is None:
                absent += 1
                if len(examples) < 12:
                    examples.append(f"absent: {(older if claim is None else newer).text!r}")
                continue
            if claim["id"] not in held[newer.at]:
                caught += 1
                by_attribute[chain.attribute][0] += 1
                rightly.add(claim["id"])
            elif len(examples) < 12:
                examples.append(f"missed: {older.text!r} then {newer.text!r}")
    retired = {c["id"] for c in of.values() if c is not None and c["validity"] == "superseded"}
    examples += [f"retired with no newer value: {c['text']!r}" for c in of.values()
                 if c is not None and c["id"] in retired - rightly][:4]
    accumulating_retired = [s for s in lives.accumulating if of[s.id] is not None and of[s.id]["validity"] == "superseded"]
    examples += [f"retired: {s.text!r}" for s in accumulating_retired[:6]]
    latest_not_current = [c for c in lives.chains if of[c.statements[-1].id] is not None
                          and of[c.statements[-1].id]["validity"] != "current"]
    examples += [f"latest not current: {c.statements[-1].text!r}" for c in latest_not_current[:6]]
    current_right = sum(1 for c in lives.chains if _current_right(c, of))
    reasserted = [c for c in lives.chains if len(c.statements) == 3 and c.statements[2].value == c.statements[0].value]
    as_of_checks = as_of_right = absent_accumulating = 0
    for chain in lives.chains:
        for moment in moments:
            as_of_checks += 1
            as_of_right += _right_at(chain, moment, held[moment], of)
    for statement in lives.accumulating:
        claim = of[statement.id]
        if claim is None:  # never written, or condensed away: counted as absent, not as a read
            absent_accumulating += 1
            continue
        for moment in moments:
            as_of_checks += 1
            as_of_right += (claim["id"] in held[moment]) == (statement.at <= moment)
    return Scores(mode=mode, order=order, seed=lives.seed, memories=len(lives.statements),
                  attributes=len(lives.attributes), changes=changes, caught=caught, retired_claims=len(retired),
                  retired_rightly=len(retired & rightly), accumulating_retired=len(accumulating_retired),
                  latest_not_current=len(latest_not_current), reasserted=len(reasserted),
                  reasserted_current=sum(1 for c in reasserted if of[c.statements[-1].id] is not None
                                         and of[c.statements[-1].id]["validity"] == "current"),
                  as_of_checks=as_of_checks, as_of_right=as_of_right, absent=absent,
                  absent_accumulating=absent_accumulating, accumulating=len(lives.accumulating),
                  chains=len(lives.chains), current_right=current_right, seconds=round(seconds, 1),
                  by_attribute=dict(by_attribute), examples=examples)


def _current_right(chain: Chain, of: dict[str, dict[str, Any] | None]) -> bool:
    """What a page shows as current for this attribute is exactly the line said last (an ending
    included: "no longer lives in Denver" is the current line, Denver is history)."""
    latest = of[chain.statements[-1].id]
    if latest is None:
        return False
    current = {c["id"] for s in chain.statements if (c := of[s.id]) is not None and c["validity"] == "current"}
    return current == {latest["id"]}


def _right_at(chain: Chain, moment: datetime, held: set[str], of: dict[str, dict[str, Any] | None]) -> bool:
    """At `moment`, the chain's claims held are exactly the claim of the value said last by then
    (none before the first)."""
    expected = chain.holding(moment)
    if expected is not None and of[expected.id] is None:
        return False
    claim = of[expected.id] if expected is not None else None
    wanted = {claim["id"]} if claim is not None else set()
    mine = {c["id"] for s in chain.statements if (c := of[s.id]) is not None}
    return (mine & held) == wanted


@asynccontextmanager
async def _mode(mode: str) -> AsyncIterator[tuple[Settings, Any]]:
    """The worker's settings (and model client) for a mode: scripted, or the SDK against the
    simulator, or against Claude."""
    queue = f"facts-eval-{uuid.uuid4()}"
    if mode == "offline":
        yield Settings(WIKI_LLM="scripted", WIKI_DEBOUNCE_SECONDS=0, WIKI_TASK_QUEUE=queue,
                       WIKI_AGGREGATION_PASS_ENABLED=False), None
        return
    if mode == "claude":
        settings = Settings(WIKI_LLM="anthropic", WIKI_DEBOUNCE_SECONDS=0, WIKI_TASK_QUEUE=queue,
                            WIKI_AGGREGATION_PASS_ENABLED=False)
        client = build_model_client(settings)
        try:
            yield settings, client
        finally:
            await client.aclose()
        return
    # The SDK reaches the simulator through its own base-URL setting: the product never knows.
    async with ClaudeSimulator(SimConfig()) as sim, \
            through_simulator(sim.base_url, WIKI_TASK_QUEUE=queue, WIKI_AGGREGATION_PASS_ENABLED=False) as chosen:
        yield chosen


async def measure(client: Client, engine: AsyncEngine, lives: Lives, mode: str, order: str) -> Scores:
    tenant, owner = f"facts-{mode}", f"{order}-{lives.seed}"
    started = time.monotonic()
    async with _mode(mode) as (settings, model_client), build_worker(client, engine, settings,
                                                                      model_client=model_client):
        for statements in _rounds(lives, order):
            await store_memories(engine, tenant, owner, [MemoryIn.model_validate(m) for m in lives.memories(statements)])
            handle = await signal_compile(client, tenant, owner, trigger="admin", settings=settings)
            await handle.result()
    scores = await score(engine, lives, tenant, owner, mode, order, time.monotonic() - started)
    log.info("%s %s seed %d: changes caught %d/%d (%.3f), precision %.3f, accumulating retired %d, latest not "
             "current %d, re-asserted current %d/%d, as-of %.4f, absent %d, %.1f s", mode, order, lives.seed,
             scores.caught, scores.changes, scores.recall, scores.precision, scores.accumulating_retired,
             scores.latest_not_current, scores.reasserted_current, scores.reasserted, scores.as_of_accuracy,
             scores.absent, scores.seconds)
    return scores


async def run(seeds: list[int], people: int, modes: list[str]) -> list[Scores]:
    out = []
    async with private_services("wiki-facts-") as (client, engine):
        for seed in seeds:
            lives = generate(seed, people=people)
            for mode in modes:
                for order in ("forward", "reverse"):
                    out.append(await measure(client, engine, lives, mode, order))
    return out


def write_markdown(results: list[Scores], path: Path) -> None:
    lines = ["# Facts that change: the supersession eval", "",
             "Generated by `python -m evals.supersession_eval` (in `make eval`); never edited by hand. "
             "Lives from `evals/fact_changes.py` (a generator sharing no phrasing with the compiler's rules), "
             "retained and compiled in two arrival orders, read back claim by claim. See the module's docstring "
             "for what each figure counts.", "",
             "| mode | order | seed | memories | attributes | current value right | changes caught | precision | "
             "accumulating retired | accumulating absent | latest not current | re-asserted current | as-of right | "
             "absent |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r.mode} | {r.order} | {r.seed} | {r.memories} | {r.attributes} | "
                     f"{r.current_right}/{r.chains} | {r.caught}/{r.changes} ({r.recall:.3f}) | {r.precision:.3f} | "
                     f"{r.accumulating_retired}/{r.accumulating} | {r.absent_accumulating} | {r.latest_not_current} | "
                     f"{r.reasserted_current}/{r.reasserted} | {r.as_of_right}/{r.as_of_checks} "
                     f"({r.as_of_accuracy:.4f}) | {r.absent} |")
    lines += ["", "Changes caught by attribute (all runs of a mode):", "",
              "| attribute | " + " | ".join(sorted({r.mode for r in results})) + " |",
              "|---|" + "---|" * len({r.mode for r in results})]
    attributes = sorted({a for r in results for a in r.by_attribute})
    for attribute in attributes:
        cells = []
        for mode in sorted({r.mode for r in results}):
            caught = sum(r.by_attribute.get(attribute, [0, 0])[0] for r in results if r.mode == mode)
            total = sum(r.by_attribute.get(attribute, [0, 0])[1] for r in results if r.mode == mode)
            cells.append(f"{caught}/{total}")
        lines.append(f"| {attribute} | " + " | ".join(cells) + " |")
    misses = [f"- {r.mode} {r.order} {r.seed}: {e}" for r in results for e in r.examples[:4]]
    if misses:
        lines += ["", "Examples of what went wrong:", "", *misses]
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    parser = argparse.ArgumentParser(prog="python -m evals.supersession_eval")
    parser.add_argument("--seeds", default=",".join(str(s) for s in SEEDS))
    parser.add_argument("--people", type=int, default=12)
    parser.add_argument("--claude", action="store_true", help="also through Claude (needs ANTHROPIC_API_KEY)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    modes = ["offline", "simulator"]
    if args.claude:
        if not os.environ.get("ANTHROPIC_API_KEY"):
            parser.error("--claude needs ANTHROPIC_API_KEY")
        modes.append("claude")
    results = asyncio.run(run([int(s) for s in args.seeds.split(",")], args.people, modes))
    payload = json.dumps([r.summary() for r in results], indent=1, sort_keys=True) + "\n"
    if args.out is not None:
        args.out.write_text(payload)
        return
    RESULTS_PATH.write_text(payload)
    write_markdown(results, DOC_PATH)
    log.info("wrote %s and %s", RESULTS_PATH, DOC_PATH)


if __name__ == "__main__":
    main()
