"""A page view's related pages are the API's `related` ranking over two links, read in one statement."""

from __future__ import annotations

from sqlalchemy import text

from app import reads, web_views
from app.reads import ReadScope
from tests.web.conftest import MOVES, OWNER, TENANT, ServedWiki


async def test_the_page_view_ranks_related_pages_as_the_api_does(served_wiki: ServedWiki):
    compared = 0
    async with served_wiki.engine.connect() as conn:
        for tenant in (TENANT, MOVES):
            scope = ReadScope(tenant=tenant, owner=OWNER)
            pages = (await conn.execute(text("SELECT type, slug FROM wiki_pages WHERE tenant_id = :t AND owner_id = :o "
                                             "AND status = 'active' ORDER BY type, slug"),
                                        {"t": tenant, "o": OWNER})).all()
            for page in pages:
                shown = await web_views.page_view(conn, scope, page.type, page.slug)
                api = await reads.related(conn, scope, f"{page.type}/{page.slug}", web_views.RELATED_SHOWN,
                                          max_hops=web_views.RELATED_HOPS)
                assert [(hit.type, hit.slug, hit.hops, hit.direction) for hit in shown.related] == \
                    [(hit.type, hit.slug, hit.hops, hit.direction) for hit in api.hits], f"{page.type}/{page.slug}"
                compared += bool(api.hits)
    assert compared >= 20  # most pages of the compiled sample have related pages
