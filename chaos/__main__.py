"""`python -m chaos` (`make chaos`): run the fault suite and write docs/RELIABILITY.md.

    python -m chaos                 every scenario, the report in docs/RELIABILITY.md
    python -m chaos --only 1,4      some scenarios (the report then says which ran)
    python -m chaos --out FILE      the report elsewhere
    python -m chaos --seed N        the seed of every random choice (kill points, faults)

Exit code 0 when every scenario that ran passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import random
import shutil
import signal
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

from chaos import report
from chaos.outcome import Outcome
from chaos.scenarios import SCENARIOS
from chaos.services import Databases, TemporalServer
from chaos.suite import Reference, Suite
from runtime.devservices import EmbeddedPostgres, free_port

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "docs" / "RELIABILITY.md"
log = logging.getLogger("chaos")


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m chaos", description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated scenario numbers (default: all)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the report")
    parser.add_argument("--seed", type=int, default=20260101, help="seed of every random choice")
    parser.add_argument("--keep", action="store_true",
                        help="keep the working directory (logs, journals) even when every scenario passed")
    return parser.parse_args(argv)


def _selected(only: str | None) -> list[int]:
    if not only:
        return sorted(SCENARIOS)
    numbers = sorted({int(part) for part in only.split(",") if part.strip()})
    unknown = [n for n in numbers if n not in SCENARIOS]
    if unknown:
        raise SystemExit(f"error: no scenario {unknown}; there are {sorted(SCENARIOS)}")
    return numbers


async def _run_one(suite: Suite, number: int) -> Outcome:
    scenario = SCENARIOS[number]
    title = scenario.__doc__.splitlines()[0].removeprefix(f"Scenario {number}: ")
    started = time.monotonic()
    log.info("scenario %s: %s", number, title)
    try:
        outcome = await scenario(suite)
    except Exception as error:  # a scenario that cannot finish is reported, and the suite goes on
        outcome = Outcome(number, title)
        outcome.error = "".join(traceback.format_exception_only(error)).strip()
        outcome.outcome = f"could not complete: {outcome.error.splitlines()[0]}"
        log.error("scenario %s failed to run:\n%s", number, traceback.format_exc())
    outcome.seconds = outcome.seconds or time.monotonic() - started
    log.info("scenario %s: %s in %.0fs: %s", number, "passed" if outcome.passed else "FAILED", outcome.seconds,
             outcome.outcome)
    return outcome


async def run_suite(numbers: list[int], seed: int, root: Path) -> tuple[list[Outcome], Reference]:
    # SIGTERM/SIGINT cancel the suite, so every `finally` runs: workers killed, services stopped.
    suite_task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, suite_task.cancel)
    # The product's default store: durable (fsync and synchronous_commit on), like `wiki dev up`.
    postgres = EmbeddedPostgres(pgdata=root / "pg", port=free_port())
    temporal = TemporalServer(root / "temporal")
    postgres.ensure_running()
    try:
        temporal.start()
        try:
            suite = Suite(root=root, postgres=postgres, temporal=temporal, databases=Databases(postgres),
                          client=await temporal.client(), rng=random.Random(seed))
            await suite.build_seed()
            log.info("computing the fault-free reference")
            reference = await suite.compute_reference()
            log.info("reference: %.0fs, %d runs, %d model calls", reference.seconds, reference.runs,
                     reference.llm_calls)
            outcomes = [await _run_one(suite, number) for number in numbers]
            return outcomes, reference
        finally:
            temporal.stop()
    finally:
        postgres.stop()


def main(argv: list[str] | None = None) -> None:
    warnings.filterwarnings("ignore", module="platformdirs")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("alembic").setLevel(logging.WARNING)
    args = _arguments(sys.argv[1:] if argv is None else argv)
    numbers = _selected(args.only)
    root = Path(tempfile.mkdtemp(prefix="wiki-chaos-"))
    os.chmod(root, 0o755)  # the embedded Postgres runs as its own system user
    started = time.monotonic()
    try:
        outcomes, reference = asyncio.run(run_suite(numbers, args.seed, root))
    except (asyncio.CancelledError, KeyboardInterrupt):
        print(f"interrupted; services stopped, workers killed; logs in {root}", file=sys.stderr)
        os._exit(130)
    text = report.render(outcomes, seed=args.seed, reference_seconds=reference.seconds,
                         reference_runs=reference.runs, reference_calls=reference.llm_calls,
                         total_seconds=time.monotonic() - started, complete=numbers == sorted(SCENARIOS))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    passed = all(outcome.passed for outcome in outcomes)
    for outcome in outcomes:
        print(f"{outcome.number}. {'passed' if outcome.passed else 'FAILED'}: {outcome.title}: {outcome.outcome}")
    if passed and not args.keep:
        shutil.rmtree(root, ignore_errors=True)
        print(f"\nreport written to {args.out}")
    else:
        print(f"\nreport written to {args.out}; logs and journals kept in {root}")
    sys.stdout.flush()
    # The SDK's core threads can abort interpreter finalisation (temporalio/sdk-python#300).
    os._exit(0 if passed else 1)


if __name__ == "__main__":
    main()
