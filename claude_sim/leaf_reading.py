"""The leaf planner's request read as a model reads it: what the system prompt says the reply may
use, and what the user message shows.

The system prompt publishes the contract: the page types and their default sections (its "Page
types" part), the reply's keys (its output shape, and the forced tool's schema), and the shortcuts a
reply may take (a memory's own line as "@m4", a line led by a name as "@m4:<name>", lines the
compiler derives as "=count" and the like, sections as arrays, values left out when they are the
defaults, "supersede" pairs). The brain uses a shortcut only when the prompt offers it, so a prompt
that stops offering one gets replies without it. The user message shows the candidate pages, the
open mentions, the metadata several records share, the batch's records and, on a lint compile, the
mentions to consider promoting; every handle it names must be one it defines. Anything else raises
`Confused`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from claude_sim.reading import Confused, fields, items, parts

PAGES = "Candidate pages already in this scope"
MENTIONS = "Open unresolved mentions in this scope"
SHARED = "Metadata shared by several records"
RECORDS = "Memory records in this batch"
PROMOTIONS = "Mentions that crossed the promotion threshold"
REPLY_KEYS = ("updates", "new_pages", "held", "promotions", "links")
_NONE = "(none)"
_WORD_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


@dataclass
class Conventions:
    """What the system prompt and the tool schema say a reply is and may leave out."""

    page_types: dict[str, list[tuple[str, str]]]  # type -> its default sections (slug, heading)
    purposes: dict[str, dict[str, str]] = field(default_factory=dict)  # type -> slug -> what belongs there
    quotes: bool = False  # "@m4" stands for m4's own dated line
    led_quotes: bool = False  # "@m4:<name>"
    derivations: frozenset[str] = frozenset()  # "=count", ...
    arrays: bool = False  # a plain section may be ["slug", [lines], [refs]]
    omit_default_slug: bool = False
    omit_default_heading: bool = False
    omit_page_refs: bool = False
    omit_held_quote: bool = False
    supersede: bool = False
    grouped_links: bool = False
    new_page_min_records: int = 2
    promotion_min_sightings: int = 3

    def heading(self, page_type: str, slug: str) -> str | None:
        return next((heading for s, heading in self.page_types.get(page_type, []) if s == slug), None)


@dataclass
class Memory:
    handle: str
    happened: str  # ISO 8601, as shown
    text: str
    metadata: dict[str, Any]
    said_by: dict[str, Any] | None = None  # a turn's speaker, role, conversation and position

    @property
    def day(self) -> str:
        return self.happened[:10]


@dataclass
class Section:
    slug: str
    heading: str | None
    excerpt: str


@dataclass
class Fact:
    handle: str
    text: str
    since: str | None


@dataclass
class Page:
    handle: str
    type: str
    slug: str
    title: str
    summary: str | None
    aliases: list[str]
    sections: list[Section] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)


@dataclass
class Sighting:
    handle: str | None  # the record it came from, when known
    quote: str


@dataclass
class Mention:
    handle: str
    alias: str
    key: str | None
    count: int
    suggested_type: str | None
    last_seen: str
    sightings: list[Sighting] = field(default_factory=list)


@dataclass
class LeafRequest:
    conventions: Conventions
    memories: list[Memory]
    pages: list[Page]
    mentions: list[Mention]
    promotion_candidates: list[str]
    promotion_window_days: int = 30

    def memory(self, handle: str) -> Memory | None:
        return next((m for m in self.memories if m.handle == handle), None)


_PAGE_TYPE = re.compile(r"^- \*\*([a-z_]+)\*\*:")
_DEFAULT_SECTION = re.compile(r'^\s+- `([a-z0-9_-]+)` "([^"]+)":?\s*(.*)$')


def read_conventions(system: str, tool_schema: dict[str, Any] | None) -> Conventions:
    page_types: dict[str, list[tuple[str, str]]] = {}
    purposes: dict[str, dict[str, str]] = {}
    current: str | None = None
    for line in parts(system).get("Page types", "").splitlines():
        if match := _PAGE_TYPE.match(line):
            current = match.group(1)
            page_types[current] = []
        elif (match := _DEFAULT_SECTION.match(line)) and current is not None:
            page_types[current].append((match.group(1), match.group(2)))
            purposes.setdefault(current, {})[match.group(1)] = match.group(3)
    if not page_types:
        raise Confused("the system prompt names no page types")
    properties = (tool_schema or {}).get("properties")
    if not isinstance(properties, dict):
        raise Confused("the reply tool has no properties to fill")
    unknown = [key for key in (tool_schema or {}).get("required", []) if key not in REPLY_KEYS]
    missing = [key for key in REPLY_KEYS[:4] if key not in properties or key not in system]
    if unknown or missing:
        raise Confused(f"the reply tool asks for {unknown or ''} and lacks {missing or ''} of the output shape")
    flat = " ".join(system.split())
    leave_out = flat[flat.find("Leave out"):] if "Leave out" in flat else ""
    threshold = re.search(r"seen at least (\d+) times", flat)
    reinforce = re.search(r"at least (\w+) records reinforce", flat)
    return Conventions(
        page_types=page_types,
        purposes=purposes,
        quotes=bool(re.search(r'"@m\d+" stands for', flat)),
        led_quotes=bool(re.search(r'"@m\d+:<name>" stands for', flat)),
        derivations=frozenset(re.findall(r'"=([a-z]+)"', flat)),
        arrays=bool(re.search(r"may be written as an array", flat)),
        omit_default_slug='"slug" when it is the title\'s kebab-case' in leave_out,
        omit_default_heading='"heading" when it is the section\'s default' in leave_out,
        omit_page_refs='"refs" when they are its sections\' citations' in leave_out,
        omit_held_quote='"quote" when it is its record\'s first sentence' in leave_out,
        supersede='"supersede"' in flat,
        grouped_links="first end lists them" in flat,
        new_page_min_records=_number(reinforce.group(1)) if reinforce else 2,
        promotion_min_sightings=int(threshold.group(1)) if threshold else 3,
    )


def _number(word: str) -> int:
    return int(word) if word.isdigit() else _WORD_NUMBERS.get(word, 2)


def _handle(head: str, prefix: str) -> str:
    handle = head.split(" ", 1)[0]
    if not re.fullmatch(rf"{prefix}[0-9]+", handle):
        raise Confused(f"an item without a {prefix}-handle: {head[:60]!r}")
    return handle


def _part(shown: dict[str, str], name: str) -> str:
    if name not in shown:
        raise Confused(f"the user message has no part {name!r}")
    body = shown[name].strip()
    return "" if body == _NONE else shown[name]


def read_leaf(system: str, user: str, tool_schema: dict[str, Any] | None) -> LeafRequest:
    conventions = read_conventions(system, tool_schema)
    shown = parts(user)
    pages = [_page(head, rest) for head, rest in items(_part(shown, PAGES))]
    mentions = [_mention(head, rest) for head, rest in items(_part(shown, MENTIONS))]
    shared = {_handle(head, "s"): fields(head) for head, _ in items(shown.get(SHARED, ""))}
    memories = [_memory(head, shared) for head, _ in items(_part(shown, RECORDS))]
    promotions: list[str] = []
    window = 30
    if PROMOTIONS in shown:
        days = re.search(r"within the last (\d+) days", shown[PROMOTIONS])
        window = int(days.group(1)) if days else window
        known = {m.handle for m in mentions}
        for head, _ in items(shown[PROMOTIONS]):
            handle = _handle(head, "u")
            if handle not in known:
                raise Confused(f"a promotion candidate {handle} that no open mention shows")
            promotions.append(handle)
    return LeafRequest(conventions=conventions, memories=memories, pages=pages, mentions=mentions,
                       promotion_candidates=promotions, promotion_window_days=window)


def _page(head: str, rest: list[str]) -> Page:
    f = fields(head)
    for key in ("type", "slug", "title"):
        if key not in f:
            raise Confused(f"a candidate page without {key}: {head[:60]!r}")
    page = Page(handle=_handle(head, "p"), type=str(f["type"]), slug=str(f["slug"]), title=str(f["title"]),
                summary=f.get("summary"), aliases=list(f.get("aliases") or []))
    for line in rest:
        if line.startswith("· slug="):
            s = fields(line[2:])
            page.sections.append(Section(slug=str(s["slug"]), heading=s.get("heading"), excerpt=str(s.get("excerpt", ""))))
        elif line.startswith("· fact "):
            tail = line[len("· fact "):]
            s = fields(tail)
            page.facts.append(Fact(handle=_handle(tail, "f"), text=str(s.get("text", "")), since=s.get("since")))
    return page


def _mention(head: str, rest: list[str]) -> Mention:
    f = fields(head)
    if "alias" not in f or "count" not in f:
        raise Confused(f"an open mention without alias or count: {head[:60]!r}")
    mention = Mention(handle=_handle(head, "u"), alias=str(f["alias"]), key=f.get("key"), count=int(f["count"]),
                      suggested_type=f.get("suggestedType"), last_seen=str(f.get("lastSeen", "")))
    for line in rest:
        if line.startswith("· sighting"):
            tail = line.removeprefix("· sighting").strip()
            handle = None if tail.startswith("context=") else _handle(tail, "m")
            mention.sightings.append(Sighting(handle=handle, quote=str(fields(tail).get("context", ""))))
    return mention


def _memory(head: str, shared: dict[str, dict[str, Any]]) -> Memory:
    f = fields(head)
    if "happened" not in f or "text" not in f:
        raise Confused(f"a record without happened or text: {head[:60]!r}")
    metadata = dict(f.get("metadata") or {})
    for ref in f.get("shared") or []:
        if ref not in shared:
            raise Confused(f"a record names shared metadata {ref!r} that the prompt never defines")
        metadata.update(shared[ref])
    entities = metadata.get("entities")
    if isinstance(entities, list):
        metadata["entities"] = [_entity(row) for row in entities]
    said_by = f.get("said_by")
    if said_by is not None and not (isinstance(said_by, dict) and isinstance(said_by.get("speaker"), str)):
        raise Confused(f"a turn whose said_by names no speaker: {head[:60]!r}")
    return Memory(handle=_handle(head, "m"), happened=str(f["happened"]), text=str(f["text"]), metadata=metadata,
                  said_by=said_by)


def _entity(row: Any) -> dict[str, Any]:
    """An entity row [name, kind, type, aliases?] (or an object, when the prompt kept one) as an object."""
    if isinstance(row, dict):
        return row
    if not isinstance(row, list):
        raise Confused(f"an entity that is neither a row nor an object: {row!r}")
    entity = {key: value for key, value in zip(("name", "kind", "type"), row[:3], strict=False) if value is not None}
    if len(row) > 3:
        entity["aliases"] = row[3]
    return entity


def sighting_handles(request: LeafRequest) -> set[str]:
    """The m-handles the prompt defines: the batch's records and the records of the sightings."""
    return {m.handle for m in request.memories} | {s.handle for m in request.mentions for s in m.sightings if s.handle}
