"""`wiki recall` and `wiki context` on a wiki the real pipeline compiled (scripted planner): the
compile embeds every claim and memory, recall answers from the pages and the memories behind them,
a memory retained after the compile is found, everything printed fits the budget, and bad input is
one line."""

from __future__ import annotations

import json
import random

import pytest
from sqlalchemy import text

from tests.compile.helpers import compile_scope, running_worker
from tests.operators.cli import one_error_line, scope, wiki
from tests.operators.test_cli_reads import retain_franklin

TENANT = "readcli"


@pytest.fixture
async def compiled(settings, client, engine):
    memory_ids = await retain_franklin(engine, "Brisket at Franklin Barbecue with Sam.",
                                       "Back at Franklin Barbecue for beef ribs.")
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, TENANT, "alice")
    return memory_ids


async def test_recall_answers_from_the_pages_and_the_memories_behind_them(compiled, engine):
    async with engine.connect() as conn:
        claims, vectors, memories, memory_vectors = (await conn.execute(text("""
            SELECT (SELECT count(*) FROM wiki_section_claims c JOIN wiki_page_sections s ON s.id = c.section_id
                    JOIN wiki_pages p ON p.id = s.page_id WHERE p.tenant_id = :t),
                   (SELECT count(*) FROM wiki_claim_vectors WHERE tenant_id = :t),
                   (SELECT count(*) FROM memory_units WHERE tenant_id = :t),
                   (SELECT count(*) FROM wiki_memory_vectors WHERE tenant_id = :t)
        """), {"t": TENANT})).one()
    assert claims > 0 and vectors == claims and memory_vectors == memories  # the compile embedded them all

    found = await wiki("recall", "Where did I have beef ribs?", *scope(TENANT), "--json", "--max-tokens", "100")
    assert found.exit_code == 0, found.output
    assert len(found.stdout) <= 400
    answer = json.loads(found.stdout)
    assert answer["tokens_used"] <= 100 and answer["results"]
    best = answer["results"][0]
    assert best["page"] == "entity/franklin-barbecue" and "ribs" in best["text"]
    assert ({best["id"]} if best["kind"] == "memory" else set(best["memories"])) <= set(compiled)
    shown = await wiki("recall", "Where did I have beef ribs?", *scope(TENANT))
    assert shown.exit_code == 0 and "entity/franklin-barbecue" in shown.stdout and len(shown.stdout) <= 2000

    await retain_franklin(engine, "Lunch at Franklin Barbecue: the turkey was excellent.", first_day=9)
    later = json.loads((await wiki("recall", "How was the turkey?", *scope(TENANT), "--json")).stdout)
    assert later["results"][0]["kind"] == "memory" and "turkey" in later["results"][0]["text"]

    standing = await wiki("context", *scope(TENANT), "--json", "--max-tokens", "60")
    assert standing.exit_code == 0, standing.output
    assert json.loads(standing.stdout)["tokens_used"] <= 60 and len(standing.stdout) <= 240


async def test_everything_printed_fits_the_budget(compiled):
    rng = random.Random(17)
    words = ["brisket", "Franklin", "ribs", "beef", "Sam", "barbecue", "line", "when", "where", "what", "turkey"]
    for _ in range(6):
        question = " ".join(rng.sample(words, rng.randint(1, 4))) + "?"
        budget = rng.randint(50, 400)
        for extra in ([], ["--json"], ["--json", "--verbose"]):
            shown = await wiki("recall", question, *scope(TENANT), "--max-tokens", str(budget), *extra)
            assert shown.exit_code == 0, shown.output
            assert len(shown.stdout) <= budget * 4, (question, budget, extra)
        standing = await wiki("context", *scope(TENANT), "--max-tokens", str(budget))
        assert len(standing.stdout) <= budget * 4


@pytest.mark.parametrize("args, message", [
    (["recall", "  "], "question must not be empty"),
    (["recall", "ribs", "--max-tokens", "5"], "max_tokens must be between 50 and 8000 (got 5)"),
    (["recall", "ribs", "--without", "vibes"], "unknown retriever vibes"),
    (["recall", "ribs", "--as-of", "soon"], "as_of must be an ISO-8601 time"),
    (["context", "--min-confidence", "3"], "min_confidence must be a number from 0 to 1"),
])
async def test_bad_input_is_one_line(settings, args, message):
    one_error_line(await wiki(*args, *scope(TENANT)), 2, message)
