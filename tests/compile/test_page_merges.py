"""Resolution decisions on record, and an operator's page merge with its exact undo, through the real
pipeline (scripted planner, Postgres, Temporal), the CLI's use cases and the HTTP API."""

from __future__ import annotations

import uuid

import httpx
from sqlalchemy import text

from app import merges
from app.operations import rebuild_scope
from domain.memory import MemoryIn
from servers.http_api import create_app
from store.memories import store_memories
from tests.compile.helpers import compile_scope, running_worker, test_settings, wiki_snapshot
from tests.servers.wiki import token_for

TENANT, OWNER = "merges", "eval"
NS = uuid.UUID("1d6c1a8e-5b0e-4c53-9a61-0f2d3b4c5e6f")


def _memory(n: int, name: str, kind: str, content: str, day: int, address: str | None = None) -> MemoryIn:
    metadata: dict = {"entities": [{"name": name, "type": "entity", "kind": kind}]}
    if address:
        metadata["place"] = {"name": name, "city": "Austin", "address": address, "types": [kind]}
    return MemoryIn.model_validate({"id": str(uuid.uuid5(NS, str(n))), "content": content, "metadata": metadata,
                                    "occurred_at": f"2026-03-{day:02d}T12:00:00Z"})


ODD_DUCK = "1201 S Lamar Blvd, Austin, TX 78704"
EMMER = "51 Rainey St, Austin, TX 78701"
FIRST = [
    _memory(1, "Odd Duck", "restaurant", "Dinner at Odd Duck; the pork belly was great.", 1, ODD_DUCK),
    _memory(2, "Odd Duck", "restaurant", "Odd Duck again with Lena.", 2, ODD_DUCK),
    _memory(3, "Emmer & Rye", "restaurant", "Emmer & Rye for the dim sum cart.", 3, EMMER),
    _memory(4, "Emmer & Rye", "restaurant", "Lunch at Emmer & Rye.", 4, EMMER),
    _memory(5, "Tistend Modern Museum", "museum", "Saw the print show at Tistend Modern Museum.", 5,
            "400 Congress Ave, Austin, TX 78701"),
    _memory(6, "Tistend Modern Museum", "museum", "Tistend Modern Museum members night.", 6,
            "400 Congress Ave, Austin, TX 78701"),
]
# Later batches write the same places otherwise: "and" for "&" (the name key) and an acronym (the judge).
LATER = [
    _memory(7, "Emmer and Rye", "restaurant", "Emmer and Rye had a new pasta.", 7, EMMER),
    _memory(8, "Emmer and Rye", "restaurant", "Birthday dinner at Emmer and Rye.", 8, EMMER),
    _memory(9, "TMM", "museum", "TMM opened a new wing.", 9, "400 Congress Ave, Austin, TX 78701"),
    _memory(10, "TMM", "museum", "Took the kids to TMM.", 10, "400 Congress Ave, Austin, TX 78701"),
]


async def _titles(engine) -> dict[str, str]:
    async with engine.connect() as conn:
        rows = await conn.execute(text("SELECT type || '/' || slug AS key, status FROM wiki_pages "
                                       "WHERE tenant_id = :t AND owner_id = :o"), {"t": TENANT, "o": OWNER})
        return {row.key: row.status for row in rows}


async def test_decisions_are_kept_and_an_operator_merge_is_undone_exactly(engine, client):
    settings = test_settings(WIKI_RECORD_PAGE_SIZE=6)
    async with running_worker(client, engine, settings):
        await store_memories(engine, TENANT, OWNER, FIRST)
        await compile_scope(client, settings, TENANT, OWNER)
        await store_memories(engine, TENANT, OWNER, LATER)
        await compile_scope(client, settings, TENANT, OWNER)

        pages = await _titles(engine)
        assert {key for key, status in pages.items() if status == "active" and key.startswith("entity/")} == {
            "entity/odd-duck", "entity/emmer-rye", "entity/tistend-modern-museum"}, pages
        async with engine.connect() as conn:
            emmer = await merges.page_resolution(conn, TENANT, OWNER, "entity", "emmer-rye")
            museum = await merges.page_resolution(conn, TENANT, OWNER, "entity", "tistend-modern-museum")
        # Every way a name reached the page is on record, with who decided and why.
        assert emmer is not None and museum is not None
        assert any(d.same and "Emmer and Rye" in d.names for d in emmer.decisions), emmer
        acronym = [d for d in museum.decisions if "TMM" in d.names]
        assert acronym and acronym[0].same and acronym[0].decided_by in ("judge", "planner"), museum

        async with engine.begin() as conn:
            merged = await merges.merge(conn, TENANT, OWNER, ("entity", "odd-duck"), ("entity", "emmer-rye"))
        assert merged.sections_moved >= 1 and merged.aliases_moved >= 1
        assert (await _titles(engine))["entity/odd-duck"] == "archived"
        async with engine.connect() as conn:
            joined = await merges.page_resolution(conn, TENANT, OWNER, "entity", "emmer-rye")
        assert joined is not None and joined.merges[0].source == "entity/odd-duck"

        # The merge stands through the next compile: Odd Duck's memories land on Emmer & Rye.
        await store_memories(engine, TENANT, OWNER, [
            _memory(11, "Odd Duck", "restaurant", "Odd Duck brunch.", 11, ODD_DUCK),
            _memory(12, "Odd Duck", "restaurant", "Odd Duck late night.", 12, ODD_DUCK)])
        await compile_scope(client, settings, TENANT, OWNER)
        assert (await _titles(engine))["entity/odd-duck"] == "archived"

        # An operator's merge through HTTP needs an operator token.
        reader = await token_for(engine, TENANT, OWNER, rights="read")
        operator = await token_for(engine, TENANT, OWNER, rights="operator")
        app = create_app(engine, lambda: client, settings)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://api") as http:
            refused = await http.post("/v1/pages/entity/odd-duck/unmerge", headers={"Authorization": f"Bearer {reader}"})
            assert refused.status_code == 403 and "operator" in refused.json()["error"]
            record = await http.get("/v1/pages/entity/emmer-rye/merges", headers={"Authorization": f"Bearer {reader}"})
            assert record.status_code == 200 and record.json()["merges"][0]["source"] == "entity/odd-duck"
            bad = await http.post("/v1/pages/entity/emmer-rye/merge", json={"into": "entity/no-such-page"},
                                  headers={"Authorization": f"Bearer {operator}"})
            assert bad.status_code == 404 and bad.json()["error"].startswith("no page")
            undone = await http.post("/v1/pages/entity/odd-duck/unmerge",
                                     headers={"Authorization": f"Bearer {operator}"})
            assert undone.status_code == 200, undone.text
            again = await http.post("/v1/pages/entity/odd-duck/unmerge",
                                    headers={"Authorization": f"Bearer {operator}"})
            assert again.status_code == 409 and "not merged" in again.json()["error"]
        assert (await _titles(engine))["entity/odd-duck"] == "active"

        # Unmerged right after merging, the wiki is exactly what it was, row for row.
        before = await wiki_snapshot(engine, TENANT, OWNER)
        async with engine.begin() as conn:
            await merges.merge(conn, TENANT, OWNER, ("entity", "emmer-rye"), ("entity", "odd-duck"))
        assert await wiki_snapshot(engine, TENANT, OWNER) != before
        async with engine.begin() as conn:
            await merges.unmerge(conn, TENANT, OWNER, ("entity", "emmer-rye"))
        assert await wiki_snapshot(engine, TENANT, OWNER) == before

        # And it survives a rebuild: merged again, the rebuilt wiki keeps Odd Duck on Emmer & Rye.
        async with engine.begin() as conn:
            await merges.merge(conn, TENANT, OWNER, ("entity", "odd-duck"), ("entity", "emmer-rye"))
        _, handle = await rebuild_scope(client, engine, settings, TENANT, OWNER)
        await handle.result()
        rebuilt = await _titles(engine)
        assert "entity/odd-duck" not in rebuilt and rebuilt["entity/emmer-rye"] == "active", rebuilt
        async with engine.connect() as conn:
            aliases = {row.alias for row in await conn.execute(text(
                "SELECT a.alias FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id "
                "WHERE p.tenant_id = :t AND p.owner_id = :o AND p.slug = 'emmer-rye'"), {"t": TENANT, "o": OWNER})}
        assert "odd duck" in aliases
