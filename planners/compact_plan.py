"""The leaf planner's reply contract, compact: what the model writes, and how it becomes a Plan.

A plan's output tokens are its cost and its wall time (a 50-memory plan is written token by token
before any of its sections can be). Measured on the sample, most of a long-form plan was restated
text and repeated structure: every memory's first sentence copied into each page it touches, long
keys (`proposed_body_md`, `source_refs`) on every section, links spelled as four keys of type and
slug, and values the compiler derives anyway (a new page's slug from its title, a section's default
heading, a held name's quote). So the contract the model answers in is:

    {"updates":    [{"page": "p3", "aliases": [...], "sections": [
                       {"slug": "notes", "lines": ["- 2 new memories.", "@m4", "@m7"], "refs": [...],
                        "rewrite": true}]}],
     "new_pages":  [{"type": "entity", "title": "...", "slug": "...", "summary": "...", "aliases": [...],
                     "refs": [...], "sections": [{"slug": "overview", "heading": "...", "lines": [...],
                                                  "refs": [...]}]}],
     "held":       [{"name": "...", "type": "entity", "ref": "m5", "quote": "..."}],
     "promotions": [{"mention": "u2", "type": "entity", "title": "...", "slug": "...", "reason": "...",
                     "sections": [...]}],
     "links":      [["p3", "entity/new-page-slug", "context"], ...]}

- A line `@m4` stands for the memory's own dated line, `- <date m4 happened>: <its first sentence>`
  (`quote_line`), and `@m4:Contramar` for that line led by a name, `- <date>: **Contramar**: <its
  first sentence>`: the model cites a memory's fact without copying its text. Every handle a section
  quotes is one of its citations; `refs` adds citations its lines do not quote. Each line keeps its
  own citations in the long form (`line_sources`): a quote cites its memory, any other line all the
  section's citations; the gate then narrows a line to the memories that support it
  (`activities/claim_gate.py`). An unled quote is the memory's own words: the gate finds it quoted.
- A line `=count` (`=span`, `=visits`, `=visited`, `=address`) is written by the compiler from the
  section's citations (planners/derived_lines.py); the model never writes what it can derive.
- A section with nothing but a slug, lines and refs may be an array, `["notes", ["@m4"], ["m7"]]`.
- A link's first end may list several pages, each linked to its second end with one context.
- Left out: `slug` (the title's slug), `heading` (the section's default heading), a new page's `refs`
  (its sections' citations), a held name's `quote` (its memory's first sentence), `rewrite` (false:
  the lines are added to the section).
- Link ends are a candidate page's handle or `type/slug` of a page of this plan.
- A section may add `"supersede": [[newer, older, reason], ...]`: the newer line no longer lets the
  older hold (another value of something its holder has one of at a time, or its end). One end is a
  line of the section (as written, or `@m4`), the other a current claim `f2` shown under the
  candidate page or a line of this plan; the reason is a few words, optional. The section's line
  gets `supersedes` (with the reason) when it is the newer, `superseded_by` when a shown claim
  replaces it (its record arrived late). Apply checks the pair against the records' dates.

`to_plan` turns the reply into the long-form `Plan` (still in handles; `Handles.resolve` then maps
them to ids). Nothing the model wrote is dropped silently: a quoted handle the prompt never showed
is kept as a citation exactly as written (resolution drops and counts it, as it does any unknown
reference) and its line is left out of the body (a handle must never reach prose); a link end that
is no shown handle and no `type/slug` is counted as an unknown handle, and the link is dropped and
counted with the malformed ones.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from domain.aliases import normalize_alias, slugify_title
from domain.context import MemoryRecord
from domain.line_formats import dated_line, parse_dated
from domain.plan import PAGE_TYPES, Plan
from planners.derived_lines import derivation_name, derive, section_memories
from planners.memory_text import first_sentence, humanize, memory_date
from planners.telling import telling_quote
from planners.templates import section_template


def _none_to_list(value: Any) -> Any:
    return [] if value is None else value


Lines = Annotated[list[str], BeforeValidator(_none_to_list)]
SECTION_FIELDS = ("slug", "lines", "refs")


def _positional(value: Any) -> Any:
    """A section written as an array, ["notes", [lines], [refs]]: its slug, lines and refs in order."""
    if isinstance(value, list) and value and isinstance(value[0], str):
        return dict(zip(SECTION_FIELDS, value, strict=False))
    return value


class _Compact(BaseModel):
    model_config = ConfigDict(extra="ignore")


Pairs = Annotated[list[Any], BeforeValidator(_none_to_list)]


class UpdateSection(_Compact):
    slug: str = Field(min_length=1)
    lines: Lines = []
    refs: Lines = []
    rewrite: bool = False
    supersede: Pairs = []


class PageUpdate(_Compact):
    page: str = Field(min_length=1)
    aliases: Lines = []
    sections: Annotated[list[Annotated[UpdateSection, BeforeValidator(_positional)]],
                        BeforeValidator(_none_to_list)] = []


class Section(_Compact):
    slug: str = Field(min_length=1)
    heading: str = ""
    lines: Lines = []
    refs: Lines = []
    supersede: Pairs = []


class NewPage(_Compact):
    type: str
    title: str = Field(min_length=1)
    slug: str = ""
    summary: str | None = None
    aliases: Lines = []
    refs: Lines = []
    sections: Annotated[list[Annotated[Section, BeforeValidator(_positional)]], BeforeValidator(_none_to_list)] = []


class Held(_Compact):
    name: str = Field(min_length=1)
    type: str | None = None
    ref: str | None = None
    quote: str | None = None


class Promotion(_Compact):
    mention: str = Field(min_length=1)
    type: str
    title: str = Field(min_length=1)
    slug: str = ""
    reason: str = ""
    sections: Annotated[list[Annotated[Section, BeforeValidator(_positional)]], BeforeValidator(_none_to_list)] = []


class CompactPlan(BaseModel):
    """One leaf planner answer in the compact contract. The four arrays must be present (an answer
    without them is not this contract), links may be left out."""

    model_config = ConfigDict(extra="ignore")

    updates: list[PageUpdate]
    new_pages: list[NewPage]
    held: list[Held]
    promotions: list[Promotion]
    links: Annotated[list[Any], BeforeValidator(_none_to_list)] = []


# The forced tool's input schema: the five arrays, no more. The system prompt's output shape says
# what their items hold (repeating it here would be sent, and paid for, twice on every plan); the
# reply is validated by the models above afterwards.
PLANNER_REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["updates", "new_pages", "held", "promotions"],
    "properties": {key: {"type": "array", "items": {"type": "array" if key == "links" else "object"}}
                   for key in ("updates", "new_pages", "held", "promotions", "links")},
}


# ------------------------------------------------------------------ derived values


def quote_line(memory: MemoryRecord, lead: str = "") -> str:
    """The line `@m<n>` stands for: the memory's date and the sentences of it that say something
    (planners/telling.py: cleaned and capped, greetings and questions left out), led by `lead` for
    `@m<n>:Lead`."""
    return dated_line(memory_date(memory), telling_quote(memory.content) or "mentioned.", lead)


def quote_text(memory: MemoryRecord) -> str:
    """A held name's quote when the model leaves it out: the sentences of its memory that say something."""
    return telling_quote(memory.content) or first_sentence(memory.content)


def default_slug(title: str) -> str:
    # The apply path stores slugify_title(title) and falls back to the planner's slug when that is
    # empty ("東京"); the normalised title is the fallback, dashed.
    return slugify_title(title) or normalize_alias(title).replace(" ", "-") or "page"


def default_heading(page_type: str, slug: str) -> str:
    template = section_template(page_type, slug)
    return template.heading if template else humanize(slug)


_QUOTE = re.compile(r"^@([A-Za-z]+[0-9]+)(?::(\S.*))?$")
# A supersede pair's reason is kept to this many characters (a few words are asked for).
REASON_LIMIT = 200
_FACT_HANDLE = re.compile(r"^[fF][0-9]+$")


def is_quote(line: str) -> bool:
    """A whole line that is one handle after "@" ("@m4"; "@m0" too, an unknown one), or one handle
    and a lead after ":" ("@m4:Contramar"): prose such as "@home" or "@m4 and more" stays text."""
    return bool(_QUOTE.match(line.strip()))


def quote_parts(line: str) -> tuple[str, str]:
    """The handle a quote line names and its lead ("" for none)."""
    match = _QUOTE.match(line.strip())
    return (match.group(1), (match.group(2) or "").strip()) if match else ("", "")


def lead_of(line: str, quoted: str) -> str | None:
    """The lead of `line` when it is the dated line `quoted` led by a bolded name, else None."""
    head, sep, rest = quoted.partition(": ")
    if not sep or not line.startswith(f"{head}: **"):
        return None
    lead, sep, tail = line[len(head) + 4:].partition("**: ")
    return lead if sep and tail == rest and lead and "**" not in lead and lead == lead.strip() else None


# ------------------------------------------------------------------ compact -> Plan


class _Reader:
    """Turns one compact reply into the long form, counting the link ends it cannot read."""

    def __init__(self, quotes: dict[str, str], page_keys: dict[str, str], held_quotes: dict[str, str],
                 memories: dict[str, MemoryRecord] | None = None, facts: dict[str, str] | None = None) -> None:
        self.quotes = quotes
        self.page_keys = page_keys
        self.held_quotes = held_quotes
        self.memories = memories or {}
        self.facts = facts or {}
        self.unknown = 0

    def _line_text(self, value: Any) -> str:
        """A line named in a "supersede" pair: a shown fact's handle, a quote ("@m4"), or its text."""
        raw = value.strip() if isinstance(value, str) else ""
        if raw.lower() in self.facts:
            return self.facts[raw.lower()]
        if _FACT_HANDLE.match(raw):
            return ""  # a fact handle the prompt never showed: no line to mark
        if is_quote(raw):
            return self.quotes.get(quote_parts(raw)[0].lower(), "")
        return raw

    def supersede(self, pairs: list[Any], line_sources: list[dict[str, Any]]) -> None:
        """Each pair [newer, older, reason?] marks the section's line at one end: `supersedes` (and
        the reason) when it is the newer, `superseded_by` when it is the older; a pair naming no line
        of the section, or nothing readable, is left out (a mark is only a hint, checked at apply)."""
        by_text = {entry["text"]: entry for entry in line_sources}
        for pair in pairs:
            if not isinstance(pair, list) or len(pair) not in (2, 3):
                continue
            newer, older = self._line_text(pair[0]), self._line_text(pair[1])
            reason = pair[2].strip()[:REASON_LIMIT] if len(pair) == 3 and isinstance(pair[2], str) else ""
            if not newer or not older or newer == older:
                continue
            if newer in by_text:
                entry = by_text[newer]
                entry.setdefault("supersedes", []).append(older)
                if reason:
                    entry.setdefault("reasons", {})[older] = reason
            elif older in by_text:
                by_text[older].setdefault("superseded_by", []).append(newer)

    def body(self, lines: list[str], refs: list[str]) -> tuple[str, list[str], list[dict[str, Any]]]:
        """The body and citations of a section: quoted handles expanded and cited first, then `refs`;
        derived lines written from the section's citations; and each line's own citations: a quote
        cites its memory, any other line all the section's citations (the gate then narrows it to
        those that vouch for it)."""
        # An unknown quoted handle stays a citation as written: resolution counts it.
        cited = [quote_parts(line)[0] for line in lines if is_quote(line)]
        free_refs = list(dict.fromkeys([*cited, *refs]))
        sources = section_memories(free_refs, self.memories)
        out: list[str] = []
        per_line: list[tuple[str, list[str] | None]] = []
        for line in lines:
            name = derivation_name(line)
            if is_quote(line):
                handle, lead = quote_parts(line)
                expanded = self.quotes.get(handle.lower())
                dated = parse_dated(expanded) if expanded is not None and lead else None
                if dated is not None:
                    expanded = dated_line(dated.day, dated.text, lead)
                if expanded is not None:
                    out.append(expanded)
                    per_line.append((expanded, [handle]))
            elif name is not None:
                derived = derive(name, sources) if sources is not None else None
                if not derived:
                    self.unknown += 1  # nothing to derive it from: left out, and counted
                for text in derived or []:
                    out.append(text)
                    per_line.append((text, None))
            else:
                out.append(line)
                per_line.append((line, None))
        line_sources = [{"text": text, "refs": own if own is not None else free_refs}
                        for text, own in per_line if text.strip()]
        return "\n".join(out), list(dict.fromkeys([*cited, *refs])), line_sources

    def section(self, page_type: str, section: Section) -> dict[str, Any]:
        body, refs, line_sources = self.body(section.lines, section.refs)
        self.supersede(section.supersede, line_sources)
        heading = section.heading or (default_heading(page_type, section.slug) if page_type in PAGE_TYPES else "")
        return {"slug": section.slug, "heading": heading, "body_md": body, "source_refs": refs,
                "line_sources": line_sources}

    def link_end(self, end: Any) -> tuple[str, str]:
        text = str(end).strip() if isinstance(end, str) else ""
        key = self.page_keys.get(text.lower())
        if key is None and "/" in text:
            key = text
        if key is None:
            self.unknown += 1
            return "", ""
        page_type, _, slug = key.partition("/")
        return page_type, slug

    def links(self, raw: Any) -> list[Any]:
        """One entry's links: its first end may list several pages, each linked to its second end."""
        if not isinstance(raw, list) or len(raw) < 2:
            return [raw]  # not a link: the Plan contract drops and counts it
        sources = raw[0] if isinstance(raw[0], list) and raw[0] else [raw[0]]
        context = raw[2] if len(raw) > 2 and isinstance(raw[2], str) and raw[2] else None
        to_type, to_slug = self.link_end(raw[1])
        out = []
        for source in sources:
            from_type, from_slug = self.link_end(source)
            out.append({"fromType": from_type, "fromSlug": from_slug, "toType": to_type, "toSlug": to_slug,
                        "context": context})
        return out


def to_plan(compact: CompactPlan, quotes: dict[str, str], page_keys: dict[str, str],
            held_quotes: dict[str, str], memories: dict[str, MemoryRecord] | None = None,
            facts: dict[str, str] | None = None) -> tuple[Plan, int]:
    """The long-form plan (ids still as handles) and how many link ends named no shown page (and
    derived lines with nothing to derive from).

    `quotes`: m-handle -> the line `@m<n>` stands for; `page_keys`: p-handle -> "type/slug" of the
    candidate page; `held_quotes`: m-handle -> the default quote of a held name; `memories`: m-handle
    -> what a derived line reads of that memory of the batch; `facts`: f-handle -> the text of a fact
    shown under a candidate page."""
    reader = _Reader(quotes, page_keys, held_quotes, memories, facts)
    updates = []
    for update in compact.updates:
        update_sections: list[dict[str, Any]] = []
        for section in update.sections:
            body, refs, line_sources = reader.body(section.lines, section.refs)
            reader.supersede(section.supersede, line_sources)
            update_sections.append({"slug": section.slug, "proposed_body_md": body, "source_refs": refs,
                                    "line_sources": line_sources, "mode": "rewrite" if section.rewrite else "add"})
        updates.append({"pageId": update.page, "aliases": update.aliases, "sections": update_sections})
    new_pages = []
    for page in compact.new_pages:
        sections: list[dict[str, Any]] = [reader.section(page.type, section) for section in page.sections]
        refs = page.refs or list(dict.fromkeys(ref for section in sections for ref in section["source_refs"]))
        new_pages.append({"type": page.type, "slug": page.slug or default_slug(page.title), "title": page.title,
                          "summary": page.summary, "aliases": page.aliases, "source_refs": refs,
                          "sections": sections})
    held = [{"alias": name.name, "suggestedType": name.type, "source_ref": name.ref,
             "context": name.quote if name.quote is not None else held_quotes.get((name.ref or "").lower(), "")}
            for name in compact.held]
    promotions = [{"mentionId": p.mention, "type": p.type, "title": p.title, "slug": p.slug or default_slug(p.title),
                   "reason": p.reason, "sections": [reader.section(p.type, s) for s in p.sections]}
                  for p in compact.promotions]
    links = [link for raw in compact.links for link in reader.links(raw)]
    plan = Plan.model_validate({"pageUpdates": updates, "newPages": new_pages, "unresolvedMentions": held,
                                "promotions": promotions, "pageLinks": links})
    return plan, reader.unknown
