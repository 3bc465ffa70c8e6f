"""`make eval` / `python -m evals`: the adversarial corpus of two seeds through the real pipeline.

Starts its own services (an embedded Postgres and a Temporal dev server in a temporary directory),
compiles, recompiles and rebuilds each seed's two tenants, compiles the same corpus again with every
memory's metadata stripped (plain sentences only), and writes evals/results.json and
docs/EVAL.md. About a minute on 2 cores.

    python -m evals [--size N] [--seeds DEV,HELD_OUT] [--out FILE]   # --out: results only, no docs
    python -m evals --model --size 100 --seeds 11 --out mine.json    # the model WIKI_LLM names

With --model the compiles use the model the environment names (WIKI_LLM, WIKI_MODEL_ID and the
rest, as a worker reads them: a local server's, docs/local-models.md) instead of the scripted planner;
the variant corpus is left out (it tests the scripted ladder), and the results go to --out only.

Then the variant generator's corpus (evals/variants.py) for each of VARIANT_SEEDS, scored per
variation family (evals/variants_eval.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import time
from pathlib import Path

from evals import report
from evals.corpus import generate, without_metadata
from evals.run import MODEL_FROM_ENVIRONMENT, evaluate, private_services
from evals.variants_eval import evaluate_variants

DEVELOPMENT_SEED = 11  # the corpus the ladder was developed against
HELD_OUT_SEED = 7919  # other names and typos, never looked at while tuning
SIZE = 400
# The variant generator's seeds (evals/variants.py): each invents its own names and compositions.
VARIANT_SEEDS = (101, 202, 303)
log = logging.getLogger("evals")


async def run(seeds: list[int], size: int, variant_seeds: tuple[int, ...] = VARIANT_SEEDS) -> dict:
    runs = []
    async with private_services() as (client, engine):
        for seed in seeds:
            started = time.monotonic()
            results = await evaluate(client, engine, generate(seed, size))
            log.info("seed %d: %.1f s", seed, time.monotonic() - started)
            for result in results:
                m = result.metrics
                log.info("  %s: %d pages, %d duplicate pairs, merge recall %s, %d wrong merges, rebuild %s",
                         m.tenant, m.pages_active, m.duplicate_pairs, m.merge_recall.value, m.wrong_merges,
                         "identical" if result.rebuild and result.rebuild.identical else "differs")
            # The same corpus as plain sentences: what the offline reader of names makes of it.
            plain = await evaluate(client, engine, without_metadata(generate(seed, size)), check_identity=False)
            for result in plain:
                m = result.metrics
                log.info("  %s (no metadata): %d pages, %d duplicate pairs, merge recall %s", m.tenant,
                         m.pages_active, m.duplicate_pairs, m.merge_recall.value)
            runs.append({"seed": seed, "tenants": [r.model_dump(mode="json") for r in results],
                         "plain_tenants": [r.model_dump(mode="json") for r in plain]})
        variants = []
        for seed in variant_seeds:
            started = time.monotonic()
            scored = await evaluate_variants(client, engine, seed)
            o = scored.overall
            log.info("variants seed %d: %.1f s, %d duplicate pages, candidate recall %s, precision %s, traps %s",
                     seed, time.monotonic() - started, scored.duplicate_pages, o.candidate_recall, o.precision,
                     scored.traps)
            variants.append(scored.model_dump(mode="json") | {"overall_figures": _figures(o),
                                                               "family_figures": {f: _figures(s) for f, s in
                                                                                  scored.families.items()}})
    return {"size": size, "development_seed": seeds[0], "held_out_seed": seeds[-1], "runs": runs,
            "variants": variants}


def _figures(score) -> dict:
    return {"surfaces_merged": score.surfaces_merged, "candidate_recall": score.candidate_recall,
            "precision": score.precision, "recall": score.recall}


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    parser = argparse.ArgumentParser(prog="python -m evals")
    parser.add_argument("--size", type=int, default=SIZE)
    parser.add_argument("--seeds", default=f"{DEVELOPMENT_SEED},{HELD_OUT_SEED}")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--model", action="store_true", help="compile with the model WIKI_LLM names, not the "
                        "scripted planner (results to --out only)")
    args = parser.parse_args()
    seeds = [int(seed) for seed in args.seeds.split(",")]
    if args.model:
        if args.out is None:
            parser.error("--model writes its results to --out FILE only (docs/EVAL.md is the scripted planner's)")
        MODEL_FROM_ENVIRONMENT["on"] = True
    results = asyncio.run(run(seeds, args.size, () if args.model else VARIANT_SEEDS))
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
        log.info("wrote %s", args.out)
        return
    report.write_results(results)
    report.write_markdown(results)
    log.info("wrote %s and %s", report.RESULTS_PATH, report.DOC_PATH)


if __name__ == "__main__":
    main()
