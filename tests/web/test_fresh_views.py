"""The views the server keeps per scope revision (home, graph, page) are served again while the scope
is unchanged, and never outlive a committed write: after any write, the next view shows it."""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from markupsafe import escape
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from tests.web.conftest import OWNER, TENANT, ServedWiki

SCOPE = {"tenant": TENANT, "owner": OWNER}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def counted(home: str, what: str) -> int:
    return int(re.search(rf"<strong>(\d+)</strong> {what}", home).group(1))


@asynccontextmanager
async def writing(wiki: ServedWiki, *, unnoticed: bool = False) -> AsyncIterator[AsyncConnection]:
    """A committed transaction on the shared wiki; `unnoticed` writes with triggers off (as a replica
    applies changes), so the scope's revision does not move: what a kept view cannot know about."""
    async with wiki.engine.begin() as conn:
        if unnoticed:
            await conn.execute(text("SET LOCAL session_replication_role = replica"))
        yield conn


async def a_page(wiki: ServedWiki, rng: random.Random) -> dict:
    async with wiki.engine.connect() as conn:
        rows = (await conn.execute(text("""
            SELECT p.id, p.type, p.slug, p.title, s.id AS section, c.id AS claim, c.text AS claim_text
            FROM wiki_pages p JOIN wiki_page_sections s ON s.page_id = p.id
            JOIN wiki_section_claims c ON c.section_id = s.id
            WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
            ORDER BY p.type, p.slug, s.position, c.position
        """), SCOPE)).all()
    return dict(rng.choice(rows)._mapping)


async def test_a_kept_view_is_served_until_a_write_moves_the_revision(served_wiki: ServedWiki):
    page = await a_page(served_wiki, random.Random(5))
    claim_id = uuid.uuid4()
    async with httpx.AsyncClient(base_url=served_wiki.base, timeout=20,
                                 headers=bearer(served_wiki.read_token)) as http:
        claims = counted((await http.get("/")).text, "claims")
        try:
            async with writing(served_wiki, unnoticed=True) as conn:
                await conn.execute(text("""
                    INSERT INTO wiki_section_claims (id, section_id, position, text, text_key, kind, status,
                                                     confidence, corroboration)
                    VALUES (:id, :section, 99, 'Unnoticed claim.', 'unnoticed', 'fact', 'verified', 0.7, 1)
                """), {"id": claim_id, "section": page["section"]})
            # The home kept at this revision is served again: the unnoticed claim is not counted.
            assert counted((await http.get("/")).text, "claims") == claims
            async with writing(served_wiki) as conn:  # any committed write: here, a claim seen again
                await conn.execute(text("UPDATE wiki_section_claims SET last_seen_at = now() WHERE id = :id"),
                                   {"id": page["claim"]})
            assert counted((await http.get("/")).text, "claims") == claims + 1
        finally:
            async with writing(served_wiki) as conn:
                await conn.execute(text("DELETE FROM wiki_section_claims WHERE id = :id"), {"id": claim_id})
        assert counted((await http.get("/")).text, "claims") == claims


async def _retitle(conn: AsyncConnection, page: dict, mark: str) -> dict[str, str]:
    await conn.execute(text("UPDATE wiki_pages SET title = :title WHERE id = :id"),
                       {"id": page["id"], "title": f"{page['title']} {mark}"})
    return {"graph": f"{page['title']} {mark}", "page": f"<h1>{escape(page['title'])} {mark}</h1>"}


async def _reword_claim(conn: AsyncConnection, page: dict, mark: str) -> dict[str, str]:
    await conn.execute(text("UPDATE wiki_section_claims SET text = text || :mark WHERE id = :id"),
                       {"id": page["claim"], "mark": f" {mark}"})
    return {"page": mark}


async def _add_claim(conn: AsyncConnection, page: dict, mark: str) -> dict[str, str]:
    await conn.execute(text("""
        INSERT INTO wiki_section_claims (id, section_id, position, text, text_key, kind, status, confidence,
                                         corroboration)
        VALUES (:id, :section, 98, :text, :text, 'fact', 'unverified', NULL, 1)
    """), {"id": uuid.uuid4(), "section": page["section"], "text": f"Added claim {mark}."})
    return {"page": f"Added claim {mark}."}


async def _archive(conn: AsyncConnection, page: dict, mark: str) -> dict[str, str]:
    await conn.execute(text("UPDATE wiki_pages SET status = 'archived' WHERE id = :id"), {"id": page["id"]})
    return {"gone": f"/wiki/{page['type']}/{page['slug']}"}


WRITES = [_retitle, _reword_claim, _add_claim, _archive]


@pytest.mark.parametrize("seed", [11, 12])
async def test_after_any_committed_write_the_next_view_shows_it(served_wiki: ServedWiki, seed: int):
    """Seeded sequences of writes to the shared wiki (each put back afterwards), each followed by the
    views it changes, read after the views were kept at the revision before it."""
    rng = random.Random(seed)
    async with served_wiki.engine.connect() as conn:
        saved_pages = (await conn.execute(text("SELECT id, title, status FROM wiki_pages WHERE tenant_id = :tenant "
                                               "AND owner_id = :owner"), SCOPE)).all()
        saved_claims = {row.id for row in await conn.execute(text(
            "SELECT c.id FROM wiki_section_claims c JOIN wiki_page_sections s ON s.id = c.section_id "
            "JOIN wiki_pages p ON p.id = s.page_id WHERE p.tenant_id = :tenant AND p.owner_id = :owner"), SCOPE)}
        saved_texts = dict((await conn.execute(text(
            "SELECT c.id, c.text FROM wiki_section_claims c WHERE c.id = ANY(:ids)"),
            {"ids": list(saved_claims)})).all())
    try:
        async with httpx.AsyncClient(base_url=served_wiki.base, timeout=20,
                                     headers=bearer(served_wiki.read_token)) as http:
            for step in range(6):
                page = await a_page(served_wiki, rng)
                address = f"/wiki/{page['type']}/{page['slug']}"
                for kept in ("/", "/graph", address):  # keep every view at the current revision
                    assert (await http.get(kept)).status_code == 200
                write = rng.choice(WRITES)
                mark = f"mark{seed}x{step}"
                async with writing(served_wiki) as conn:
                    expected = await write(conn, page, mark)
                shown_page = await http.get(address)
                graph = (await http.get("/graph")).text
                if "gone" in expected:
                    assert shown_page.status_code == 404, write.__name__
                    assert f'href="{expected["gone"]}"' not in graph, write.__name__
                else:
                    assert expected["page"] in shown_page.text, write.__name__
                if "graph" in expected:
                    assert escape(expected["graph"]) in graph, write.__name__
    finally:
        async with served_wiki.engine.begin() as conn:
            for row in saved_pages:
                await conn.execute(text("UPDATE wiki_pages SET title = :title, status = :status WHERE id = :id"),
                                   dict(row._mapping))
            await conn.execute(text("""
                DELETE FROM wiki_section_claims c USING wiki_page_sections s, wiki_pages p
                WHERE c.section_id = s.id AND s.page_id = p.id AND p.tenant_id = :tenant AND p.owner_id = :owner
                  AND NOT c.id = ANY(:kept)
            """), {**SCOPE, "kept": list(saved_claims)})
            for claim_id, claim_text in saved_texts.items():
                await conn.execute(text("UPDATE wiki_section_claims SET text = :text WHERE id = :id AND text <> :text"),
                                   {"id": claim_id, "text": claim_text})
