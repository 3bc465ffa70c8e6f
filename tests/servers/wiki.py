"""A small wiki seeded straight into the database for the read-surface tests: two tenants that share
page names (each with its own content), links with a cycle, sections citing memories."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from domain.tokens import new_token
from store.api_tokens import create_token
from tests.operators import helpers as db

OWNER = "alice"
TENANTS = ("acme", "globex")


@dataclass
class Seeded:
    pages: dict[str, uuid.UUID] = field(default_factory=dict)
    memories: list[str] = field(default_factory=list)
    sections: dict[str, uuid.UUID] = field(default_factory=dict)


async def seed_tenants(engine: AsyncEngine) -> dict[str, Seeded]:
    """Both tenants seeded, by tenant: the isolation tests need the same names on either side."""
    return {tenant: await seed_scope(engine, tenant) for tenant in TENANTS}


async def seed_scope(engine: AsyncEngine, tenant: str) -> Seeded:
    """The same page names in every tenant; the text says which tenant it belongs to."""
    seeded = Seeded()
    seeded.memories = await db.memories(engine, tenant, OWNER, [
        f"[{tenant}] Had brisket at Franklin Barbecue in Austin with Sam.",
        f"[{tenant}] The line at Franklin was two hours long.",
        f"[{tenant}] Moved to Austin, Texas in March.",
    ])
    pages = seeded.pages
    pages["austin"] = await db.page(engine, tenant, OWNER, "austin-texas", title="Austin, Texas",
                                    summary=f"The city where Alice lives ({tenant}).", body=f"Austin {tenant}")
    pages["franklin"] = await db.page(engine, tenant, OWNER, "franklin-barbecue", title="Franklin Barbecue",
                                      summary=f"Brisket in Austin ({tenant}).", body=f"Brisket barbecue {tenant}")
    pages["sam"] = await db.page(engine, tenant, OWNER, "sam", title="Sam", summary="A friend.", body="Sam")
    pages["bbq"] = await db.page(engine, tenant, OWNER, "austin-bbq", page_type="topic", title="Austin BBQ",
                                 summary="Barbecue places in Austin.", body="barbecue")
    pages["old"] = await db.page(engine, tenant, OWNER, "old-diner", title="Old Diner", status="archived",
                                 body="barbecue")
    await db.alias(engine, pages["austin"], "austin texas")
    await db.alias(engine, pages["austin"], "atx")
    await db.alias(engine, pages["franklin"], "franklin barbecue")
    await db.alias(engine, pages["franklin"], "franklin's")
    await db.alias(engine, pages["sam"], "sam")
    # franklin -> austin, franklin <-> sam (a cycle), bbq -> franklin (parent_of), franklin -> bbq (child_of),
    # franklin -> old (archived: never walked).
    await db.link(engine, pages["franklin"], pages["austin"])
    await db.link(engine, pages["franklin"], pages["sam"], context="co_mention:x")
    await db.link(engine, pages["sam"], pages["franklin"], context="co_mention:x")
    await db.link(engine, pages["bbq"], pages["franklin"], kind="parent_of")
    await db.link(engine, pages["franklin"], pages["bbq"], kind="child_of")
    await db.link(engine, pages["franklin"], pages["old"])
    seeded.sections["overview"] = await db.section(
        engine, pages["franklin"], "overview", f"Franklin Barbecue serves brisket ({tenant}).", 1,
        sources=seeded.memories[:2])
    seeded.sections["notes"] = await db.section(
        engine, pages["franklin"], "notes", "The line is long.", 2, sources=[seeded.memories[1]])
    await db.section(engine, pages["austin"], "overview", f"Austin is in Texas ({tenant}).", 1,
                     sources=[seeded.memories[2]])
    return seeded


async def token_for(engine: AsyncEngine, tenant: str, owner: str = OWNER, rights: str = "write",
                    expires_at: datetime | None = None) -> str:
    token = new_token()
    async with engine.begin() as conn:
        await create_token(conn, tenant, owner, token, name="test", rights=rights, expires_at=expires_at)
    return token
