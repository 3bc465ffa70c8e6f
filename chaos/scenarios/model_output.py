"""Scenario 5: broken model output — malformed and truncated replies, hallucinated ids, another
tenant's ids, `[[wikilinks]]`, bad link types, missing citations.

The database also holds another tenant's compiled wiki (the same sample: the same titles and
aliases, plus a page only it has). A fault worker's planner (chaos.faults.CorruptingPlanning)
answers through the product's parser:

- run 1, `garbage`: every plan carries junk the product must drop — updates of hallucinated page
  ids and of the other tenant's pages, promotions of unknown and foreign mentions, links with bad
  types, blank slugs or to pages that exist only in the other tenant, citations of the other
  tenant's memories, wikilinks — and the first answer for a batch is malformed half the time. The
  junk never changes the meaning of the good part, so the wiki must equal the reference.
- run 2, `lossy`: on top of that, some batches are truncated (split in halves), a few poison
  memories make every plan that holds them malformed (isolated by halving and skipped), and some
  plans lose their citations. The compile must finish, count all of it, and stay in its scope;
  the rows this costs against the reference are reported.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from chaos.faults import Journal, is_poison
from chaos.measure import ledger_sum
from chaos.outcome import Outcome
from chaos.suite import OWNER, TENANT, VICTIM, VICTIM_DB, Judgement, Suite
from tests.compile.helpers import wiki_snapshot


async def _poison_memories(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        ids = (await conn.execute(text("SELECT id FROM memory_units WHERE tenant_id = :t AND owner_id = :o"),
                                  {"t": TENANT, "o": OWNER})).scalars().all()
    return sum(1 for memory_id in ids if is_poison(str(memory_id)))


@dataclass
class FaultyRun:
    judged: Judgement
    events: list[dict[str, Any]]
    victim_untouched: bool
    poison_memories: int

    @property
    def model_calls(self) -> int:
        return sum(1 for event in self.events if event["kind"] == "model_call")

    @property
    def injected(self) -> Counter:
        counts: Counter = Counter()
        for event in self.events:
            if event["kind"] == "garbage":
                for key, value in event.items():
                    if key not in ("kind", "at", "pid", "memories"):
                        counts[key] += value
            elif event["kind"] in ("malformed", "truncated"):
                counts[event["kind"]] += 1
        return counts


async def _faulty_run(suite: Suite, fault: str) -> FaultyRun:
    journal = Journal(suite.root / "journals" / f"{fault}.jsonl")
    journal.path.parent.mkdir(parents=True, exist_ok=True)
    async with suite.database(fault, VICTIM_DB) as (url, engine):
        victim_before = await wiki_snapshot(engine, *VICTIM)
        settings = suite.settings(WIKI_LLM_TASK_QUEUE=f"chaos-llm-{suite.rng.getrandbits(32):08x}")
        with suite.fleet(fault, settings, url, CHAOS_FAULT=fault, CHAOS_JOURNAL=str(journal.path),
                         CHAOS_SEED=str(suite.rng.getrandbits(31))) as fleet:
            fleet.fault_worker()
            await suite.compile(settings)
        judged = await suite.judge(engine)
        victim_untouched = await wiki_snapshot(engine, *VICTIM) == victim_before
        poison = await _poison_memories(engine)
    return FaultyRun(judged, journal.events(), victim_untouched, poison)


def _describe(injected: Counter) -> str:
    return ", ".join(f"{count} {name.replace('_', ' ')}" for name, count in sorted(injected.items()) if count)


async def run(suite: Suite) -> Outcome:
    """Scenario 5: malformed, truncated and hallucinated model output, other tenants' ids."""
    outcome = Outcome(5, "Broken model output: malformed, truncated, hallucinated and foreign ids, "
                         "wikilinks, bad links, missing citations")
    started = time.monotonic()
    await suite.build_victim_seed()
    runs = {fault: await _faulty_run(suite, fault) for fault in ("garbage", "lossy")}
    passed = []
    for fault, run_ in runs.items():
        judged, injected = run_.judged, run_.injected
        dropped = ledger_sum(judged.ledger, "dropped_invalid_ids")
        counted = {key: ledger_sum(judged.ledger, key) for key in ("invalid_plans", "truncations", "batch_splits")}
        skipped = sum(len(row["metrics"].get("skipped_memories", [])) for row in judged.ledger)
        # Every bad id the resolver and apply can see: page updates, promotions, links to absent pages.
        countable = (injected["foreign_page_ids"] + injected["hallucinated_page_ids"] + injected["wrong_promotions"]
                     + injected["foreign_links"])
        outcome.note(f"{fault}: injected {_describe(injected)}; ledger counted {dropped} dropped ids, "
                     f"{counted['invalid_plans']} invalid plans, {counted['truncations']} truncations, "
                     f"{counted['batch_splits']} batch splits, {skipped} skipped memories; "
                     f"wiki vs reference: {judged.diff.describe()}; other tenant's wiki "
                     f"{'untouched' if run_.victim_untouched else 'CHANGED'}; ledger: {', '.join(judged.statuses)}")
        passed += [
            outcome.check(judged.succeeded, f"{fault}: the compile did not succeed: {judged.statuses}"),
            outcome.check(run_.victim_untouched, f"{fault}: the other tenant's wiki changed"),
            outcome.check(judged.isolated, f"{fault}: rows cross scopes: {judged.breaches}"),
            outcome.check(dropped >= countable, f"{fault}: {countable} bad ids injected, only {dropped} counted"),
            outcome.check(counted["invalid_plans"] == injected["malformed"],
                          f"{fault}: {injected['malformed']} malformed replies, {counted['invalid_plans']} counted"),
            outcome.check(counted["truncations"] == injected["truncated"],
                          f"{fault}: {injected['truncated']} truncated replies, {counted['truncations']} counted"),
        ]
        if fault == "garbage":
            passed.append(outcome.check(judged.diff.identical, "garbage: the wiki differs from the reference"))
        else:
            passed.append(outcome.check(skipped == run_.poison_memories,
                                        f"lossy: {run_.poison_memories} poison memories, {skipped} skipped"))
    garbage, lossy = runs["garbage"].judged, runs["lossy"].judged
    outcome.runs = len(runs)
    outcome.injected = "; ".join(f"{fault}: {_describe(run_.injected)}" for fault, run_ in runs.items())
    outcome.identical = (f"garbage: {'yes' if garbage.diff.identical else 'no'}; "
                         f"lossy: {'yes' if lossy.diff.identical else 'no (by design)'}")
    outcome.rows_lost = garbage.diff.lost + lossy.diff.lost
    outcome.rows_duplicated = garbage.diff.duplicated + lossy.diff.duplicated
    outcome.llm_calls_wasted = sum(run_.judged.wasted_of_journal(run_.model_calls) for run_ in runs.values())
    return outcome.conclude(passed, started,
                            "never fatal; every bad id dropped and counted; nothing written outside the scope; "
                            "garbage-only output gives the reference wiki")
