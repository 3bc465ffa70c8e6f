"""`make bench [PARTS="…"]` / `python -m bench [part ...]`: measure the named parts of the bench
(every part when none is named), merge each into bench/results.json and write docs/BENCHMARKS.md.

The parts and what each measures: bench/parts.py. After each part, results.json and the page are
written, so a part that fails leaves the ones before it recorded. BENCH_REPEATS (default 3) sets how
many times a repeated part (overhead, many_scopes) runs each measurement; its section gives medians.
The many-scopes workload is shaped by the environment variables `bench.many_scopes.workload_from_env`
names.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys

from bench import page
from bench.parts import BY_NAME, PARTS, Part, with_part
from bench.provenance import DOC_PATH, RESULTS_PATH, RunRecord, load_results, write_results
from bench.services import running_services

log = logging.getLogger("bench")


# The parts a provider other than the Claude simulator's measures in their place.
PROVIDER_PARTS = {"openai-compatible": {"cost": "local", "realistic": "local"}}


def provider_parts(names: list[str], provider: str) -> list[str]:
    """`names` for `provider`: `--provider openai-compatible cost realistic` measures the `local` part
    (the sample through the OpenAI-compatible fake) instead of the Claude path's two."""
    if provider == "anthropic":
        return names
    if provider not in PROVIDER_PARTS:
        raise SystemExit(f"error: --provider must be anthropic or {', '.join(PROVIDER_PARTS)}, not {provider!r}")
    mapped = [PROVIDER_PARTS[provider].get(name, name) for name in names] or ["local"]
    return list(dict.fromkeys(mapped))


def selected_parts(names: list[str]) -> list[Part]:
    """The named parts in the bench's order; every part when none is named."""
    unknown = [name for name in names if name not in BY_NAME]
    if unknown:
        raise SystemExit(f"error: unknown bench part {unknown[0]!r} (parts: {', '.join(BY_NAME)})")
    return [part for part in PARTS if not names or part.name in names]


def repeats_from_env() -> int:
    raw = os.environ.get("BENCH_REPEATS", "3")
    try:
        repeats = int(raw)
    except ValueError:
        raise SystemExit(f"error: BENCH_REPEATS must be a whole number, not {raw!r}") from None
    if repeats < 1:
        raise SystemExit("error: BENCH_REPEATS must be at least 1")
    return repeats


async def run(parts: list[Part], repeats: int) -> None:
    async with running_services() as services:
        for part in parts:
            log.info("measuring %s", part.name)
            record = RunRecord()
            detail = await part.measure(services, repeats)
            detail["run"] = record.finish(repeats if part.repeated else None)
            results = with_part(load_results(), part.name, detail)
            write_results(results)
            page.write(results)
            log.info("%s measured in %.0f s; wrote %s and %s", part.name, detail["run"]["seconds"], RESULTS_PATH,
                     DOC_PATH)


def main(argv: list[str]) -> None:
    provider = "anthropic"
    if argv[:1] == ["--provider"] and len(argv) > 1:
        provider, argv = argv[1], argv[2:]
    parts = selected_parts(provider_parts(argv, provider))
    repeats = repeats_from_env()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    for noisy in ("httpx", "httpx2"):  # one line per model call drowns the bench's own progress
        logging.getLogger(noisy).setLevel(logging.WARNING)
    asyncio.run(run(parts, repeats))


if __name__ == "__main__":
    main(sys.argv[1:])
