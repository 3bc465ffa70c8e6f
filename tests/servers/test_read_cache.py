"""The read cache of `wiki serve` (servers/read_cache.py, revisions from migration 0011): after any
committed write to a scope, every cached read answers what the database holds, and a scope never
gets another's answer.

The writes are every kind of row a cached read is made of (pages, sections, aliases, section
sources, claims, claim sources), in a random order (seeded), each with random words, and after each
one the cached server is compared with a server without a cache over the same database."""

from __future__ import annotations

import random
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from servers.guard import ServerCounters
from servers.http_api import create_app
from tests.servers.wiki import OWNER, Seeded, seed_scope, token_for

WORDS = ("brisket", "ember", "pecan", "smoke", "harbor", "violet", "granite", "meadow", "copper", "lantern")
SINCE = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
READS = [("/v1/pages/entity/franklin-barbecue", {}), ("/v1/pages/entity/austin-texas", {"history": "true"}),
         ("/v1/pages/entity/sam", {}), ("/v1/search", {"q": "brisket"}), ("/v1/search", {"q": "austin"}),
         *[("/v1/search", {"q": word}) for word in WORDS[:5]], ("/v1/changes", {"since": SINCE})]

# The reads the cache keeps (search ranks memories too: recall's own indexes keep what it reads).
CACHED = [read for read in READS if read[0] != "/v1/search"]
Write = Callable[[AsyncEngine, Seeded, random.Random], Awaitable[None]]


async def _run(engine: AsyncEngine, sql: str, **params) -> None:
    async with engine.begin() as conn:
        await conn.execute(text(sql), params)


def _words(rng: random.Random, count: int = 3) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(count))


async def retitle_page(engine, seeded, rng):
    await _run(engine, "UPDATE wiki_pages SET title = :title, summary = :summary, updated_at = now() WHERE id = :id",
               id=rng.choice(list(seeded.pages.values())), title=_words(rng).title(), summary=_words(rng, 6))


async def archive_or_restore_page(engine, seeded, rng):
    await _run(engine, "UPDATE wiki_pages SET status = CASE status WHEN 'active' THEN 'archived' ELSE 'active' END "
                       "WHERE id = :id", id=rng.choice(list(seeded.pages.values())))


async def add_alias(engine, seeded, rng):
    await _run(engine, "INSERT INTO wiki_page_aliases (id, page_id, alias) VALUES (:id, :page, :alias) "
                       "ON CONFLICT DO NOTHING",
               id=uuid.uuid4(), page=rng.choice(list(seeded.pages.values())), alias=_words(rng, 1))


async def drop_alias(engine, seeded, rng):
    await _run(engine, "DELETE FROM wiki_page_aliases WHERE id = (SELECT id FROM wiki_page_aliases "
                       "WHERE page_id = ANY(CAST(:pages AS uuid[])) ORDER BY random() LIMIT 1)",
               pages=list(seeded.pages.values()))


async def rewrite_section(engine, seeded, rng):
    await _run(engine, "UPDATE wiki_page_sections SET body_md = :body, updated_at = now() WHERE id = :id",
               id=rng.choice(list(seeded.sections.values())), body=_words(rng, 8))


async def cite_memory(engine, seeded, rng):
    await _run(engine, "INSERT INTO wiki_section_sources (id, section_id, source_kind, source_ref) "
                       "VALUES (:id, :section, 'memory_unit', :ref) ON CONFLICT DO NOTHING",
               id=uuid.uuid4(), section=rng.choice(list(seeded.sections.values())), ref=str(uuid.uuid4()))


async def uncite_memory(engine, seeded, rng):
    await _run(engine, "DELETE FROM wiki_section_sources WHERE id = (SELECT id FROM wiki_section_sources "
                       "WHERE section_id = ANY(CAST(:sections AS uuid[])) ORDER BY random() LIMIT 1)",
               sections=list(seeded.sections.values()))


async def add_claim(engine, seeded, rng):
    claim = uuid.uuid4()
    async with engine.begin() as conn:
        await conn.execute(text(
            "INSERT INTO wiki_section_claims (id, section_id, position, text, text_key, kind, status, confidence, "
            "corroboration) VALUES (:id, :section, :position, :text, :text, 'fact', 'verified', 0.8, 1)"),
            {"id": claim, "section": rng.choice(list(seeded.sections.values())), "position": rng.randrange(100),
             "text": _words(rng, 5)})
        if rng.random() < 0.5:
            await conn.execute(text("INSERT INTO wiki_claim_sources (claim_id, tenant_id, owner_id, memory_id) "
                                    "SELECT :id, tenant_id, owner_id, :memory FROM wiki_pages WHERE id = :page"),
                               {"id": claim, "memory": rng.choice(seeded.memories), "page": seeded.pages["franklin"]})


async def change_claim(engine, seeded, rng):
    await _run(engine, "UPDATE wiki_section_claims SET text = :text, validity = :validity WHERE id = (SELECT c.id "
                       "FROM wiki_section_claims c WHERE c.section_id = ANY(CAST(:sections AS uuid[])) "
                       "ORDER BY random() LIMIT 1)",
               sections=list(seeded.sections.values()), text=_words(rng, 4),
               validity=rng.choice(["current", "superseded", "disputed"]))


async def drop_claim_source(engine, seeded, rng):
    await _run(engine, "DELETE FROM wiki_claim_sources WHERE (claim_id, memory_id) = (SELECT cs.claim_id, "
                       "cs.memory_id FROM wiki_claim_sources cs JOIN wiki_section_claims c ON c.id = cs.claim_id "
                       "WHERE c.section_id = ANY(CAST(:sections AS uuid[])) ORDER BY random() LIMIT 1)",
               sections=list(seeded.sections.values()))


WRITES: list[Write] = [retitle_page, archive_or_restore_page, add_alias, drop_alias, rewrite_section, cite_memory,
                       uncite_memory, add_claim, change_claim, drop_claim_source]


@pytest.fixture
async def two_servers(engine, server_settings):
    """(cached client, uncached client, counters of the cached one, acme seed, acme token, globex token)."""
    acme = await seed_scope(engine, "acme")
    await seed_scope(engine, "globex")

    async def no_temporal():
        raise RuntimeError("no Temporal in this test")

    # The test reads hundreds of times a second: the per-token rate limit is not its subject.
    settings = server_settings.model_copy(update={"http_rate_per_second": 100_000, "http_rate_burst": 100_000})
    counters = ServerCounters()
    cached = create_app(engine, no_temporal, settings, counters)
    uncached = create_app(engine, no_temporal, settings.model_copy(update={"http_read_cache_mib": 0}))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=cached), base_url="http://cached") as with_cache, \
            httpx.AsyncClient(transport=httpx.ASGITransport(app=uncached), base_url="http://plain") as without:
        yield (with_cache, without, counters, acme, await token_for(engine, "acme", rights="read"),
               await token_for(engine, "globex", rights="read"))


async def _answers(http: httpx.AsyncClient, token: str) -> list[tuple[int, object]]:
    answers = []
    for path, params in READS:
        response = await http.get(path, params=params, headers={"Authorization": f"Bearer {token}"})
        answers.append((response.status_code, response.json()))
    return answers


async def test_no_cached_answer_outlives_a_committed_write(engine, two_servers):
    with_cache, without, counters, acme, token, _ = two_servers
    rng = random.Random(24)
    await _answers(with_cache, token)  # every read kept
    # Every kind of write in each cycle, in a random order (a claim is changed only once one exists).
    writes = [write for _ in range(3) for write in rng.sample(WRITES, len(WRITES))]
    for write in writes:
        hits = counters.read_cache["hit"]
        assert await _answers(with_cache, token) == await _answers(without, token)  # served from the cache
        assert counters.read_cache["hit"] > hits
        await write(engine, acme, rng)
        assert await _answers(with_cache, token) == await _answers(without, token), write.__name__


async def test_a_scope_never_gets_another_scopes_answer_nor_loses_its_own_to_it(engine, two_servers):
    with_cache, without, counters, _, acme_token, globex_token = two_servers
    acme_first = await _answers(with_cache, acme_token)
    globex_first = await _answers(with_cache, globex_token)
    assert acme_first != globex_first  # the same paths, each scope's own text
    assert globex_first == await _answers(without, globex_token)
    # A write to globex leaves acme's answers kept.
    await _run(engine, "UPDATE wiki_pages SET title = 'Renamed' WHERE tenant_id = 'globex' AND slug = 'sam'")
    hits = counters.read_cache["hit"]
    assert await _answers(with_cache, acme_token) == acme_first
    assert counters.read_cache["hit"] - hits == len(CACHED)
    assert await _answers(with_cache, globex_token) == await _answers(without, globex_token)


async def test_a_transaction_revises_its_scope_once_at_commit_and_a_rollback_not_at_all(engine, two_servers):
    _, _, _, acme, _, _ = two_servers

    async def revision(tenant: str) -> int:
        async with engine.connect() as conn:
            return (await conn.execute(text("SELECT coalesce((SELECT wiki_revision FROM wiki_scope_revisions WHERE "
                                            "tenant_id = :t AND owner_id = :o), 0)"), {"t": tenant, "o": OWNER})
                    ).scalar_one()

    before, other = await revision("acme"), await revision("globex")
    async with engine.begin() as conn:
        for page in acme.pages.values():
            await conn.execute(text("UPDATE wiki_pages SET summary = 'x' WHERE id = :id"), {"id": page})
        await conn.execute(text("UPDATE wiki_page_sections SET body_md = 'y' WHERE id = :id"),
                           {"id": acme.sections["notes"]})
    assert await revision("acme") == before + 1 and await revision("globex") == other
    async with engine.connect() as conn:
        await conn.execute(text("UPDATE wiki_pages SET summary = 'z' WHERE id = :id"), {"id": acme.pages["sam"]})
        await conn.rollback()
    assert await revision("acme") == before + 1
