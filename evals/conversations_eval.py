"""Conversations compiled offline: the LoCoMo development conversations, each speaker a subject.

Reads the three development conversations of LoCoMo (evals/locomo_data.py: from `LOCOMO_DIR` or
../shared/data/locomo-dev, never copied into the repository; when they are not there this eval says so
and stops, writing nothing). Each conversation goes into scopes of its own, in three shapes:

- `conversation`: its dialogue retained as a conversation (the turns `POST /v1/conversations` stores:
  domain/conversation.py, each with its speaker, conversation and position);
- `turns`: the same dialogue as plain memories, one per turn, "Speaker: text" (no speaker column);
- `observations`: the benchmark's observations, plain sentences that name their speaker.

Every scope is compiled through the real pipeline with the scripted planner (embedded Postgres, a Temporal
dev server, a worker), then measured:

- **pages per speaker**: active pages one of whose names (title or alias) is the speaker's first name,
  their full name, or a first word of theirs (target: exactly one);
- **interjection pages**: active pages named by a greeting, thanks or interjection only ("Aww", "Hey Mel")
  (target: 0);
- **first names read**: of the memories whose text names a speaker (the first name as a word), the share
  in which the offline reader reads that speaker (the memory's subjects as the scripted planner files
  them, or the name it speaks to) (target: at least 0.99);
- **memories cited**: the share of the scope's memories that a section of an active page cites (target for
  observations: at least 0.95);
- **first-person lines**: of the lines on active pages, those still in a speaker's own words ("I", "my",
  "me", "we", "our": a line a reader cannot attribute) or opening with a greeting or thanks;
- **rejected lines**: the lines the verification gate kept out (in the results file).

Then the first conversation's `conversation` shape is compiled once more through the anthropic SDK and the
Claude simulator (claude_sim/, reached at its base URL; planner `simulated`), the model path reading each
turn's `said_by`, measured the same way except first names read, which measures the offline reader only.

    python -m evals.conversations_eval [--out FILE]    # writes evals/conversations_results.json and
                                                       # docs/CONVERSATIONS_EVAL.md
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import re
import time
import uuid
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from app.worker import build_worker
from claude_sim import ClaudeSimulator, SimConfig
from domain.aliases import normalize_alias
from domain.closed_class import is_interjection
from domain.context import MemoryRecord
from domain.conversation import ConversationIn, conversation_turns
from domain.memory import MemoryIn
from evals.locomo_data import Conversation, LocomoMissing, load
from evals.metrics import share
from evals.run import eval_settings, private_services, publish, through_simulator
from planners.scripted.turns import TurnReading
from planners.text_entities import read_names
from runtime.temporal_client import signal_compile
from store.memories import store_memories

SHAPES = ("conversation", "turns", "observations")
# Through the SDK and the simulator: the first conversation, retained as a conversation (a few minutes).
SIMULATED_CONVERSATIONS = 1
OWNER = "locomo"
ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "evals" / "conversations_results.json"
PAGE = ROOT / "docs" / "CONVERSATIONS_EVAL.md"
log = logging.getLogger("evals.conversations")


_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'll|I'd|my|me|we|our|us)\b", re.IGNORECASE)
_GREETING = re.compile(r"^(?:\w+: )?(?:hey|hi|hello|thanks|thank you)\b", re.IGNORECASE)
_DATED = re.compile(r"^-?\s*\d{4}-\d{2}-\d{2}:\s*")


class ScopeFigures(BaseModel):
    conversation: str
    shape: str
    memories: int
    planner: str = "scripted"
    pages: int
    pages_per_speaker: dict[str, int]
    interjection_pages: list[str]
    names_read: int
    names_naming: int
    cited: int
    lines: int = 0
    first_person_lines: int = 0
    rejected_lines: int = 0  # lines the verification gate kept out
    compile_seconds: float

    @property
    def read_share(self) -> float:
        return share(self.names_read, self.names_naming, 1.0)

    @property
    def cited_share(self) -> float:
        return share(self.cited, self.memories, 1.0)


def _memories(conversation: Conversation, shape: str) -> list[MemoryIn]:
    if shape == "conversation":
        messages = [{"speaker": m.speaker, "text": m.content.split(": ", 1)[1], "time": m.occurred_at.isoformat(),
                     "position": m.position} for m in conversation.memories["turns"]]
        talk = ConversationIn.model_validate({"id": conversation.sample_id, "messages": messages})
        return list(conversation_turns(talk, None))
    source = conversation.memories["turns" if shape == "turns" else "observations"]
    return [MemoryIn(id=uuid.UUID(m.id), content=m.content, occurred_at=m.occurred_at) for m in source]


def _records(memories: list[MemoryIn], tenant: str) -> list[MemoryRecord]:
    out = []
    for memory in memories:
        turn = getattr(memory, "turn", None)
        when = memory.occurred_at
        assert when is not None
        out.append(MemoryRecord(id=memory.resolved_id(tenant, OWNER), content=memory.content, created_at=when,
                                updated_at=when, speaker=turn.speaker if turn else None,
                                speaker_role=turn.role if turn else None,
                                conversation=turn.conversation if turn else None,
                                position=turn.position if turn else None))
    return out


def names_read(records: list[MemoryRecord], speakers: tuple[str, ...]) -> tuple[int, int]:
    """(memories naming a speaker in which the reader reads that speaker, memories naming a speaker), each
    (memory, speaker) pair counted once; read in batches of 50, as a compile reads them."""
    read = naming = 0
    for start in range(0, len(records), 50):
        batch = records[start:start + 50]
        turns = TurnReading(batch)
        for record in batch:
            spoken = turns.entities(record)
            subjects = {normalize_alias(str(e["name"])) for e in (spoken or [])}
            subjects |= {normalize_alias(n) for n in turns.addressees(record)}
            if spoken is None:
                subjects |= {normalize_alias(r.name) for r in read_names(record.content)}
            for speaker in speakers:
                first = speaker.split()[0]
                if re.search(rf"\b{re.escape(first)}\b", record.content, re.IGNORECASE) is None:
                    continue
                naming += 1
                key = normalize_alias(speaker)
                if any(s == key or s.split()[:1] == key.split()[:1] for s in subjects):
                    read += 1
    return read, naming


async def _figures(engine: AsyncEngine, tenant: str, speakers: tuple[str, ...]) -> dict[str, Any]:
    async with engine.connect() as conn:
        pages = (await conn.execute(text(
            "SELECT p.id, p.title, array_remove(array_agg(a.alias), NULL) AS aliases FROM wiki_pages p "
            "LEFT JOIN wiki_page_aliases a ON a.page_id = p.id "
            "WHERE p.tenant_id = :t AND p.owner_id = :o AND p.status = 'active' GROUP BY p.id, p.title"),
            {"t": tenant, "o": OWNER})).all()
        cited = (await conn.execute(text(
            "SELECT count(DISTINCT s.source_ref) FROM wiki_section_sources s "
            "JOIN wiki_page_sections ps ON ps.id = s.section_id JOIN wiki_pages p ON p.id = ps.page_id "
            "WHERE p.tenant_id = :t AND p.owner_id = :o AND p.status = 'active'"), {"t": tenant, "o": OWNER})).scalar()
        rejected = (await conn.execute(text(
            "SELECT count(*) FROM wiki_rejected_claims WHERE tenant_id = :t AND owner_id = :o"),
            {"t": tenant, "o": OWNER})).scalar()
        lines = (await conn.execute(text(
            "SELECT c.text FROM wiki_section_claims c JOIN wiki_page_sections s ON s.id = c.section_id "
            "JOIN wiki_pages p ON p.id = s.page_id WHERE p.tenant_id = :t AND p.owner_id = :o "
            "AND p.status = 'active'"), {"t": tenant, "o": OWNER})).scalars().all()
    per_speaker = {}
    for speaker in speakers:
        first = normalize_alias(speaker).split()[0]
        per_speaker[speaker] = sum(
            1 for page in pages
            if any((key := normalize_alias(name)) == normalize_alias(speaker) or key.split()[:1] == [first]
                   for name in [page.title, *page.aliases]))
    interjections = [page.title for page in pages
                     if all(is_interjection(word) for word in normalize_alias(page.title).split() or ["x"])]
    own_words = [line for line in lines if _FIRST_PERSON.search(line) or _GREETING.match(_DATED.sub("", line))]
    return {"pages": len(pages), "pages_per_speaker": per_speaker, "interjection_pages": interjections,
            "cited": int(cited or 0), "lines": len(lines), "first_person_lines": len(own_words),
            "rejected_lines": int(rejected or 0)}


async def _scope(client: Any, engine: AsyncEngine, settings: Any, conversation: Conversation,
                 shape: str, planner: str = "scripted") -> ScopeFigures:
    tenant = f"{conversation.sample_id}-{shape}" + ("" if planner == "scripted" else f"-{planner}")
    memories = _memories(conversation, shape)
    started = time.monotonic()
    await store_memories(engine, tenant, OWNER, memories)
    handle = await signal_compile(client, tenant, OWNER, trigger="admin", settings=settings)
    await handle.result()
    seconds = time.monotonic() - started
    read, naming = names_read(_records(memories, tenant), conversation.speakers)
    figures = await _figures(engine, tenant, conversation.speakers)
    log.info("%s %s %s: %d memories, %d pages, %.0f s", conversation.sample_id, shape, planner, len(memories),
             figures["pages"], seconds)
    return ScopeFigures(conversation=conversation.sample_id, shape=shape, planner=planner, memories=len(memories),
                        names_read=read,
                        names_naming=naming, compile_seconds=round(seconds, 1), **figures)


async def run(conversations: list[Conversation], scripted: bool = True) -> list[ScopeFigures]:
    async with private_services("wiki-conversations-eval-") as (client, engine):
        settings = eval_settings()
        results: list[ScopeFigures] = []
        if scripted:
            async with build_worker(client, engine, settings):
                results += await asyncio.gather(*[_scope(client, engine, settings, c, shape)
                                                  for c in conversations for shape in SHAPES])
        async with ClaudeSimulator(SimConfig()) as sim, through_simulator(sim.base_url) as (simulated, model_client), \
                build_worker(client, engine, simulated, model_client=model_client):
            for conversation in conversations[:SIMULATED_CONVERSATIONS]:
                results.append(await _scope(client, engine, simulated, conversation, "conversation", "simulated"))
        return results


def _percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def render(results: list[ScopeFigures]) -> str:
    lines = [
        "# Conversations compiled offline (LoCoMo development conversations)",
        "",
        "Written by `make eval` (`python -m evals.conversations_eval`, evals/conversations_eval.py); the figures "
        "are in evals/conversations_results.json. Three LoCoMo conversations (CC BY-NC 4.0, read from outside the "
        "repository), each compiled offline with the scripted planner in three shapes: `conversation` (retained "
        "as a conversation, each turn with its speaker), `turns` (one plain memory per turn, \"Speaker: text\") "
        "and `observations` (the benchmark's plain sentences). The product is judged on seven other "
        "conversations; these three were used while building it.",
        "",
        "Targets: exactly one page per speaker and no page named by an interjection or greeting (raw turns); "
        "each speaker's first name read in at least 99 % of the turns and observations that name them; at "
        "least 95 % of the observations cited by some page.",
        "",
        "The rows of planner `simulated` compile the first conversation's turns through the anthropic SDK and the "
        "Claude simulator (claude_sim/), which reads each turn's speaker as the leaf prompt describes; its "
        "\"first names read\" column is the offline reader's, shown once on the scripted rows.",
        "",
        "| conversation | shape | planner | memories | pages | pages per speaker | interjection pages "
        "| first names read | memories cited | first-person lines | compile s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        speakers = ", ".join(f"{name} {count}" for name, count in r.pages_per_speaker.items())
        read = f"{_percent(r.read_share)} ({r.names_read}/{r.names_naming})" if r.planner == "scripted" else "–"
        lines.append(f"| {r.conversation} | {r.shape} | {r.planner} | {r.memories} | {r.pages} | {speakers} | "
                     f"{len(r.interjection_pages)} | {read} | "
                     f"{_percent(r.cited_share)} ({r.cited}/{r.memories}) | {r.first_person_lines}/{r.lines} | "
                     f"{r.compile_seconds} |")
    lines += ["", "Compile seconds are wall time on a shared machine, the scripted scopes all at once on one worker, "
              "the simulated one alone.", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the results here only (no docs page)")
    parser.add_argument("--simulated-only", action="store_true",
                        help="only the compile through the simulator (needs --out)")
    args = parser.parse_args()
    if args.simulated_only and args.out is None:
        parser.error("--simulated-only writes only to --out")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        conversations = load()
    except LocomoMissing as missing:
        print(f"conversations eval skipped: {missing}")
        return
    results = asyncio.run(run(conversations, scripted=not args.simulated_only))
    payload = [r.model_dump() | {"read_share": r.read_share, "cited_share": r.cited_share} for r in results]
    page = render(results)
    publish(payload, args.out, RESULTS, PAGE, lambda _: page)
    print(page)


if __name__ == "__main__":
    main()

