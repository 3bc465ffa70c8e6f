"""The web view in a real browser (Debian's chromium through playwright): every view opened by
clicking from the sign-in page, a citation opened, a search, a link followed, and not one console
error (a Content-Security-Policy violation is one) or failed request on the way."""

from __future__ import annotations

from sqlalchemy import text

from tests.web.browser import PAGE_TO_VISIT, chromium, tour_views
from tests.web.conftest import OWNER, TENANT, ServedWiki


async def test_every_view_in_chromium_without_a_console_error(served_wiki: ServedWiki, tmp_path):
    async with served_wiki.engine.connect() as conn:
        title = (await conn.execute(text(PAGE_TO_VISIT), {"t": TENANT, "o": OWNER})).scalar_one()
    async with chromium() as browser:
        tour = await tour_views(browser, served_wiki.base, served_wiki.read_token, title, tmp_path)
    assert tour.console_errors == [] and tour.failed_requests == []
    assert set(tour.visited) >= {"sign-in", "home", "search", "page", "memory", "followed-link", "graph",
                                 "graph-node", "runs"}
    assert tour.search_hits >= 1
    assert tour.citation_text.strip() and "memory" in tour.citation_text  # the memory's text, date and link
    assert all(path.stat().st_size > 10_000 for path in tour.shots.values())
    assert "/wiki/" in tour.visited["followed-link"] and "/wiki/" in tour.visited["graph-node"]
