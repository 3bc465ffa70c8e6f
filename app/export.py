"""`wiki export`: a scope's wiki as an Obsidian vault (markdown with YAML frontmatter and
`[[wikilinks]]`) or as one JSON document.

The vault has one note per active page at `<type>/<slug>.md` (so an entity and a topic of the same
slug never collide), every link written `[[<type>/<slug>|text]]` (a path Obsidian resolves to that
file), each section's claims that hold now in its body and the superseded ones (older values) in the
note's closing "History" part with the date each stopped holding, each claim's citations as
footnotes naming the memory ids, and with `with_memories` the cited memories as notes
`memories/<id>.md` that the footnotes link to. Files are a pure function of
the wiki: the same wiki gives byte-identical files. Writing a vault rewrites only the files whose
bytes changed and removes the files an earlier export wrote that this one no longer has (listed in
`.wiki-export.json`); other files in the folder (Obsidian's own `.obsidian/`) are left alone. Text
from memories goes through `safe_markdown` first: no raw HTML (which Obsidian would render), no link
out of the vault.
"""

from __future__ import annotations

import json
import re
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncConnection

from app.reads import ReadScope
from domain.markup import safe_markdown, safe_title
from store import web_reads
from store.web_reads import ExportMemory, ExportPage

MANIFEST = ".wiki-export.json"
FORMAT_VERSION = 1
_WIKI_LINK = re.compile(r"\[([^\[\]\n]+)\]\(/wiki/(entity|topic|decision)/([^\s()\[\]/]+)\)")
MEMORY_EXCERPT_CHARS = 200


class ExportError(Exception):
    """The export cannot be written where asked; the message says why."""


class WikiExport(BaseModel):
    """The whole export, the JSON format's document."""

    format: str = "wiki-export"
    version: int = FORMAT_VERSION
    tenant: str
    owner: str
    pages: list[ExportPage]
    memories: list[ExportMemory]


class WriteSummary(BaseModel):
    written: list[str]
    removed: list[str]
    unchanged: int
    committed: str | None = None  # the commit made by `git`, when there was something to commit


async def read_export(conn: AsyncConnection, scope: ReadScope, with_memories: bool) -> WikiExport:
    pages = await web_reads.export_pages(conn, scope.tenant, scope.owner)
    cited = sorted({ref for page in pages for ref in _page_refs(page)})
    memories = await web_reads.export_memories(conn, scope.tenant, scope.owner, cited) if with_memories else []
    return WikiExport(tenant=scope.tenant, owner=scope.owner, pages=pages, memories=memories)


def _page_refs(page: ExportPage) -> list[str]:
    refs: list[str] = []
    for section in page.sections:
        refs += section.sources
        for claim in section.claims:
            refs += claim.sources
    return refs


# ------------------------------------------------------------------------------------------ the vault


def note_path(key: str) -> str:
    """`<type>/<slug>` as the vault's file name."""
    return f"{key}.md"


def _wikilinks(markdown: str) -> str:
    return _WIKI_LINK.sub(lambda m: f"[[{m.group(2)}/{m.group(3)}|{m.group(1)}]]", safe_markdown(markdown))


def _yaml(values: dict[str, Any]) -> str:
    return yaml.safe_dump(values, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1000)


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def page_note(page: ExportPage, memories: dict[str, ExportMemory] | None) -> str:
    """The page's note: frontmatter, title, summary, sections with the claims that hold now (a
    disputed one marked), a History part with the superseded ones and when each stopped holding,
    links, footnotes."""
    footnotes: dict[str, int] = {}

    def cite(refs: list[str]) -> str:
        marks = []
        for ref in refs:
            number = footnotes.setdefault(ref, len(footnotes) + 1)
            marks.append(f"[^{number}]")
        return "".join(marks)

    lines = [f"# {safe_title(page.title)}", ""]
    if page.summary:
        lines += [_wikilinks(page.summary), ""]
    # The page's confidence is its least sure fact's; a fact no check supported (unverified) leaves
    # the page with none. Derived lines have no confidence and do not count.
    confidences: list[float | None] = []
    history: list[str] = []
    for section in page.sections:
        lines += [f"## {safe_title(section.heading)}", ""]
        if section.claims:
            for claim in section.claims:
                text = _wikilinks(claim.text).strip()
                if claim.validity == "superseded":
                    until = f" _(until {claim.valid_to.date().isoformat()})_" if claim.valid_to else ""
                    history.append(f"- {text}{until} {cite(claim.sources)}".rstrip())
                    continue
                if claim.kind != "derived":
                    confidences.append(claim.confidence)
                disputed = " _(disputed)_" if claim.validity == "disputed" else ""
                lines.append(f"{text}{disputed} {cite(claim.sources)}".rstrip())
        else:
            body = _wikilinks(section.body_md).strip()
            lines.append(f"{body} {cite(section.sources)}".rstrip())
        lines.append("")
    if history:
        lines += ["## History", "", *history, ""]
    if page.links:
        lines += ["## Links", ""] + [f"- [[{key}]]" for key in page.links] + [""]
    for ref, number in footnotes.items():
        memory = memories.get(ref) if memories is not None else None
        if memories is not None and memory is not None:
            lines.append(f"[^{number}]: memory [[memories/{ref}|{ref}]] ({memory.dated.date().isoformat()})")
        else:
            lines.append(f"[^{number}]: memory {ref}")
    frontmatter = {
        "type": page.type,
        "title": page.title,
        "aliases": page.aliases,
        "tags": [f"wiki/{page.type}", *page.tags],
        "parent": f"[[{page.parent}]]" if page.parent else None,
        "confidence": round(min(c for c in confidences if c is not None), 2)
        if confidences and None not in confidences else None,
        "sources": sorted(set(_page_refs(page))),
        "updated": _iso(page.updated_at),
    }
    return f"---\n{_yaml(frontmatter)}---\n\n" + "\n".join(lines).rstrip() + "\n"


def memory_note(memory: ExportMemory) -> str:
    frontmatter = {"type": "memory", "id": memory.id, "dated": _iso(memory.dated), "metadata": memory.metadata}
    return f"---\n{_yaml(frontmatter)}---\n\n{safe_markdown(memory.content).strip()}\n"


def vault_files(export: WikiExport) -> dict[str, bytes]:
    """Every file of the vault by its path in the vault."""
    memories = {memory.id: memory for memory in export.memories} if export.memories else None
    files = {note_path(f"{page.type}/{page.slug}"): page_note(page, memories).encode() for page in export.pages}
    for memory in export.memories:
        files[f"memories/{memory.id}.md"] = memory_note(memory).encode()
    return files


def json_document(export: WikiExport) -> bytes:
    return (json.dumps(export.model_dump(mode="json"), indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def write_files(folder: Path, files: dict[str, bytes]) -> WriteSummary:
    """Write the files under `folder` (only those whose bytes changed) and remove the files the previous
    export listed in its manifest that this one no longer has."""
    if folder.exists() and not folder.is_dir():
        raise ExportError(f"{folder} is a file; give a folder for the export")
    folder.mkdir(parents=True, exist_ok=True)
    manifest = folder / MANIFEST
    try:
        previous = set(json.loads(manifest.read_text())["files"]) if manifest.exists() else set()
    except (ValueError, KeyError, TypeError):
        raise ExportError(f"{manifest} is not an export manifest; remove it or export to another folder") from None
    written, unchanged = [], 0
    for relative, content in sorted(files.items()):
        target = folder / relative
        if target.is_file() and target.read_bytes() == content:
            unchanged += 1
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        written.append(relative)
    removed = sorted(previous - set(files))
    for relative in removed:
        target = folder / relative
        if _inside(folder, target) and target.is_file():
            target.unlink()
            if target.parent != folder and not any(target.parent.iterdir()):
                target.parent.rmdir()
    listing = (json.dumps({"files": sorted(files)}, indent=1) + "\n").encode()
    if not manifest.exists() or manifest.read_bytes() != listing:
        manifest.write_bytes(listing)
    return WriteSummary(written=written, removed=removed, unchanged=unchanged)


def _inside(folder: Path, target: Path) -> bool:
    return folder.resolve() in target.resolve().parents


def commit_export(folder: Path, message: str) -> str | None:
    """Commit the folder's changes in its git repository (made when there is none); the new commit's
    id, or None when nothing changed."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ExportError(f"git {args[0]} failed in {folder}: {(done.stderr or done.stdout).strip()[:300]}")
        return done.stdout.strip()

    try:
        if not (folder / ".git").exists():
            git("init", "--quiet")
        git("add", "--all")
        if not git("status", "--porcelain"):
            return None
        # The user's own identity when git has one; else a neutral one, so a fresh machine can commit.
        known = subprocess.run(["git", "-C", str(folder), "config", "user.email"], capture_output=True,
                               check=False).returncode == 0
        identity = [] if known else ["-c", "user.name=wiki export", "-c", "user.email=wiki-export@localhost"]
        git(*identity, "commit", "--quiet", "--no-verify", "-m", message)
        return git("rev-parse", "HEAD")
    except FileNotFoundError:
        raise ExportError("--git needs the git command, which is not installed") from None
