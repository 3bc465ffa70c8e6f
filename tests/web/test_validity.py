"""Facts that changed, as the web view and the export show them (scope moves/alice of the shared
wiki, compiled by the real pipeline): the current value in the page body, the superseded one only
behind the history toggle (web) or in the note's History part (vault) with the day it stopped
holding, and rival values of one moment marked disputed."""

from __future__ import annotations

import html
import json
import re

import httpx

from tests.operators.cli import scope, wiki
from tests.web.conftest import MOVES, OWNER, ServedWiki
from tests.web.test_export import cli_env  # noqa: F401  (the fixture pointing the CLI at the shared wiki)

PAST = re.compile(r'<ul class="claims past">.*?</ul>', re.DOTALL)
CLAIM_TEXT = re.compile(r'<span class="claim-text">(.*?)</span>', re.DOTALL)
CLAIM_ITEM = re.compile(r'<li class="claim [^"]*">.*?</li>', re.DOTALL)
RIVALS = ("works for Acme", "works for Globex")


async def test_the_page_shows_the_current_value_and_the_superseded_one_behind_the_history_toggle(
        served_wiki: ServedWiki):
    async with httpx.AsyncClient(base_url=served_wiki.base, timeout=20,
                                 headers={"Authorization": f"Bearer {served_wiki.moves_token}"}) as http:
        shown = await http.get("/wiki/entity/alice-moreau")
    assert shown.status_code == 200, shown.text[:300]
    page = html.unescape(shown.text)
    history = PAST.findall(page)
    body = PAST.sub("", page)
    current_lines = CLAIM_TEXT.findall(body)
    assert any("moved to Denver" in line for line in current_lines), current_lines
    assert not any("lives in Austin" in line for line in current_lines), current_lines
    assert any("Saturdays" in line for line in current_lines)  # a fact that never changed stays in the body
    assert len(history) == 1
    past_lines = CLAIM_TEXT.findall(history[0])
    assert len(past_lines) == 1 and "lives in Austin" in past_lines[0], past_lines
    assert re.search(r'until <time datetime="2026-06-03[^"]*">2026-06-03</time>', history[0]), history[0]
    assert "history: 1 earlier claim<" in page
    for rival in RIVALS:
        line = next(item for item in CLAIM_ITEM.findall(body) if rival in CLAIM_TEXT.findall(item)[0])
        assert "validity-disputed" in line and '<span class="disputed"' in line


async def test_the_note_keeps_superseded_claims_in_its_history_part(served_wiki: ServedWiki, cli_env,  # noqa: F811
                                                                     tmp_path):
    vault = tmp_path / "vault"
    result = await wiki("export", str(vault), *scope(MOVES, OWNER))
    assert result.exit_code == 0, result.output
    note = (vault / "entity" / "alice-moreau.md").read_text()
    body, _, rest = note.partition("\n## History\n")
    history = rest.split("\n## ", 1)[0]
    assert "moved to Denver" in body and "lives in Austin" not in body
    assert re.search(r"^- .*lives in Austin\. _\(until 2026-06-03\)_ \[\^\d+\]$", history, re.MULTILINE), history
    assert "Denver" not in history
    for rival in RIVALS:
        assert re.search(rf"{rival}\. _\(disputed\)_", body), body

    document = tmp_path / "wiki.json"
    assert (await wiki("export", str(document), "--format", "json", *scope(MOVES, OWNER))).exit_code == 0
    claims = {claim["text"].split(": ", 1)[-1]: claim for page in json.loads(document.read_bytes())["pages"]
              for section in page["sections"] for claim in section["claims"]}
    austin = next(claim for text, claim in claims.items() if "lives in Austin" in text)
    denver = next(claim for text, claim in claims.items() if "moved to Denver" in text)
    assert austin["validity"] == "superseded" and austin["valid_to"].startswith("2026-06-03")
    assert denver["validity"] == "current" and denver["valid_to"] is None
