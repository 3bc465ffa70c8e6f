"""`wiki export` (app/export.py) on the compiled wiki: a vault with one note per active page, links
that resolve inside it, frontmatter that parses as YAML, footnotes naming the cited memories,
byte-identical exports of the same wiki, a second export that rewrites only what changed and
removes what was deleted, a git commit per export, and the JSON document."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from sqlalchemy import text

from runtime.settings import get_settings
from tests.operators.cli import one_error_line, scope, wiki
from tests.web.conftest import OWNER, RIVAL, TENANT, ServedWiki

WIKILINK = re.compile(r"\[\[([^\]|#]+)(?:[|#][^\]]*)?\]\]")
FOOTNOTE_MARK = re.compile(r"\[\^(\d+)\](?!:)")


@pytest.fixture
def cli_env(served_wiki: ServedWiki, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("DATABASE_URL", served_wiki.database_url)
    monkeypatch.setenv("WIKI_DATA_DIR", str(tmp_path / "data"))
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def vault_notes(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): path.read_text() for path in sorted(folder.rglob("*.md"))
            if ".git" not in path.parts}


def frontmatter(note: str) -> dict:
    assert note.startswith("---\n"), note[:80]
    head, _, _ = note[4:].partition("\n---\n")
    return yaml.safe_load(head)


async def active_keys(wiki_db: ServedWiki, tenant: str = TENANT) -> set[str]:
    async with wiki_db.engine.connect() as conn:
        rows = await conn.execute(text("SELECT type || '/' || slug FROM wiki_pages WHERE tenant_id = :t "
                                       "AND owner_id = :o AND status = 'active'"), {"t": tenant, "o": OWNER})
        return {row[0] for row in rows}


async def set_status(wiki_db: ServedWiki, key: str, status: str) -> None:
    page_type, slug = key.split("/", 1)
    async with wiki_db.engine.begin() as conn:
        await conn.execute(text("UPDATE wiki_pages SET status = :s WHERE tenant_id = :t AND owner_id = :o "
                                "AND type = :type AND slug = :slug"),
                           {"s": status, "t": TENANT, "o": OWNER, "type": page_type, "slug": slug})


async def test_the_vault_has_a_note_per_page_with_links_that_resolve(served_wiki: ServedWiki, cli_env, tmp_path):
    vault = tmp_path / "vault"
    result = await wiki("export", str(vault), *scope(TENANT, OWNER), "--with-memories")
    assert result.exit_code == 0, result.output
    notes = vault_notes(vault)
    pages = {name for name in notes if not name.startswith("memories/")}
    assert pages == {f"{key}.md" for key in await active_keys(served_wiki)}
    footnoted = 0
    for name, note in notes.items():
        head = frontmatter(note)
        for target in WIKILINK.findall(note) + ([head["parent"][2:-2]] if head.get("parent") else []):
            assert f"{target}.md" in notes, f"{name} links to {target}, which is not in the vault"
        if name in pages:
            assert head["type"] in ("entity", "topic", "decision") and isinstance(head["aliases"], list)
            assert set(head) >= {"type", "aliases", "tags", "parent", "confidence", "sources", "updated"}
            marks = set(FOOTNOTE_MARK.findall(note))
            definitions = dict(re.findall(r"^\[\^(\d+)\]: memory \[\[memories/([^|\]]+)", note, re.MULTILINE))
            assert marks == set(definitions), name  # every citation has its footnote, naming the memory
            assert set(definitions.values()) <= set(head["sources"])
            footnoted += bool(marks)
        assert "<script" not in note and "javascript:" not in note
    assert footnoted > len(pages) // 2
    assert any(name.startswith("memories/") for name in notes)


async def test_exports_are_identical_and_a_second_rewrites_only_what_changed(served_wiki: ServedWiki, cli_env,
                                                                              tmp_path):
    first, second = tmp_path / "one", tmp_path / "two"
    for folder in (first, second):
        assert (await wiki("export", str(folder), *scope(TENANT, OWNER), "--git")).exit_code == 0
    assert vault_notes(first) == vault_notes(second)
    assert {p.name: p.read_bytes() for p in first.rglob("*.md")} == {p.name: p.read_bytes() for p in second.rglob("*.md")}
    unchanged = await wiki("export", str(first), *scope(TENANT, OWNER), "--git", "--json")
    summary = json.loads(unchanged.stdout)
    assert summary["written"] == [] and summary["removed"] == [] and summary["committed"] is None

    gone = sorted(await active_keys(served_wiki))[0]
    before = vault_notes(first)
    await set_status(served_wiki, gone, "archived")
    try:
        again = json.loads((await wiki("export", str(first), *scope(TENANT, OWNER), "--git", "--json")).stdout)
    finally:
        await set_status(served_wiki, gone, "active")
    after = vault_notes(first)
    assert again["removed"] == [f"{gone}.md"] and f"{gone}.md" not in after
    changed = sorted(name for name in after if after[name] != before[name])
    assert again["written"] == changed  # only the notes that linked to it (their links list) were rewritten
    assert all(f"[[{gone}" in before[name] for name in changed)
    log = subprocess.run(["git", "-C", str(first), "log", "--format=%s"], capture_output=True, text=True, check=True)
    assert log.stdout.count("wiki export of web/alice") == 2


async def test_the_json_document_carries_the_same_content(served_wiki: ServedWiki, cli_env, tmp_path):
    out = tmp_path / "wiki.json"
    assert (await wiki("export", str(out), "--format", "json", *scope(TENANT, OWNER))).exit_code == 0
    document = json.loads(out.read_bytes())
    assert {f"{p['type']}/{p['slug']}" for p in document["pages"]} == await active_keys(served_wiki)
    assert document["memories"] == [] and document["tenant"] == TENANT
    claims = [claim for page in document["pages"] for section in page["sections"] for claim in section["claims"]]
    assert claims and all(claim["sources"] for claim in claims)
    first = out.read_bytes()
    await wiki("export", str(out), "--format", "json", *scope(TENANT, OWNER))
    assert out.read_bytes() == first


async def test_the_export_stays_in_its_scope_and_refuses_bad_destinations(served_wiki: ServedWiki, cli_env,
                                                                         tmp_path):
    vault = tmp_path / "rival"
    assert (await wiki("export", str(vault), *scope(RIVAL, OWNER), "--with-memories")).exit_code == 0
    text_of_vault = "\n".join(vault_notes(vault).values())
    async with served_wiki.engine.connect() as conn:
        ours = (await conn.execute(text("SELECT content FROM memory_units WHERE tenant_id = :t LIMIT 1"),
                                   {"t": TENANT})).scalar_one()
    assert ours[:40] not in text_of_vault
    assert "<script" not in text_of_vault and "<img" not in text_of_vault  # the hostile memory's markup
    (tmp_path / "file").write_text("x")
    one_error_line(await wiki("export", str(tmp_path / "file"), *scope(TENANT, OWNER)), 1, "")
    one_error_line(await wiki("export", str(tmp_path), "--format", "json", *scope(TENANT, OWNER)), 2, "")
    manifest = tmp_path / "broken"
    manifest.mkdir()
    (manifest / ".wiki-export.json").write_text("not json")
    one_error_line(await wiki("export", str(manifest), *scope(TENANT, OWNER)), 1, "")
