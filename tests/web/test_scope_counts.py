"""The home's counts: exact up to the sampled number of pages, estimated past it from a sample of
pages scaled to the whole (and said to be estimated), on generated scopes."""

from __future__ import annotations

import random
import uuid
from types import SimpleNamespace

import pytest
from sqlalchemy import text

from app.reads import ReadScope
from app.web_views import HomeView
from servers.web.views import Viewer
from servers.web.views import page as web_page
from store.web_reads import ScopeCounts, scope_counts


async def _generated_scope(engine, rng: random.Random, tenant: str, pages: int) -> tuple[int, int]:
    """`pages` active pages (and a few archived ones) with a random number of claims and links each;
    the true counts of claims and links on the active pages."""
    ids = [uuid.uuid4() for _ in range(pages)]
    claims = links = 0
    page_rows, section_rows, claim_rows, link_rows = [], [], [], []
    for number, page in enumerate(ids):
        status = "archived" if rng.random() < 0.05 else "active"
        page_rows.append({"id": page, "tenant": tenant, "type": rng.choice(["entity", "topic", "decision"]),
                          "slug": f"p{number}", "status": status})
        section = uuid.uuid4()
        section_rows.append({"id": section, "page": page})
        made = rng.randint(0, 6)
        claim_rows += [{"id": uuid.uuid4(), "s": section, "n": position} for position in range(made)]
        targets = rng.sample(ids[:number], min(number, rng.randint(0, 4)))
        link_rows += [{"id": uuid.uuid4(), "a": page, "b": target} for target in targets]
        if status == "active":
            claims += made
            links += len(targets)
    async with engine.begin() as conn:
        await conn.execute(text("INSERT INTO wiki_pages (id, tenant_id, owner_id, type, slug, title, status) "
                                "VALUES (:id, :tenant, 'o', :type, :slug, :slug, :status)"), page_rows)
        await conn.execute(text("INSERT INTO wiki_page_sections (id, page_id, section_slug, heading, body_md, "
                                "position) VALUES (:id, :page, 'overview', 'Overview', 'x', 1)"), section_rows)
        await conn.execute(text("INSERT INTO wiki_section_claims (id, section_id, position, text, text_key, kind, "
                                "status, confidence, corroboration) VALUES (:id, :s, :n, 'c', 'c', 'fact', "
                                "'verified', 0.7, 1)"), claim_rows)
        await conn.execute(text("INSERT INTO wiki_page_links (id, from_page_id, to_page_id) VALUES (:id, :a, :b)"),
                           link_rows)
    return claims, links


@pytest.mark.parametrize("seed", [3, 4])
async def test_counts_are_exact_when_the_pages_are_few_and_estimated_past_that(engine, seed):
    rng = random.Random(seed)
    tenant = f"counts{seed}"
    claims, links = await _generated_scope(engine, rng, tenant, 400)
    async with engine.connect() as conn:
        exact = await scope_counts(conn, tenant, "o", sampled_pages=1000)
        estimated = await scope_counts(conn, tenant, "o", sampled_pages=100)
    assert (exact.claims, exact.links, exact.estimated_from) == (claims, links, None)
    assert sum(exact.pages_by_type.values()) == sum(estimated.pages_by_type.values())
    assert estimated.estimated_from is not None and 60 <= estimated.estimated_from <= 140
    assert abs(estimated.claims - claims) <= 0.25 * claims
    assert abs(estimated.links - links) <= 0.25 * links


def test_the_home_marks_estimated_counts_and_says_how_they_were_made():
    viewer = Viewer(ReadScope(tenant="t", owner="o"), "read", "token", None, by_cookie=False)  # type: ignore[arg-type]
    for estimated_from in (None, 296):
        counts = ScopeCounts(pages_by_type={"entity": 9000, "topic": 1000}, memories=10, claims=90123, links=50001,
                             runs=3, estimated_from=estimated_from)
        request = SimpleNamespace(url=SimpleNamespace(path="/"))
        html = bytes(web_page(request, "home.html", viewer=viewer,  # type: ignore[arg-type]
                          view=HomeView(counts=counts, recent=[], hubs=[])).body).decode()
        assert ("≈ <strong>90123</strong> claims" in html) == (estimated_from is not None)
        assert ("counted on 296 of the\n  10000 pages" in html) == (estimated_from is not None)
        assert "<strong>10</strong> memories" in html  # memories are always exact
