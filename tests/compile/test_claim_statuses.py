"""Claim statuses end to end: a compile through the real anthropic SDK and the Claude simulator, whose
claim judge reads the prompt's contract (planners/claim_judge_prompt.py) over HTTP, read back as an
agent reads a page.

Every served line's status is checked by rules of this test's own, not the product's: a `quoted`
line is whole sentences of a memory it cites, word for word (split here with a plain regex); a
`derived` or `unverified` line has no confidence; every line that is neither quoted nor derived
was put to the judge (its text is in a claim-judge request the simulator received); a `verified`
line has the confidence of the memories the judge named. Offline (the scripted planner), no line is
verified.
"""

from __future__ import annotations

import re

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from app import reads
from app.reads import ReadScope
from domain.claims import STATUS_MEANINGS
from store.memories import store_memories
from tests.compile.helpers import compile_scope, running_worker, sample_memories
from tests.compile.helpers import test_settings as settings_for
from tests.compile.test_model_path import model_worker

TENANT, OWNER = "t-statuses", "alice"
CLAIM_LINE = re.compile(r"^c\d+\. page: .*? \| cites: [^|]* \| claim: (.*)$", re.MULTILINE)
WORD = re.compile(r"[a-z0-9']+")
DATE_PREFIX = re.compile(r"^\s*[-*]\s*\d{4}-\d{2}-\d{2}\s*:\s*")


def message_text(content: str | list[dict]) -> str:
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)


def plain(line: str) -> str:
    """A line as read: apply links a bold name to its page after the gate, which changes no word."""
    return " ".join(words(re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", line)))


def words(text_: str) -> list[str]:
    return WORD.findall(text_.lower().replace("’", "'"))


def is_sentence_run(line: str, memory: str) -> bool:
    """Our own quote rule: the line, a bullet and a date prefix aside, is whole consecutive sentences
    of the memory, word for word (case and punctuation aside)."""
    line = DATE_PREFIX.sub("", line) if DATE_PREFIX.match(line) else re.sub(r"^\s*[-*]\s+", "", line)
    sentences = [words(s) for s in re.split(r"(?<=[.!?])\s+", memory.strip()) if words(s)]
    target = words(line)
    for start in range(len(sentences)):
        run: list[str] = []
        for sentence in sentences[start:]:
            run += sentence
            if run == target:
                return True
            if len(run) >= len(target):
                break
    return False


async def served(engine: AsyncEngine) -> list[dict]:
    async with engine.connect() as conn:
        rows = (await conn.execute(text("""
            SELECT c.text, c.kind, c.status, c.confidence, c.supporters,
                   array_agg(m.content ORDER BY m.id) AS cited
            FROM wiki_section_claims c JOIN wiki_page_sections s ON s.id = c.section_id
            JOIN wiki_pages p ON p.id = s.page_id
            JOIN wiki_claim_sources cs ON cs.claim_id = c.id
            JOIN memory_units m ON m.id::text = cs.memory_id AND m.tenant_id = p.tenant_id AND m.owner_id = p.owner_id
            WHERE p.tenant_id = :t AND p.owner_id = :o GROUP BY c.id
        """), {"t": TENANT, "o": OWNER})).all()
    return [dict(row._mapping) for row in rows]


async def test_statuses_through_the_sdk_and_the_simulators_judge(client, engine, sim) -> None:
    await store_memories(engine, TENANT, OWNER, sample_memories(60))
    async with model_worker(client, engine, "anthropic", WIKI_RECORD_PAGE_SIZE=30) as settings:
        await compile_scope(client, settings, TENANT, OWNER)

    asked = {plain(line) for call in sim.of_kind("claim_judge") for message in call.body["messages"]
             for line in CLAIM_LINE.findall(message_text(message["content"]))}
    assert asked, "no line reached the judge"
    claims = await served(engine)
    by_status = {status: [c for c in claims if c["status"] == status] for status in STATUS_MEANINGS}
    assert by_status["quoted"] and by_status["derived"] and by_status["verified"], {
        s: len(c) for s, c in by_status.items()}
    for claim in by_status["quoted"]:
        assert any(is_sentence_run(claim["text"], memory) for memory in claim["cited"]), claim["text"]
        assert claim["confidence"] is not None and claim["supporters"] >= 1
    for claim in by_status["derived"] + by_status["unverified"]:
        assert claim["confidence"] is None, claim
    for claim in by_status["verified"] + by_status["unverified"]:
        assert plain(claim["text"]) in asked, f"never put to the judge: {claim['text']}"
    for claim in by_status["verified"]:
        expected = round(min(1.0, 0.7 + 0.1 * (claim["supporters"] - 1)), 2)
        assert claim["supporters"] >= 1 and float(claim["confidence"]) == expected, claim

    # what an agent reads: each status with its meaning
    async with engine.connect() as conn:
        slug = (await conn.execute(text("""
            SELECT p.type || '/' || p.slug FROM wiki_pages p JOIN wiki_page_sections s ON s.page_id = p.id
            JOIN wiki_section_claims c ON c.section_id = s.id
            WHERE p.tenant_id = :t AND c.status = 'verified' LIMIT 1"""), {"t": TENANT})).scalar_one()
    document = await reads.get_page(engine, ReadScope.of(TENANT, OWNER), slug)
    shown = {c.status for section in document.sections for c in section.claims}
    assert "verified" in shown and document.statuses == {s: STATUS_MEANINGS[s] for s in STATUS_MEANINGS
                                                         if s in shown}


async def test_offline_no_line_is_verified_and_quotes_are_whole_sentences(client, engine) -> None:
    await store_memories(engine, TENANT, OWNER, sample_memories(60))
    settings = settings_for(WIKI_AGGREGATION_PASS_ENABLED=False, WIKI_RECORD_PAGE_SIZE=30)
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, TENANT, OWNER)
    claims = await served(engine)
    statuses = {c["status"] for c in claims}
    assert "verified" not in statuses and {"quoted", "derived", "unverified"} <= statuses
    for claim in claims:
        if claim["status"] == "quoted":
            assert any(is_sentence_run(claim["text"], memory) for memory in claim["cited"]), claim["text"]
        else:
            assert claim["confidence"] is None, claim
