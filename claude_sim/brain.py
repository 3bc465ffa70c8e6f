"""The simulator's brain: it reads the wiki compiler's own prompts back and answers as the scripted
planner would.

The leaf prompt shows exactly `planners.leaf_prompt.planner_view(context)` (the context with the
prompt's bounds applied), every value from memories or the wiki as one JSON value, every id as a
short handle (m1, p1, u1). Parsing it back gives that same view with each id replaced by a UUID made
from its handle (`handle_uuid`); the product's scripted planner plans from that view too, and the
brain writes its plan back in handles, in the compact contract (planners/compact_plan.py: a
memory's own dated line as "@m<n>", nothing the compiler derives), as a model following the prompt would: so for the leaf pass, a compile through the SDK and this simulator writes the same wiki as a compile with
WIKI_LLM=scripted. The section writer's answer is the scripted writer's merge of the two bodies in
its prompt, written as line edits (and condensed past the budget). The aggregation prompt shows less than the scripted aggregation planner reads (no
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
from uuid import NAMESPACE_URL, UUID, uuid5

from claude_sim.supersession import mark_replacements
from domain.aliases import format_heading_from_slug, normalize_alias
from domain.context import (
    AggregationPage,
    AggregationParentCandidate,
    AggregationSection,
    CandidateFact,
    CandidatePage,
    CandidateSection,
    MemoryRecord,
    OpenMention,
    PlannerContext,
)
from domain.plan import LineSources, NewSection, Plan
from planners.compact_plan import (
    SECTION_FIELDS,
    default_heading,
    default_slug,
    lead_of,
    quote_line,
    quote_text,
)
from planners.derived_lines import DERIVATIONS, DERIVED_PREFIX, derive, section_memories
from planners.scripted.aggregation import scripted_aggregation_plan
from planners.scripted.leaf_plan import scripted_plan, scripted_write_section

PAGES = "## Candidate pages already in this scope"
MENTIONS = "## Open unresolved mentions in this scope"
RECORDS = "## Memory records in this batch"
PROMOTIONS = "## Mentions that crossed the promotion threshold"
SHARED = "## Metadata shared by several records"
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


def handle_uuid(handle: str) -> UUID:
    """The UUID the brain stands in for a prompt's handle (the same handle, the same UUID)."""
    return uuid5(NAMESPACE_URL, f"claude-sim:{handle}")


def _handle(head: str) -> str:
    return head.split(" ", 1)[0]


def parse_leaf_prompt(user: str) -> PlannerContext:
    """The planner context the leaf prompt shows (the view `planner_view` gives of the real one), each
    handle standing as `handle_uuid(handle)`."""
    parts = _sections(user)
    pages = [_page(head, rest) for head, rest in _items(parts.get(PAGES, ""))]
    mentions = [_mention(head, rest) for head, rest in _items(parts.get(MENTIONS, ""))]
    shared = {_handle(head): fields(head) for head, _ in _items(parts.get(SHARED, ""))}
    memories = [_memory(head, shared) for head, _ in _items(parts.get(RECORDS, ""))]
    promotions = [handle_uuid(_handle(head)) for head, _ in _items(parts.get(PROMOTIONS, ""))]
    return PlannerContext(tenant_id="", owner_id="", memories=memories, candidate_pages=pages,
                          open_mentions=mentions, promotion_candidate_ids=promotions)


def leaf_handles(user: str) -> dict[str, str]:
    """Every handle the leaf prompt shows, keyed by the UUID text the brain stands in for it."""
    handles = re.findall(r"(?:^- |sighting )([mpu][0-9]+)\b", user, re.MULTILINE)
    return {str(handle_uuid(h)): h for h in handles}


def _page(head: str, rest: list[str]) -> CandidatePage:
    f = fields(head)
    sections = [fields(line.removeprefix("· ")) for line in rest if line.startswith("· slug=")]
    facts = [fields(line.removeprefix("· fact ")) for line in rest if line.startswith("· fact ")]
    return CandidatePage(id=handle_uuid(_handle(head)), type=f["type"], slug=f["slug"], title=f["title"],
                         summary=f.get("summary"), aliases=f.get("aliases", []),
                         facts=[CandidateFact(text=fact["text"], since=_when(fact["since"]) if "since" in fact else None)
                                for fact in facts],
                         sections=[CandidateSection(slug=s["slug"], heading=s.get("heading") or
                                                    format_heading_from_slug(s["slug"]), body_md=s["excerpt"])
                                   for s in sections])


def _mention(head: str, rest: list[str]) -> OpenMention:
    f = fields(head)
    contexts = []
    for line in rest:
        if line.startswith("· sighting"):
            tail = line.removeprefix("· sighting").strip()
            ref = "" if tail.startswith("context=") else str(handle_uuid(_handle(tail)))
            contexts.append({"quote": fields(tail).get("context", ""), "source_ref": ref})
    return OpenMention(id=handle_uuid(_handle(head)), alias=f["alias"],
                       alias_normalized=f.get("key", normalize_alias(f["alias"])),
                       mention_count=int(f["count"]), suggested_type=f.get("suggestedType"),
                       last_seen_at=_when(f["lastSeen"]), sample_contexts=contexts)


def _memory(head: str, shared: dict[str, dict[str, Any]]) -> MemoryRecord:
    f = fields(head)
    happened = _when(f["happened"])
    metadata = dict(f.get("metadata", {}))
    for ref in f.get("shared", []):
        metadata.update(shared.get(ref, {}))
    return MemoryRecord(id=handle_uuid(_handle(head)), content=f.get("text", ""),
                        metadata=_entity_objects(metadata), created_at=happened, updated_at=happened)


def _entity_objects(metadata: dict[str, Any]) -> dict[str, Any]:
    """The metadata with its entity rows ([name, kind, type, aliases?]) read back as objects."""
    entities = metadata.get("entities")
    if not isinstance(entities, list) or not all(isinstance(row, list) for row in entities):
        return metadata
    objects = []
    for row in entities:
        entity = {key: value for key, value in zip(("name", "kind", "type"), row[:3], strict=False) if value is not None}
        if len(row) > 3:
            entity["aliases"] = row[3]
        objects.append(entity)
    return {**metadata, "entities": objects}


def fact_handles(user: str) -> dict[str, str]:
    """The text of each fact the leaf prompt shows under its candidate pages -> its handle (f1, …)."""
    found = re.findall(r"^  · fact (f[0-9]+) (.*)$", user, re.MULTILINE)
    return {fields(rest)["text"]: handle for handle, rest in found}


def leaf_plan(user: str) -> dict[str, Any]:
    """The scripted planner's plan of what the prompt shows, written in the compact contract."""
    view = parse_leaf_prompt(user)
    # Which line replaces which current claim: the simulator's own judgement (claude_sim/supersession.py).
    return mark_replacements(user, compact_reply(scripted_plan(view), view, leaf_handles(user), fact_handles(user)))


def quoted_lines(user: str) -> dict[str, str]:
    """Memory handle -> the line its `@handle` quote stands for, for the memories the prompt shows."""
    view = parse_leaf_prompt(user)
    handles = leaf_handles(user)
    return {handles[str(m.id)].lower(): quote_line(m) for m in view.memories if str(m.id) in handles}


def compact_reply(plan: Plan, view: PlannerContext, handles: dict[str, str],
                  facts: dict[str, str] | None = None) -> dict[str, Any]:
    """A long-form plan as a model following the compact contract writes it (planners/compact_plan.py):
    handles for ids, a memory's own dated line as "@m<n>", citations its lines quote not repeated, and
    nothing the compiler derives (default slugs and headings, a held name's first sentence, a new
    page's citations when they are its sections')."""
    memories = {str(m.id): m for m in view.memories}
    pages = {(p.type, p.slug): handles[str(p.id)] for p in view.candidate_pages if str(p.id) in handles}

    def handle(value: str) -> str:
        return handles.get(value, value)

    def body(text: str, refs: list[str]) -> tuple[dict[str, Any], list[str]]:
        lines, quoted = [], []
        sources = section_memories(refs, memories)
        # The derived lines of these citations, the longest first: a run of lines equal to one is
        # written as its name.
        derived = sorted(((f"{DERIVED_PREFIX}{name}", derive(name, sources) or []) for name in DERIVATIONS),
                         key=lambda item: -len(item[1])) if sources is not None else []
        written = text.splitlines()
        at = 0
        while at < len(written):
            line = written[at]
            run = next((name for name, expected in derived
                        if expected and written[at:at + len(expected)] == expected), None)
            if run is not None:
                lines.append(run)
                at += len(dict(derived)[run])
                continue
            at += 1
            same = next((ref for ref in refs if ref in memories and ref not in quoted
                         and quote_line(memories[ref]) == line), None)
            led = None if same is not None else next(
                ((ref, lead) for ref in refs if ref in memories and ref not in quoted
                 and (lead := lead_of(line, quote_line(memories[ref]))) is not None), None)
            if led is not None:
                lines.append(f"@{handle(led[0])}:{led[1]}")
                quoted.append(led[0])
            elif same is None:
                lines.append(line)
            else:
                lines.append(f"@{handle(same)}")
                quoted.append(same)
        rest = [handle(ref) for ref in refs if ref not in quoted]
        cited = list(dict.fromkeys([handle(ref) for ref in quoted] + rest))
        return {"lines": lines, **({"refs": rest} if rest else {})}, cited

    quote_handles = {quote_line(m): f"@{handle(ref)}" for ref, m in memories.items()}

    def supersede(line_sources: list[LineSources]) -> dict[str, Any]:
        # A line as the reply writes it (its quote handle when it is one), a replaced line as a shown
        # fact's handle, a quote, or its text.
        pairs = [[quote_handles.get(entry.text, entry.text),
                  (facts or {}).get(replaced) or quote_handles.get(replaced, replaced)]
                 for entry in line_sources for replaced in entry.supersedes]
        return {"supersede": pairs} if pairs else {}

    def section(page_type: str, new: NewSection) -> tuple[dict[str, Any], list[str]]:
        written, cited = body(new.body_md, new.source_refs)
        out: dict[str, Any] = {"slug": new.slug}
        if new.heading and new.heading != default_heading(page_type, new.slug):
            out["heading"] = new.heading
        return {**out, **written, **supersede(new.line_sources)}, cited

    def sections(page_type: str, items: list[NewSection]) -> tuple[list[dict[str, Any]], list[str]]:
        written = [section(page_type, item) for item in items]
        return [w for w, _ in written], list(dict.fromkeys(ref for _, cited in written for ref in cited))

    def titled(title: str, slug: str) -> dict[str, Any]:
        return {"title": title, **({"slug": slug} if slug and slug != default_slug(title) else {})}

    updates = []
    for update in plan.pageUpdates:
        written_sections = []
        for item in update.sections:
            written, _ = body(item.proposed_body_md, item.source_refs)
            written_sections.append({"slug": item.slug, **written, **({"rewrite": True} if item.mode == "rewrite"
                                                                        else {}), **supersede(item.line_sources)})
        updates.append({"page": handle(update.pageId), **({"aliases": update.aliases} if update.aliases else {}),
                        "sections": written_sections})
    new_pages = []
    for page in plan.newPages:
        written_sections, cited = sections(page.type, page.sections)
        refs = [handle(ref) for ref in page.source_refs]
        new_pages.append({"type": page.type, **titled(page.title, page.slug),
                          **({"summary": page.summary} if page.summary else {}),
                          **({"aliases": page.aliases} if page.aliases else {}),
                          **({"refs": refs} if refs != cited else {}), "sections": written_sections})
    held = []
    for mention in plan.unresolvedMentions:
        memory = memories.get(mention.source_ref or "")
        default_quote = quote_text(memory) if memory is not None else None
        held.append({"name": mention.alias, **({"type": mention.suggestedType} if mention.suggestedType else {}),
                     "ref": handle(mention.source_ref or ""),
                     **({"quote": mention.context} if mention.context != default_quote else {})})
    promotions = [{"mention": handle(p.mentionId), "type": p.type, **titled(p.title, p.slug),
                   **({"reason": p.reason} if p.reason else {}), "sections": sections(p.type, p.sections)[0]}
                  for p in plan.promotions]

    def end(page_type: str, slug: str) -> str:
        return pages.get((page_type, slug), f"{page_type}/{slug}")

    # Links to one page with one context are one entry, its first end listing their sources.
    grouped: dict[tuple[str, str], list[str]] = {}
    for link in plan.pageLinks:
        grouped.setdefault((end(link.toType, link.toSlug), link.context or ""), []).append(
            end(link.fromType, link.fromSlug))
    links = [[sources if len(sources) > 1 else sources[0], target, *([context] if context else [])]
             for (target, context), sources in grouped.items()]
    return {"updates": updates, "new_pages": new_pages, "held": held, "promotions": promotions, "links": links}


def positional_sections(answer: dict[str, Any]) -> dict[str, Any]:
    """The answer with each section that has nothing but a slug, lines and refs written as an array
    (planners/compact_plan.py), as a model following the contract writes it."""
    def shortened(section: Any) -> Any:
        if not isinstance(section, dict) or not section.keys() <= set(SECTION_FIELDS) or "slug" not in section:
            return section
        return [section["slug"], section.get("lines", []), *([section["refs"]] if section.get("refs") else [])]

    for key in ("updates", "new_pages", "promotions"):
        for page in answer.get(key) or []:
            if isinstance(page, dict) and isinstance(page.get("sections"), list):
                page["sections"] = [shortened(section) for section in page["sections"]]
    return answer


def written_section(user: str) -> dict[str, Any]:
    """The writer's edits: the scripted writer's merge (new lines appended) as inserts after the last
    line; past the prompt's budget, the oldest lines folded into one summary line first, down to half
    the budget as the prompt asks (one replace and one ranged delete)."""
    shown = _between(user, "## Existing body\n", "\n\n## Planner's proposed body\n")
    proposed = _between(user, "## Planner's proposed body\n", "\n\n## Source records")
    if proposed.startswith("_(its new lines are already"):
        proposed = ""  # a condense-only call: the new lines are at the end of the body shown
    existing = [] if shown.startswith("_(empty") else [line.split("| ", 1)[-1] for line in shown.splitlines()]
    budget = int(re.search(r"^Budget: (\d+) characters$", user, re.MULTILINE).group(1))  # type: ignore[union-attr]
    merged = scripted_write_section("\n".join(existing), proposed).splitlines()
    folded = 0  # the oldest lines of the merged body folded into one summary line
    if len("\n".join(merged)) > budget:
        while len("\n".join(merged[folded:])) > budget // 2 - 120 and folded < len(merged) - 1:
            folded += 2 if folded == 0 else 1
    if folded and existing:
        kept_new = merged[max(folded, len(existing)):]
        edits: list[dict[str, Any]] = [{"op": "replace", "line": 1, "text": _summary_line(merged[:folded])}]
        last = min(folded, len(existing))
        if last >= 2:
            edits.append({"op": "delete", "line": 2, **({"to": last} if last > 2 else {})})
    else:
        kept_new = merged[len(existing):]
        edits = []
    if kept_new:
        edits.append({"op": "insert", "line": len(existing), "text": "\n".join(kept_new)})
    return {"edits": edits}


def _summary_line(lines: list[str]) -> str:
    """Older lines folded into one: how many, and the first words of the latest of them."""
    latest = lines[-1].lstrip("-* ").split()
    return f"- Earlier: {len(lines)} notes, the latest: {' '.join(latest[:12])}"


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
    answer = scripted_aggregation_plan(pages, candidates, [], now).model_dump(mode="json")
    # Links from one page with one context are one entry listing their targets (planners/prompts.py).
    grouped: dict[tuple[str, str], list[str]] = {}
    for link in answer["pageLinks"]:
        grouped.setdefault((f"{link['fromType']}/{link['fromSlug']}", link.get("context") or ""), []).append(
            f"{link['toType']}/{link['toSlug']}")
    answer["pageLinks"] = [[source, targets if len(targets) > 1 else targets[0], *([context] if context else [])]
                           for (source, context), targets in grouped.items()]
    return answer


def judged_pairs(user: str) -> dict[str, Any]:
    """The merge judge's answer. The prompt shows each ambiguous pair's evidence, but the brain (the
    scripted planner) has no rule of its own to weigh it, so it keeps every pair apart: the cautious
    answer, under which an unmerged pair stays two pages and nothing is merged wrongly."""
    pairs = re.findall(r"^### Pair (p\d+)$", user, re.MULTILINE)
    return {"decisions": [{"pair": pair, "same": False, "reason": "simulated: kept apart"} for pair in pairs]}
