"""The web view over HTTP (servers/web/): signing in with a cookie, every view of a compiled wiki, the
scope of the token, CSRF and origin checks on every state-changing form, the security headers, and
untrusted memory text that never becomes markup."""

from __future__ import annotations

import html
import re
from collections import deque
from urllib.parse import urlsplit

import httpx
import pytest
from markupsafe import escape
from sqlalchemy import text

from servers.web.session import CONTENT_SECURITY_POLICY, csrf_for
from tests.web.conftest import OWNER, RIVAL, TENANT, ServedWiki

HREF = re.compile(r'href="([^"]+)"')
TEMPORAL_UI = "http://127.0.0.1:8233/namespaces/default/workflows/"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def active_pages(wiki: ServedWiki, tenant: str = TENANT) -> list[tuple[str, str, str]]:
    async with wiki.engine.connect() as conn:
        rows = await conn.execute(text("SELECT type, slug, title FROM wiki_pages WHERE tenant_id = :t AND owner_id = :o "
                                       "AND status = 'active' ORDER BY type, slug"), {"t": tenant, "o": OWNER})
        return [tuple(row) for row in rows]


async def sign_in(http: httpx.AsyncClient, wiki: ServedWiki, token: str) -> None:
    form = await http.get("/sign-in")
    nonce = re.search(r'name="csrf" value="([^"]+)"', form.text).group(1)
    answer = await http.post("/sign-in", data={"csrf": nonce, "token": token}, headers={"Origin": wiki.base})
    assert answer.status_code == 303 and answer.headers["location"] == "/", answer.text


async def test_signing_in_keeps_the_token_in_a_strict_httponly_cookie(served_wiki: ServedWiki):
    async with httpx.AsyncClient(base_url=served_wiki.base, timeout=20) as http:
        unsigned = await http.get("/")
        assert unsigned.status_code == 303 and unsigned.headers["location"] == "/sign-in"
        form = await http.get("/sign-in")
        assert form.status_code == 200 and "wiki_signin=" in form.headers["set-cookie"]
        nonce = re.search(r'name="csrf" value="([^"]+)"', form.text).group(1)
        answer = await http.post("/sign-in", data={"csrf": nonce, "token": served_wiki.read_token},
                                 headers={"Origin": served_wiki.base})
        cookie = next(value for value in answer.headers.get_list("set-cookie") if value.startswith("wiki_session="))
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
        assert "Secure" not in cookie  # plain http on loopback; over TLS the cookie is Secure
        assert served_wiki.read_token not in answer.headers["location"]
        home = await http.get("/")
        assert home.status_code == 200 and f"{TENANT}/{OWNER}" in home.text and "Recent changes" in home.text
        assert served_wiki.read_token not in home.text


async def test_every_page_renders_with_its_claims_and_citations(served_wiki: ServedWiki):
    pages = await active_pages(served_wiki)
    assert len(pages) > 10
    async with served_wiki.engine.connect() as conn:
        claim_counts = dict((tuple(row[:2]), row[2]) for row in await conn.execute(text("""
            SELECT p.type, p.slug, count(c.id) FROM wiki_pages p JOIN wiki_page_sections s ON s.page_id = p.id
            JOIN wiki_section_claims c ON c.section_id = s.id
            WHERE p.tenant_id = :t AND p.owner_id = :o AND p.status = 'active' GROUP BY p.type, p.slug
        """), {"t": TENANT, "o": OWNER}))
    assert sum(claim_counts.values()) > 0
    async with httpx.AsyncClient(base_url=served_wiki.base, timeout=20,
                                 headers=bearer(served_wiki.read_token)) as http:
        for page_type, slug, title in pages:
            shown = await http.get(f"/wiki/{page_type}/{slug}")
            assert shown.status_code == 200, (page_type, slug, shown.text[:300])
            assert f"<h1>{escape(title)}</h1>" in shown.text
            assert shown.text.count('<li class="claim ') == claim_counts.get((page_type, slug), 0), slug
            assert shown.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
            assert "<script" not in shown.text


async def test_a_citation_shows_the_memory_it_cites(served_wiki: ServedWiki):
    async with served_wiki.engine.connect() as conn:
        row = (await conn.execute(text("""
            SELECT p.type, p.slug, m.id, m.content FROM wiki_claim_sources cs
            JOIN wiki_section_claims c ON c.id = cs.claim_id JOIN wiki_page_sections s ON s.id = c.section_id
            JOIN wiki_pages p ON p.id = s.page_id JOIN memory_units m ON m.id::text = cs.memory_id
                 AND m.tenant_id = p.tenant_id AND m.owner_id = p.owner_id
            WHERE p.tenant_id = :t AND p.owner_id = :o AND p.status = 'active' ORDER BY p.slug LIMIT 1
        """), {"t": TENANT, "o": OWNER})).one()
    async with httpx.AsyncClient(base_url=served_wiki.base, timeout=20,
                                 headers=bearer(served_wiki.read_token)) as http:
        shown = (await http.get(f"/wiki/{row.type}/{row.slug}")).text
        link = shown.index(f'href="/memories/{row.id}"')
        citation = shown[shown.rindex('<details class="cite">', 0, link):link]
        assert escape(row.content[:80]) in citation
        memory = await http.get(f"/memories/{row.id}")
        assert memory.status_code == 200 and escape(row.content) in memory.text
        assert f'href="/wiki/{row.type}/{row.slug}#' in memory.text  # its blast radius links back
        assert "Forget this memory" not in memory.text  # a read token never sees the forget form


async def test_the_graph_lists_every_active_page(served_wiki: ServedWiki):
    pages = await active_pages(served_wiki)
    async with httpx.AsyncClient(base_url=served_wiki.base, timeout=20,
                                 headers=bearer(served_wiki.read_token)) as http:
        shown = (await http.get("/graph")).text
    listed = set(re.findall(r'<tr><td><a class="page-link type-\w+" href="/wiki/(\w+)/([^"]+)"', shown))
    assert listed == {(page_type, slug) for page_type, slug, _ in pages}
    assert shown.count('<a href="/wiki/') == min(len(pages), 300)  # every drawn node links to its page
    assert f"{len(pages)} active pages" in shown


async def test_every_view_is_reachable_from_home_and_stays_in_scope(served_wiki: ServedWiki):
    async with httpx.AsyncClient(base_url=served_wiki.base, timeout=20,
                                 headers=bearer(served_wiki.read_token)) as http:
        seen, queue, kinds = {"/"}, deque(["/"]), set()
        while queue:
            path = queue.popleft()
            answer = await http.get(path)
            assert answer.status_code == 200, (path, answer.status_code)
            kinds.add(path.split("/")[1].split("?")[0])
            for href in HREF.findall(answer.text):
                href = html.unescape(href)
                if href.startswith(TEMPORAL_UI):
                    continue  # a compile run's workflow, in the Temporal UI
                assert not href.startswith(("http:", "https:", "//", "javascript:")), (path, href)
                target = urlsplit(href)
                local = target.path + (f"?{target.query}" if target.query else "")
                if local.startswith("/") and not local.startswith("/assets/") and local not in seen:
                    seen.add(local)
                    queue.append(local)
    assert {"", "wiki", "memories", "graph", "runs"} <= kinds


async def test_a_wrong_token_gets_401_and_another_scopes_page_404(served_wiki: ServedWiki):
    rival_only = sorted(set(await active_pages(served_wiki, RIVAL)) - set(await active_pages(served_wiki)))
    assert rival_only
    page_type, slug, _ = rival_only[0]
    async with httpx.AsyncClient(base_url=served_wiki.base, timeout=20,
                                 cookies={"wiki_session": "wiki_revoked_or_made_up"}) as stale_browser:
        stale = await stale_browser.get("/graph")
        assert stale.status_code == 401 and 'href="/sign-in"' in stale.text
    async with httpx.AsyncClient(base_url=served_wiki.base, timeout=20) as http:
        assert (await http.get("/", headers=bearer("wiki_notatoken"))).status_code == 401
        assert (await http.get(f"/wiki/{page_type}/{slug}", headers=bearer(served_wiki.rival_token))).status_code == 200
        hidden = await http.get(f"/wiki/{page_type}/{slug}", headers=bearer(served_wiki.read_token))
        assert hidden.status_code == 404 and "no page" in hidden.text
        async with served_wiki.engine.connect() as conn:
            rival_memory = (await conn.execute(text("SELECT id FROM memory_units WHERE tenant_id = :t LIMIT 1"),
                                               {"t": RIVAL})).scalar_one()
        assert (await http.get(f"/memories/{rival_memory}", headers=bearer(served_wiki.read_token))).status_code == 404


async def test_untrusted_memory_text_never_becomes_markup(served_wiki: ServedWiki):
    async with httpx.AsyncClient(base_url=served_wiki.base, timeout=20,
                                 headers=bearer(served_wiki.rival_token)) as http:
        for page_type, slug, _ in await active_pages(served_wiki, RIVAL):
            shown = (await http.get(f"/wiki/{page_type}/{slug}")).text
            assert "<script" not in shown and "<img" not in shown and "onerror=" not in shown.replace("onerror=alert", "")
            assert "javascript:" not in re.sub(r"\s", "", "".join(HREF.findall(shown)))
            assert 'href="https://evil' not in shown
        async with served_wiki.engine.connect() as conn:
            hostile = (await conn.execute(text("SELECT id FROM memory_units WHERE tenant_id = :t AND content LIKE '%<script>%'"),
                                          {"t": RIVAL})).scalar_one()
        shown = (await http.get(f"/memories/{hostile}")).text
        assert "&lt;script&gt;" in shown and "<script" not in shown and "&lt;img src=x" in shown


@pytest.mark.parametrize("path, status", [
    ("/search?q=" + "x" * 501, 422), ("/graph?offset=-1", 422), ("/graph?offset=99999999999", 422),
    ("/wiki/entity/" + "s" * 400, 422), ("/wiki/person/anyone", 404), ("/memories/not-a-uuid", 404),
    ("/memories/00000000-0000-0000-0000-000000000000", 404),
])
async def test_every_input_is_bounded(served_wiki: ServedWiki, path: str, status: int):
    async with httpx.AsyncClient(base_url=served_wiki.base, timeout=20,
                                 headers=bearer(served_wiki.read_token)) as http:
        answer = await http.get(path)
    assert answer.status_code == status, answer.text[:300]
    assert answer.headers["content-type"].startswith("text/html") and "error: " in answer.text


async def test_state_changing_forms_need_their_csrf_token_and_this_origin(served_wiki: ServedWiki):
    async with httpx.AsyncClient(base_url=served_wiki.base, timeout=20) as http:
        await sign_in(http, served_wiki, served_wiki.operator_token)
        csrf = csrf_for(served_wiki.operator_token)
        same = {"Origin": served_wiki.base}
        without = await http.post("/sign-out", data={"next": "/"}, headers=same)
        assert without.status_code == 403 and "CSRF" in without.text
        wrong = await http.post("/sign-out", data={"csrf": csrf_for("another token")}, headers=same)
        assert wrong.status_code == 403
        elsewhere = await http.post("/sign-out", data={"csrf": csrf}, headers={"Origin": "https://evil.example"})
        assert elsewhere.status_code == 403 and "another site" in elsewhere.text
        cross = await http.post("/sign-out", data={"csrf": csrf}, headers={"Sec-Fetch-Site": "cross-site"})
        assert cross.status_code == 403
        forget = await http.post("/memories/00000000-0000-0000-0000-000000000000/forget", data={"next": "/"},
                                 headers=same)
        assert forget.status_code == 403
        assert (await http.get("/")).status_code == 200  # none of those signed the browser out
        out = await http.post("/sign-out", data={"csrf": csrf}, headers=same)
        assert out.status_code == 303 and out.headers["location"] == "/sign-in"
        assert (await http.get("/")).status_code == 303
    async with httpx.AsyncClient(base_url=served_wiki.base, timeout=20) as stranger:
        # The sign-in form too: its nonce must match the cookie this browser was given.
        await stranger.get("/sign-in")
        forged = await stranger.post("/sign-in", data={"csrf": "guessed", "token": served_wiki.read_token})
        assert forged.status_code == 403 and "wiki_session" not in forged.headers.get("set-cookie", "")
        nonce = stranger.cookies["wiki_signin"]
        other_site = await stranger.post("/sign-in", data={"csrf": nonce, "token": served_wiki.read_token},
                                         headers={"Origin": "https://evil.example"})
        assert other_site.status_code == 403
        bad_token = await stranger.post("/sign-in", data={"csrf": nonce, "token": "wiki_made_up"})
        assert bad_token.status_code == 401 and "unknown or revoked token" in bad_token.text


async def test_the_runs_link_to_their_workflow(served_wiki: ServedWiki):
    async with httpx.AsyncClient(base_url=served_wiki.base, timeout=20,
                                 headers=bearer(served_wiki.read_token)) as http:
        shown = (await http.get("/runs")).text
    assert "compile:web:alice" in shown and "succeeded" in shown
    assert re.search(r'href="http://127\.0\.0\.1:\d+/namespaces/default/workflows/compile%3Aweb%3Aalice/[^"/]+/history"',
                     shown)


async def test_the_forget_form_is_only_for_an_operator_and_queues_through_the_forget_use_case(
        served_wiki: ServedWiki, monkeypatch: pytest.MonkeyPatch):
    async with served_wiki.engine.connect() as conn:
        memory = str((await conn.execute(text("SELECT id FROM memory_units WHERE tenant_id = :t ORDER BY id LIMIT 1"),
                                         {"t": TENANT})).scalar_one())
    forgotten: list[tuple] = []

    async def forget_memory(engine, scope, memory_id, connect, settings):
        forgotten.append((scope.tenant, scope.owner, memory_id))

    # The shared wiki stays whole: the use case (tested in tests/compile/test_forget.py) is replaced here.
    monkeypatch.setattr("app.web_views.forget_memory", forget_memory)
    async with httpx.AsyncClient(base_url=served_wiki.base, timeout=20) as http:
        await sign_in(http, served_wiki, served_wiki.operator_token)
        shown = (await http.get(f"/memories/{memory}")).text
        assert "Forget this memory" in shown and f'action="/memories/{memory}/forget"' in shown
        reader = await http.get(f"/memories/{memory}", headers=bearer(served_wiki.read_token))
        assert "Forget this memory" not in reader.text
        refused = await http.post(f"/memories/{memory}/forget", data={"csrf": csrf_for(served_wiki.read_token)},
                                  headers={"Origin": served_wiki.base})
        assert refused.status_code == 403 and forgotten == []
        done = await http.post(f"/memories/{memory}/forget", data={"csrf": csrf_for(served_wiki.operator_token)},
                               headers={"Origin": served_wiki.base})
        assert done.status_code == 303 and forgotten == [(TENANT, OWNER, memory)]


async def test_a_turn_shows_the_turns_around_it_each_as_text(served_wiki: ServedWiki):
    from domain.conversation import conversation_turns, parse_conversation
    from store.memories import store_memories

    talk = parse_conversation({"id": "web-chat", "messages": [
        {"speaker": "Ana", "text": "We moved to Lisbon."}, {"speaker": "Ben", "text": "<b>Nice</b>!"},
        {"speaker": "Ana", "text": "Our flat is on Rua Augusta."}]})
    turns = conversation_turns(talk, None)
    await store_memories(served_wiki.engine, TENANT, OWNER, list(turns))
    middle = turns[1].resolved_id(TENANT, OWNER)
    async with httpx.AsyncClient(base_url=served_wiki.base, timeout=20, headers=bearer(served_wiki.read_token)) as http:
        shown = (await http.get(f"/memories/{middle}")).text
    assert "In conversation <code>web-chat</code>" in shown
    assert "Ana: We moved to Lisbon." in shown and "Ana: Our flat is on Rua Augusta." in shown
    assert f'href="/memories/{turns[0].resolved_id(TENANT, OWNER)}"' in shown
    assert "&lt;b&gt;Nice&lt;/b&gt;" in shown and "<b>Nice" not in shown
