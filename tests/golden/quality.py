"""Quality figures of a compiled scope, and the rebuild check, on the 700-memory sample.

    python -m tests.golden.quality [MEMORIES [DUMP.json]]    # 700 by default; DUMP keeps the wiki
    python -m tests.golden.quality --provider anthropic|openai-compatible [MEMORIES]

With --provider the model is not the scripted planner but the real SDK over loopback HTTP: the
Anthropic path to the Claude simulator, or the OpenAI-compatible path to the fake of a local server
(openai_sim/, which answers through the Claude simulator); the requests each refused as invalid are
counted, and the two providers' figures must be the same.

Starts private services like make_fixture, retains the sample into golden/alice, compiles it, then
compiles again (nothing new: the wiki must not change), then runs `wiki rebuild`'s operation and
waits for its compile (the wiki must be the one the first compile wrote, row for row), and prints
the figures of `measure(dump)` below. It is a tool for reports, not a test: `test_quality.py` runs
the same measures on a smaller compile.

The figures, from a `dump_scope` dump (plain data, so the old fixture can be measured too):
- pages and sections: how many, body sizes (largest, 95th percentile), oversize pages (> 8000 chars);
- repeated lines: non-blank lines that occur more than once in one section, links unwrapped;
- provenance: memories cited by some section, memories held by an open mention, memories with no
  name hint at all (nothing to compile them into), the rest (uncited); sections citing nothing;
  rollup sections citing a memory that no member page cites (precision of rollups);
- markup: bodies with raw HTML openers, links to anything but a wiki route.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client

from app.operations import rebuild_scope
from evals.run import private_services
from runtime.settings import Settings
from tests.compile.helpers import compile_scope, retain_sample, running_worker, test_settings
from tests.golden.dump import RETAIN_DATE_PLACEHOLDER, dump_scope, encode, first_difference

TENANT = "golden"
OWNER = "alice"
OVERSIZE_BODY_CHARS = 8000
# A markdown link or image; an escaped bracket (`\[`, what domain.markup writes) opens none.
_LINK = re.compile(r"!?(?<!\\)\[([^\]]*)(?<!\\)\]\(([^)]*)\)")
_HTML_OPENER = re.compile(r"<[A-Za-z/!?]")
_WIKI_ROUTE = re.compile(r"^/wiki/(entity|topic|decision)/[^/\s]+$")
# A web address anywhere in a body, code spans included (domain.markup rule 3).
_ADDRESS = re.compile(r"(?<![\w.+-])[a-z][a-z0-9+.-]*://|(?<![\w.@/-])www\.", re.IGNORECASE)


def _unlinked(line: str) -> str:
    return _LINK.sub(lambda m: m.group(1), line).strip()


def repeated_lines(body: str) -> int:
    """Lines of the body beyond the first of each (non-blank, links unwrapped)."""
    counts = Counter(_unlinked(line) for line in body.splitlines() if line.strip())
    return sum(count - 1 for count in counts.values() if count > 1)


def _percentile(values: list[int], share: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0


def _has_hint(memory: dict[str, Any]) -> bool:
    metadata = memory.get("metadata") or {}
    return bool(metadata.get("entities") or metadata.get("place") or metadata.get("journal"))


_STATED_COUNT = re.compile(r"- (?:(\d+) memories|Visited (\d+) times|Visited (once))")
_DATED_LINE = re.compile(r"- \d{4}-\d\d-\d\d: ")


def _stated_count(body: str) -> int | None:
    """How many memories a condensed section says it draws on (a lone dated line is one); None for a
    body that says nothing about it."""
    match = _STATED_COUNT.match(body)
    if match:
        return 1 if match.group(3) else int(match.group(1) or match.group(2))
    return 1 if _DATED_LINE.match(body) and len(body.splitlines()) == 1 else None


def measure(dump: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    pages = [p for p in dump["pages"] if p["status"] == "active"]
    active_ids = {p["id"] for p in pages}
    sections = [s for s in dump["sections"] if s["page_id"] in active_ids]
    sources_by_section: dict[str, set[str]] = {}
    for source in dump["sources"]:
        sources_by_section.setdefault(source["section_id"], set()).add(source["source_ref"])
    sources_by_page: dict[str, set[str]] = {}
    for section in sections:
        sources_by_page.setdefault(section["page_id"], set()).update(sources_by_section.get(section["id"], set()))
    memory_ids = {m["id"] for m in dump["memories"]}
    cited = set().union(*sources_by_section.values()) if sources_by_section else set()
    held = {str(c.get("source_ref")) for m in dump["mentions"] if m["status"] == "open"
            for c in m["sample_contexts"] if isinstance(c, dict)}
    no_hint = {m["id"] for m in dump["memories"] if not _has_hint(m)}
    rollups = [s for s in sections if (s.get("aggregation") or {}).get("linked_page_ids")]
    rollup_foreign = 0
    for section in rollups:
        members = set().union(*(sources_by_page.get(p, set()) for p in section["aggregation"]["linked_page_ids"]))
        rollup_foreign += len(sources_by_section.get(section["id"], set()) - members)
    bodies = [p["body_md"] or "" for p in pages]
    section_sizes = [len(s["body_md"]) for s in sections]
    links = [m.group(2) for body in bodies for m in _LINK.finditer(body)]
    return {
        "pages": len(pages),
        "pages_by_type": dict(sorted(Counter(p["type"] for p in pages).items())),
        "archived_pages": len(dump["pages"]) - len(pages),
        "largest_page_chars": max((len(b) for b in bodies), default=0),
        "oversize_pages": sum(len(b) > OVERSIZE_BODY_CHARS for b in bodies),
        "sections": len(sections),
        "largest_section_chars": max(section_sizes, default=0),
        "largest_section_lines": max((len(s["body_md"].splitlines()) for s in sections), default=0),
        "p95_section_chars": _percentile(section_sizes, 0.95),
        "total_section_chars": sum(section_sizes),
        "repeated_lines": sum(repeated_lines(s["body_md"]) for s in sections),
        "sections_with_repeats": sum(repeated_lines(s["body_md"]) > 0 for s in sections),
        "memories": len(memory_ids),
        "memories_cited": len(cited & memory_ids),
        "memories_held_open": len((held - cited) & memory_ids),
        "memories_without_hints": len(no_hint - cited - held),
        "memories_uncited": len(memory_ids - cited - held - no_hint),
        "source_rows": len(dump["sources"]),
        "sources_not_a_memory": len(cited - memory_ids),
        "sections_without_sources": sum(not sources_by_section.get(s["id"]) for s in sections),
        # Condensed sections whose stated number of memories is not the number they cite (a stale body).
        "condensed_counts_off": sum(1 for s in sections if (n := _stated_count(s["body_md"])) is not None
                                    and n != len(sources_by_section.get(s["id"], set()))),
        "rollup_sections": len(rollups),
        "rollup_sources_of_non_members": rollup_foreign,
        # The dump's own placeholder for retain dates is not markup.
        "raw_html_bodies": sum(bool(_HTML_OPENER.search(b.replace(RETAIN_DATE_PLACEHOLDER, ""))) for b in bodies),
        "retain_dates_in_bodies": sum(b.count(RETAIN_DATE_PLACEHOLDER) for b in bodies),
        "links_outside_wiki": sum(not _WIKI_ROUTE.match(target) for target in links),
        "web_addresses_in_bodies": sum(len(_ADDRESS.findall(b)) for b in bodies),
    }


async def compile_again_and_rebuild(client: Client, engine: AsyncEngine, settings: Settings, tenant: str,
                                   owner: str, model_client: Any = None) -> tuple[dict, dict, dict]:
    """The scope's rows after a compile, after compiling again with nothing new, and after a rebuild."""
    async with running_worker(client, engine, settings, model_client=model_client):
        await compile_scope(client, settings, tenant, owner)
        first = await dump_scope(engine, tenant, owner)
        await compile_scope(client, settings, tenant, owner)
        again = await dump_scope(engine, tenant, owner)
        _, handle = await rebuild_scope(client, engine, settings, tenant, owner)
        await handle.result()
        rebuilt = await dump_scope(engine, tenant, owner)
    return first, again, rebuilt


@asynccontextmanager
async def _model(provider: str) -> AsyncIterator[tuple[Settings, Any, Any]]:
    """Settings, a model gateway (None: scripted) and the simulator of `provider`."""
    if provider == "scripted":
        yield test_settings(WIKI_DEBOUNCE_SECONDS=0), None, None
        return
    from app.worker import build_model_client

    if provider == "anthropic":
        from claude_sim import ClaudeSimulator

        async with ClaudeSimulator() as claude:
            os.environ["ANTHROPIC_BASE_URL"] = claude.base_url
            # The rebuild goes through Message Batches: polled every second, not every minute.
            settings = test_settings(WIKI_DEBOUNCE_SECONDS=0, WIKI_LLM="anthropic", WIKI_LLM_BATCH_POLL_SECONDS=1,
                                     WIKI_LLM_BATCH_WINDOW_SECONDS=0, ANTHROPIC_API_KEY=next(iter(claude.config.api_keys)))
            gateway = build_model_client(settings)
            yield settings, gateway, claude
            await gateway.aclose()
        return
    from openai_sim import OpenAISimulator

    async with OpenAISimulator() as fake:
        settings = test_settings(WIKI_DEBOUNCE_SECONDS=0, WIKI_LLM="openai-compatible", WIKI_OPENAI_SERVER="ollama",
                                 WIKI_OPENAI_BASE_URL=fake.base_url, WIKI_MODEL_ID="qwen2.5:14b")
        gateway = build_model_client(settings)
        yield settings, gateway, fake
        await gateway.aclose()


def _invalid_requests(simulator: Any) -> int:
    if simulator is None:
        return 0
    if hasattr(simulator, "invalid_requests"):
        return len(simulator.invalid_requests())
    return sum(1 for call in simulator.calls if call.kind == "rejected" and call.status == 400)


async def _run(memories: int, keep: Path | None, provider: str = "scripted") -> None:
    async with private_services("wiki-quality-") as (client, engine), _model(provider) as (settings, gateway, sim):
        await retain_sample(engine, TENANT, OWNER, memories)
        first, again, rebuilt = await compile_again_and_rebuild(client, engine, settings, TENANT, OWNER,
                                                                model_client=gateway)
        if sim is not None:
            print(f"provider: {provider}; model calls answered: {sum(1 for c in sim.calls if c.status == 200)}; "
                  f"invalid requests: {_invalid_requests(sim)}")
    if keep is not None:
        keep.write_bytes(encode(first))
    for name, value in measure(first).items():
        print(f"{name}: {value}")
    print(f"compile again changes nothing: {first_difference(first, again) or 'yes'}")
    print(f"rebuild gives the same rows: {first_difference(first, rebuilt) or 'yes'}")
    print("after rebuild:", {k: v for k, v in measure(rebuilt).items()
                             if k in ("pages", "archived_pages", "largest_page_chars", "oversize_pages",
                                      "repeated_lines")})


if __name__ == "__main__":
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    arguments = sys.argv[1:]
    chosen = "scripted"
    if arguments[:1] == ["--provider"]:
        chosen, arguments = arguments[1], arguments[2:]
    asyncio.run(_run(int(arguments[0]) if arguments else 700, Path(arguments[1]) if len(arguments) > 1 else None,
                     chosen))
