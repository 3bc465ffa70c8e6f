"""The simulator's brain: it reads the wiki compiler's own prompts back and answers as the scripted
planner would.

The leaf prompt shows exactly `planners.leaf_prompt.planner_view(context)` (the context with the
prompt's bounds applied), every value from memories or the wiki as one JSON value. Parsing it back
gives that same view, and the product's scripted planner plans from that view too: so for the leaf
pass, a compile through the SDK and this simulator writes the same wiki as a compile with
WIKI_LLM=scripted. The section writer's answer is the scripted writer's merge of the two bodies in
its prompt. The aggregation prompt shows less than the scripted aggregation planner reads (no
possible children outside the run, no stored rollup metadata), so its answer is the scripted
aggregation over what the prompt shows: a plausible plan, not the scripted run's.

A prompt this brain does not recognise gets a short text reply (or an empty tool input).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from domain.aliases import normalize_alias
from domain.context import (
    AggregationPage,
    AggregationParentCandidate,
    AggregationSection,
    CandidatePage,
    CandidateSection,
    MemoryRecord,
    OpenMention,
    PlannerContext,
)
from planners.scripted import scripted_plan, scripted_write_section
from planners.scripted_aggregation import scripted_aggregation_plan

PAGES = "## Candidate pages already in this scope"
MENTIONS = "## Open unresolved mentions in this scope"
RECORDS = "## Memory records in this batch"
PROMOTIONS = "## Mentions that crossed the promotion threshold"
_DECODER = json.JSONDecoder()
_HEADING = re.compile(r"^## .+$", re.MULTILINE)


def fields(line: str) -> dict[str, Any]:
    """`key=value` pairs of one prompt line; a value is JSON when it starts like JSON, else a bare word."""
    out: dict[str, Any] = {}
    index = 0
    while index < len(line):
        while index < len(line) and line[index] == " ":
            index += 1
        equals = line.find("=", index)
        if equals < 0:
            break
        key = line[index:equals].split(" ")[-1]
        start = equals + 1
        if start < len(line) and line[start] in '"[{':
            value, index = _DECODER.raw_decode(line, start)
        else:
            end = line.find(" ", start)
            end = len(line) if end < 0 else end
            value, index = line[start:end], end
        out[key] = value
    return out


def _sections(text: str) -> dict[str, str]:
    starts = [(m.start(), m.group(0)) for m in _HEADING.finditer(text)]
    out: dict[str, str] = {}
    for i, (start, heading) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        out[heading] = text[start + len(heading):end]
    return out


def _items(body: str) -> Iterator[tuple[str, list[str]]]:
    """Each `- ...` line of a section with the indented lines under it."""
    head: str | None = None
    rest: list[str] = []
    for line in body.splitlines():
        if line.startswith("- "):
            if head is not None:
                yield head, rest
            head, rest = line[2:], []
        elif line.startswith("  ") and head is not None:
            rest.append(line.strip())
    if head is not None:
        yield head, rest


def _when(raw: str) -> datetime:
    moment = datetime.fromisoformat(raw)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def parse_leaf_prompt(user: str) -> PlannerContext:
    """The planner context the leaf prompt shows (the view `planner_view` gives of the real one)."""
    parts = _sections(user)
    pages = [_page(head, rest) for head, rest in _items(parts.get(PAGES, ""))]
    mentions = [_mention(head, rest) for head, rest in _items(parts.get(MENTIONS, ""))]
    memories = [_memory(head, rest) for head, rest in _items(parts.get(RECORDS, ""))]
    promotions = [UUID(fields(head)["id"]) for head, _ in _items(parts.get(PROMOTIONS, ""))]
    return PlannerContext(tenant_id="", owner_id="", memories=memories, candidate_pages=pages,
                          open_mentions=mentions, promotion_candidate_ids=promotions)


def _page(head: str, rest: list[str]) -> CandidatePage:
    f = fields(head)
    sections = [fields(line.removeprefix("· section ")) for line in rest if line.startswith("· section ")]
    return CandidatePage(id=f["id"], type=f["type"], slug=f["slug"], title=f["title"], summary=f.get("summary"),
                         aliases=f.get("aliases", []),
                         sections=[CandidateSection(slug=s["slug"], heading=s["heading"], body_md=s["excerpt"])
                                   for s in sections])


def _mention(head: str, rest: list[str]) -> OpenMention:
    f = fields(head)
    contexts = []
    for line in rest:
        if line.startswith("· sighting"):
            s = fields(line.removeprefix("· sighting"))
            contexts.append({"quote": s.get("context", ""), "source_ref": s.get("source_ref", "")})
    return OpenMention(id=f["id"], alias=f["alias"], alias_normalized=f.get("key", normalize_alias(f["alias"])),
                       mention_count=int(f["count"]), suggested_type=f.get("suggestedType"),
                       last_seen_at=_when(f["lastSeen"]), sample_contexts=contexts)


def _memory(head: str, rest: list[str]) -> MemoryRecord:
    f = fields(head)
    text = next((fields(line)["text"] for line in rest if line.startswith("text=")), "")
    happened = _when(f["happened"])
    return MemoryRecord(id=f["id"], content=text, metadata=f.get("metadata", {}), created_at=happened,
                        updated_at=happened)


def leaf_plan(user: str) -> dict[str, Any]:
    return scripted_plan(parse_leaf_prompt(user)).model_dump(mode="json")


def written_section(user: str) -> str:
    existing = _between(user, "## Existing body\n", "\n\n## Planner's proposed body\n")
    proposed = _between(user, "## Planner's proposed body\n", "\n\n## Source records")
    if existing.startswith("_(empty"):
        existing = ""
    return scripted_write_section(existing, proposed)


def _between(text: str, start: str, end: str) -> str:
    head = text.find(start)
    if head < 0:
        return ""
    head += len(start)
    tail = text.find(end, head)
    return text[head:tail if tail >= 0 else len(text)]


def aggregation_plan(user: str, now: datetime) -> dict[str, Any]:
    parts = _sections(user)
    pages: list[AggregationPage] = []
    for head, rest in _items(parts.get("## Recently changed pages in this scope", "")):
        f = fields(head)
        summary = next((fields(line)["summary"] for line in rest if line.startswith("summary=")), None)
        sections = [AggregationSection(slug=fields(line.removeprefix("· "))["section"])
                    for line in rest if line.startswith("· section=")]
        pages.append(AggregationPage(id=f["id"], type=f["type"], slug=f["slug"], title=f["title"], summary=summary,
                                     parent_page_id=f.get("parent_page_id"), hubness_score=int(f.get("hubness", 0)),
                                     tags=f.get("tags", []), sections=sections))
    candidates = []
    for head, _ in _items(parts.get("## Derived parent candidates (from record metadata and page summaries)", "")):
        f = fields(head)
        records = f.get("records", [])
        candidates.append(AggregationParentCandidate(
            reason=f["reason"], parent_title=f["parent"], parent_slug=f["slug"], suggested_section_slug=f["section"],
            supporting_count=int(f["supporting"]), observed_tags=f.get("tags", []), source_record_ids=records,
            source_kind="record" if records else "summary"))
    return scripted_aggregation_plan(pages, candidates, [], now).model_dump(mode="json")
