"""The web view in a real browser (Debian's chromium through playwright): every view opened by
clicking from the sign-in page, a citation opened, a search, a link followed, and not one console
error (a Content-Security-Policy violation is one) or failed request on the way."""

from __future__ import annotations

from sqlalchemy import text

from tests.web.browser import chromium, tour_views
from tests.web.conftest import OWNER, TENANT, ServedWiki

# A page with claims citing memories and a link in or out, the best connected first.
_PAGE_TO_VISIT = """
    SELECT p.title FROM wiki_pages p
    WHERE p.tenant_id = :t AND p.owner_id = :o AND p.status = 'active'
      AND EXISTS (SELECT 1 FROM wiki_page_sections s JOIN wiki_section_claims c ON c.section_id = s.id
                  JOIN wiki_claim_sources cs ON cs.claim_id = c.id WHERE s.page_id = p.id)
      AND EXISTS (SELECT 1 FROM wiki_page_links l JOIN wiki_pages f ON f.id = l.from_page_id
                  WHERE l.to_page_id = p.id AND f.status = 'active')
    ORDER BY p.hubness_score DESC, p.title LIMIT 1
"""


async def test_every_view_in_chromium_without_a_console_error(served_wiki: ServedWiki, tmp_path):
    async with served_wiki.engine.connect() as conn:
        title = (await conn.execute(text(_PAGE_TO_VISIT), {"t": TENANT, "o": OWNER})).scalar_one()
    async with chromium() as browser:
        tour = await tour_views(browser, served_wiki.base, served_wiki.read_token, title, tmp_path)
    assert tour.console_errors == [] and tour.failed_requests == []
    assert set(tour.visited) >= {"sign-in", "home", "search", "page", "memory", "followed-link", "graph",
                                 "graph-node", "runs"}
    assert tour.search_hits >= 1
    assert tour.citation_text.strip() and "memory" in tour.citation_text  # the memory's text, date and link
    assert all(path.stat().st_size > 10_000 for path in tour.shots.values())
    assert "/wiki/" in tour.visited["followed-link"] and "/wiki/" in tour.visited["graph-node"]
