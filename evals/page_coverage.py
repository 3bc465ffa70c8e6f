"""Pages that say what their memories say: coverage, size and the largest section, per scope.

Compiles offline (the scripted planner, through the real pipeline: embedded Postgres, a Temporal dev
server, a worker) two kinds of scopes and reads their wikis back:

- the LoCoMo development conversations (evals/locomo_data.py: from `LOCOMO_DIR` or
  ../shared/data/locomo-dev, never copied into the repository), each as its observations retained as
  plain memories; when the data is not there this part says so and is left out;
- the generated corpus (evals/corpus.py, the development seed), whose provenance precision is
  reported beside it (the same score `python -m evals` gives).

Measured per scope:

- **said**: the share of memories whose content is on a page that cites them: some active page with a
  section citing the memory holds (title, summary and section bodies together) at least half of the
  memory's content words (domain/content_words.py, the words the offline condenser chooses by);
- **size**: the characters of the wiki (every active page's summary and section bodies) against the
  characters of the memories it compiles;
- **largest section**: the longest section body of any page, against SECTION_BUDGET_CHARS (and how many
  sections are over it); per page, the largest section of each page is in the results file.

    python -m evals.page_coverage [--out FILE]    # writes evals/page_coverage_results.json and
                                                  # docs/PAGE_COVERAGE_EVAL.md
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import time
import uuid
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncEngine

from app.worker import build_worker
from domain.content_words import content_words, says
from domain.memory import MemoryIn
from evals.corpus import generate
from evals.locomo_data import Conversation, LocomoMissing, load
from evals.metrics import share
from evals.run import eval_settings, evaluate, private_services, publish
from evals.snapshot import Snapshot, read_snapshot
from planners.section_edits import SECTION_BUDGET_CHARS
from runtime.temporal_client import signal_compile
from store.memories import store_memories

OWNER = "locomo"
CORPUS_SEED = 11
CORPUS_SIZE = 400
ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "evals" / "page_coverage_results.json"
PAGE = ROOT / "docs" / "PAGE_COVERAGE_EVAL.md"
log = logging.getLogger("evals.page_coverage")


class PageFigures(BaseModel):
    title: str
    cited: int
    said: int
    chars: int
    largest_section: int


class ScopeCoverage(BaseModel):
    scope: str
    kind: str  # "conversation" or "generated"
    memories: int
    said: int
    memory_chars: int
    wiki_chars: int
    largest_section: int
    sections_over_budget: int
    pages: list[PageFigures] = Field(default_factory=list)
    provenance_precision: float | None = None
    compile_seconds: float = 0.0

    @property
    def said_share(self) -> float:
        return share(self.said, self.memories, 1.0)

    @property
    def size_ratio(self) -> float:
        return share(self.wiki_chars, self.memory_chars, 0.0)


def coverage(scope: str, kind: str, memories: dict[str, str], snapshot: Snapshot) -> ScopeCoverage:
    """The figures of one compiled scope; `memories` maps each memory's id (lower case) to its text."""
    words = {memory_id: content_words(text) for memory_id, text in memories.items()}
    said: set[str] = set()
    pages: list[PageFigures] = []
    wiki_chars = largest = over = 0
    for page in snapshot.active():
        bodies = [page.summary or "", *(section.body_md for section in page.sections)]
        chars = sum(len(body) for body in bodies)
        page_words = content_words("\n".join([page.title, *bodies]))
        cited = {ref for ref in page.cited() if ref in words}
        page_said = {ref for ref in cited if says(words[ref], page_words)}
        said |= page_said
        biggest = max((len(section.body_md) for section in page.sections), default=0)
        over += sum(1 for section in page.sections if len(section.body_md) > SECTION_BUDGET_CHARS)
        wiki_chars += chars
        largest = max(largest, biggest)
        pages.append(PageFigures(title=page.title, cited=len(cited), said=len(page_said), chars=chars,
                                 largest_section=biggest))
    pages.sort(key=lambda p: (-p.cited, p.title))
    if kind == "conversation":  # the data is never copied into the repository: no titles from it
        pages = [page.model_copy(update={"title": f"page {n}"}) for n, page in enumerate(pages, 1)]
    return ScopeCoverage(scope=scope, kind=kind, memories=len(memories), said=len(said),
                         memory_chars=sum(len(text) for text in memories.values()), wiki_chars=wiki_chars,
                         largest_section=largest, sections_over_budget=over, pages=pages)


# `--dump DIR`: each conversation's compiled pages as markdown, to read them (never into the repository).
DUMP: dict[str, Path | None] = {"dir": None}


def _dump(path: Path, snapshot: Snapshot) -> None:
    parts = []
    for page in snapshot.active():
        parts += [f"# {page.title}", "", page.summary or "", ""]
        for section in page.sections:
            parts += [f"## {section.heading} ({len(section.sources)} memories, {len(section.body_md)} chars)", "",
                      section.body_md, ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts))


async def _conversation(client: Any, engine: AsyncEngine, settings: Any, conversation: Conversation) -> ScopeCoverage:
    tenant = f"{conversation.sample_id}-observations"
    memories = [MemoryIn(id=uuid.UUID(m.id), content=m.content, occurred_at=m.occurred_at)
                for m in conversation.memories["observations"]]
    started = time.monotonic()
    await store_memories(engine, tenant, OWNER, memories)
    handle = await signal_compile(client, tenant, OWNER, trigger="admin", settings=settings)
    await handle.result()
    seconds = time.monotonic() - started
    texts = {str(m.resolved_id(tenant, OWNER)).lower(): m.content for m in memories}
    snapshot = await read_snapshot(engine, tenant, OWNER)
    if DUMP["dir"] is not None:
        _dump(DUMP["dir"] / f"{conversation.sample_id}.md", snapshot)
    result = coverage(conversation.sample_id, "conversation", texts, snapshot)
    result.compile_seconds = round(seconds, 1)
    log.info("%s: said %.1f%%, size %.1f%%, largest section %d", conversation.sample_id, 100 * result.said_share,
             100 * result.size_ratio, result.largest_section)
    return result


async def _generated(client: Any, engine: AsyncEngine) -> list[ScopeCoverage]:
    corpus = generate(CORPUS_SEED, CORPUS_SIZE)
    started = time.monotonic()
    results = await evaluate(client, engine, corpus, check_identity=False)
    seconds = time.monotonic() - started
    out = []
    for tenant, result in zip(corpus.tenants, results, strict=True):
        memories = [MemoryIn.model_validate(m) for m in tenant.memories]
        texts = {str(m.resolved_id(tenant.tenant, tenant.owner)).lower(): m.content for m in memories}
        figures = coverage(f"seed {CORPUS_SEED} {tenant.tenant}", "generated", texts,
                           await read_snapshot(engine, tenant.tenant, tenant.owner))
        precision = [p.precision for p in result.metrics.provenance.values() if p.precision.total]
        hits, total = sum(p.hits for p in precision), sum(p.total for p in precision)
        figures.provenance_precision = hits / total if total else None
        figures.compile_seconds = round(seconds, 1)
        out.append(figures)
    return out


async def run(conversations: list[Conversation]) -> list[ScopeCoverage]:
    async with private_services("wiki-page-coverage-") as (client, engine):
        settings = eval_settings()
        async with build_worker(client, engine, settings):
            talks = list(await asyncio.gather(*[_conversation(client, engine, settings, c) for c in conversations]))
        return talks + await _generated(client, engine)


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def render(results: list[ScopeCoverage], missing: str | None) -> str:
    lines = [
        "# Page coverage: do the pages say what their memories say?",
        "",
        "Written by `make eval` (`python -m evals.page_coverage`, evals/page_coverage.py); the figures, with "
        "each page's, are in evals/page_coverage_results.json. Each scope is compiled offline with the scripted "
        "planner through the real pipeline. A memory is **said** when some active page with a section citing "
        "it holds at least half of its content words (domain/content_words.py). **Size** is the characters of "
        "the wiki (page summaries and section bodies) against those of the memories. The **largest section** "
        f"is compared with the section bound, {SECTION_BUDGET_CHARS} characters.",
        "",
        "Targets: on real conversations, at least 50 % of memories said with the wiki at most 40 % of the "
        "memories' size and every section within its bound; on the generated corpus at least 90 % said, "
        "provenance precision 1.0.",
        "",
    ]
    if missing:
        lines += [f"The LoCoMo development conversations were not found ({missing}): only the generated corpus "
                  "is measured.", ""]
    lines += [
        "| scope | memories | said | size | largest section | sections over bound | pages | provenance precision |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(f"| {r.scope} | {r.memories} | {_percent(r.said_share)} ({r.said}/{r.memories}) | "
                     f"{_percent(r.size_ratio)} ({r.wiki_chars}/{r.memory_chars} chars) | {r.largest_section} | "
                     f"{r.sections_over_budget} | {len(r.pages)} | {_percent(r.provenance_precision)} |")
    lines += ["", "The LoCoMo conversations (CC BY-NC 4.0) are read from outside the repository; the product is "
              "judged on seven others.", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the results here only (no docs page)")
    parser.add_argument("--dump", type=Path, help="write each conversation's pages as markdown into this folder")
    args = parser.parse_args()
    DUMP["dir"] = args.dump
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    missing = None
    try:
        conversations = load()
    except LocomoMissing as error:
        missing = str(error)
        print(f"page coverage: LoCoMo development conversations missing, measuring the generated corpus only: {error}")
        conversations = []
    results = asyncio.run(run(conversations))
    payload = [r.model_dump() | {"said_share": r.said_share, "size_ratio": r.size_ratio} for r in results]
    page = render(results, missing)
    publish(payload, args.out, RESULTS, PAGE, lambda _: page)
    print(page)


if __name__ == "__main__":
    main()
