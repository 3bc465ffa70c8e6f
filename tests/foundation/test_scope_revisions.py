"""A scope's revision moves once per committed transaction that wrote any table a view reads for
that scope, at commit, and never for a rolled-back write or another scope's (migration 0012)."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from store.scope_revisions import scope_revision, wiki_revision

SCOPES = [("rev-a", "alice"), ("rev-b", "alice"), ("rev-a", "bob")]


@dataclass
class Scope:
    tenant: str
    owner: str
    page: uuid.UUID = field(default_factory=uuid.uuid4)
    other_page: uuid.UUID = field(default_factory=uuid.uuid4)
    section: uuid.UUID = field(default_factory=uuid.uuid4)
    claim: uuid.UUID = field(default_factory=uuid.uuid4)
    rows: dict[str, list[dict]] = field(default_factory=dict)  # rows a test inserted, by table

    @property
    def names(self) -> dict:
        return {"tenant": self.tenant, "owner": self.owner, "page": self.page, "other": self.other_page,
                "section": self.section, "claim": self.claim}


# Per table: how to insert a fresh row of a scope, change it, and delete it (each by the row's params).
_INSERT = {
    "wiki_pages": "INSERT INTO wiki_pages (id, tenant_id, owner_id, type, slug, title) "
                  "VALUES (:id, :tenant, :owner, 'topic', :word, :word)",
    "memory_units": "INSERT INTO memory_units (id, tenant_id, owner_id, content) VALUES (:id, :tenant, :owner, :word)",
    "wiki_claim_sources": "INSERT INTO wiki_claim_sources (claim_id, tenant_id, owner_id, memory_id) "
                          "VALUES (:claim, :tenant, :owner, :word)",
    "wiki_compile_jobs": "INSERT INTO wiki_compile_jobs (id, tenant_id, owner_id, workflow_id, run_id, trigger) "
                         "VALUES (:id, :tenant, :owner, 'wf', :word, 'admin')",
    "wiki_page_sections": "INSERT INTO wiki_page_sections (id, page_id, section_slug, heading, body_md, position) "
                          "VALUES (:id, :page, :word, :word, 'x', 9)",
    "wiki_page_aliases": "INSERT INTO wiki_page_aliases (id, page_id, alias) VALUES (:id, :page, :word)",
    "wiki_page_links": "INSERT INTO wiki_page_links (id, from_page_id, to_page_id, context) "
                       "VALUES (:id, :page, :other, :word)",
    "wiki_section_claims": "INSERT INTO wiki_section_claims (id, section_id, position, text, text_key, kind, status, "
                           "confidence, corroboration) VALUES (:id, :section, 5, :word, :word, 'fact', 'verified', 0.7, 1)",
    "wiki_section_sources": "INSERT INTO wiki_section_sources (id, section_id, source_kind, source_ref) "
                            "VALUES (:id, :section, 'memory_unit', :word)",
}
_KEY = {table: "claim_id = :claim AND memory_id = :word" if table == "wiki_claim_sources" else "id = :id"
        for table in _INSERT}
_CHANGE = {
    "wiki_pages": "title = title || '!'", "memory_units": "content = content || '!'",
    "wiki_claim_sources": "tenant_id = tenant_id", "wiki_compile_jobs": "status = 'succeeded'",
    "wiki_page_sections": "heading = heading || '!'", "wiki_page_aliases": "alias = alias || '!'",
    "wiki_page_links": "context = context || '!'", "wiki_section_claims": "confidence = 0.8",
    "wiki_section_sources": "source_ref = source_ref || '!'",
}
assert set(_CHANGE) == set(_INSERT)
# A scope's two pages hold one reference link from the first to the second at most.
_AT_MOST = {"wiki_page_links": 1}


async def _revisions(engine: AsyncEngine) -> dict[tuple[str, str], int]:
    async with engine.connect() as conn:
        return {scope: await scope_revision(conn, *scope) for scope in SCOPES}


async def _wiki_revisions(engine: AsyncEngine) -> dict[tuple[str, str], int]:
    async with engine.connect() as conn:
        return {scope: await wiki_revision(conn, *scope) for scope in SCOPES}


# The tables a retain or a run writes: they move a scope's revision but not its wiki revision.
NOT_WIKI = {"memory_units", "wiki_compile_jobs"}


async def _pending_notes(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        return (await conn.execute(text("SELECT count(*) FROM wiki_scope_writes"))).scalar_one()


async def _base(engine: AsyncEngine) -> dict[tuple[str, str], Scope]:
    scopes = {key: Scope(*key) for key in SCOPES}
    async with engine.begin() as conn:
        for scope in scopes.values():
            names = scope.names
            await conn.execute(text("INSERT INTO wiki_pages (id, tenant_id, owner_id, type, slug, title) VALUES "
                                    "(:page, :tenant, :owner, 'entity', 'p', 'P'), "
                                    "(:other, :tenant, :owner, 'entity', 'q', 'Q')"), names)
            await conn.execute(text("INSERT INTO wiki_page_sections (id, page_id, section_slug, heading, body_md, "
                                    "position) VALUES (:section, :page, 'overview', 'Overview', 'x', 1)"), names)
            await conn.execute(text("INSERT INTO wiki_section_claims (id, section_id, position, text, text_key, kind, "
                                    "status, confidence, corroboration) VALUES (:claim, :section, 1, 'c', 'c', "
                                    "'fact', 'verified', 0.7, 1)"), names)
    return scopes


async def _write(conn: AsyncConnection, rng: random.Random, scope: Scope, table: str) -> str:
    """One insert, change or delete of `table` in the scope; what it did."""
    kept = scope.rows.setdefault(table, [])
    full = len(kept) >= _AT_MOST.get(table, 10**6)
    action = rng.choice(["change", "delete"] if full else ["insert", "change", "delete"]) if kept else "insert"
    if action == "insert":
        row = {**scope.names, "id": uuid.uuid4(), "word": f"w{rng.randrange(10**9)}"}
        await conn.execute(text(_INSERT[table]), row)
        kept.append(row)
    elif action == "change":
        row = rng.choice(kept)
        await conn.execute(text(f"UPDATE {table} SET {_CHANGE[table]} WHERE {_KEY[table]}"), row)
    else:
        row = kept.pop(rng.randrange(len(kept)))
        await conn.execute(text(f"DELETE FROM {table} WHERE {_KEY[table]}"), row)
    return f"{action} {table} of {scope.tenant}/{scope.owner}"


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_generated_writes_move_exactly_the_revisions_of_the_scopes_they_commit(engine, seed):
    rng = random.Random(seed)
    scopes = await _base(engine)
    for _ in range(25):
        before, wiki_before = await _revisions(engine), await _wiki_revisions(engine)
        touched: set[tuple[str, str]] = set()
        touched_wiki: set[tuple[str, str]] = set()
        done = []
        rollback = rng.random() < 0.2
        snapshot = {key: {t: list(rows) for t, rows in s.rows.items()} for key, s in scopes.items()}
        async with engine.connect() as conn:
            transaction = await conn.begin()
            for _ in range(rng.randint(1, 4)):
                key = rng.choice(SCOPES)
                table = rng.choice(sorted(_INSERT))
                done.append(await _write(conn, rng, scopes[key], table))
                touched.add(key)
                if table not in NOT_WIKI:
                    touched_wiki.add(key)
            assert await _revisions(engine) == before, "the revision moves at commit, not at the write"
            if rollback:
                await transaction.rollback()
                for key, rows in snapshot.items():
                    scopes[key].rows = rows
            else:
                await transaction.commit()
        expected = {key: before[key] + (key in touched and not rollback) for key in SCOPES}
        assert await _revisions(engine) == expected, (done, rollback)
        wiki_expected = {key: wiki_before[key] + (key in touched_wiki and not rollback) for key in SCOPES}
        assert await _wiki_revisions(engine) == wiki_expected, (done, rollback)
        assert await _pending_notes(engine) == 0


async def test_a_page_deleted_with_everything_under_it_moves_its_scope_once(engine):
    scopes = await _base(engine)
    scope = scopes[SCOPES[0]]
    async with engine.begin() as conn:
        await conn.execute(text(_INSERT["wiki_page_links"]), {**scope.names, "id": uuid.uuid4(), "word": "x"})
        await conn.execute(text(_INSERT["wiki_claim_sources"]), {**scope.names, "word": "m1"})
    before = await _revisions(engine)
    async with engine.begin() as conn:
        await conn.execute(text("DELETE FROM wiki_pages WHERE id = :page"), scope.names)
    after = await _revisions(engine)
    assert after == {**before, SCOPES[0]: before[SCOPES[0]] + 1}
    assert await _pending_notes(engine) == 0


async def test_a_scope_never_written_is_at_revision_zero(engine):
    async with engine.connect() as conn:
        assert await scope_revision(conn, "nobody", "here") == 0


@pytest.mark.parametrize("savepoint_kept", [False, True])
async def test_a_write_after_a_savepoint_rolled_back_still_moves_the_revision(engine, savepoint_kept):
    scopes = await _base(engine)
    scope = scopes[SCOPES[1]]
    before = await _revisions(engine)
    async with engine.begin() as conn:
        nested = await conn.begin_nested()
        await conn.execute(text("UPDATE wiki_pages SET title = 'inside' WHERE id = :page"), scope.names)
        await (nested.commit() if savepoint_kept else nested.rollback())
        await conn.execute(text("UPDATE wiki_section_claims SET confidence = 0.9 WHERE id = :claim"), scope.names)
    assert await _revisions(engine) == {**before, SCOPES[1]: before[SCOPES[1]] + 1}
    assert await _pending_notes(engine) == 0
