"""Prompts of the three model calls: the leaf planner, the section writer, the aggregation planner.

Pure text building, no I/O. Record and page lines follow the original pipeline's format
(records, candidate pages with their sections, aggregation pages with summaries) so the planners
read the same evidence the original's planners read.

The leaf planner's user message is split in two so the model gateway can cache the first part:
the STABLE part (the scope's candidate pages and open mentions) stays identical across the calls
that plan one scope's state, e.g. the two halves of a batch split after a truncated reply; the
BATCH part (the memories, and promotion candidates) changes with every call.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from uuid import UUID

from pydantic import BaseModel, ConfigDict

from domain.context import (
    AggregationPage,
    AggregationParentCandidate,
    AggregationSection,
    CandidatePage,
    MemoryRecord,
    OpenMention,
    PlannerContext,
)
from domain.plan import NewPage, PageLink, PageUpdate, ParentSectionUpdate, Promotion, SectionPromotion
from domain.plan import UnresolvedMention as PlannedMention
from planners.templates import describe_page_types, section_purpose

RECORD_TEXT_LIMIT = 800
CANDIDATE_SUMMARY_LIMIT = 200
CANDIDATE_ALIAS_LIMIT = 8
METADATA_STRING_LIMIT = 400
# Metadata keys that are bulky and say nothing to a planner (Places photo arrays, the raw store row).
METADATA_DROPPED_KEYS = frozenset({"photos", "raw"})
MENTION_CONTEXTS_SHOWN = 3
MENTION_CONTEXT_LIMIT = 200
WRITER_SOURCE_LIMIT = 400
AGGREGATION_SUMMARY_LIMIT = 300
AGGREGATION_TAG_LIMIT = 8
AGGREGATION_CANDIDATE_TAG_LIMIT = 6
AGGREGATION_CANDIDATE_RECORD_LIMIT = 20
AGGREGATION_NEIGHBORHOOD_LIMIT = 30
NONE_LINE = "(none)"
JSON_ONLY_INSTRUCTION = (
    "Answer with the JSON object only: no prose, no code fences. "
    "Include an empty array for every category that does not apply."
)


# --------------------------------------------------------------------------------------------
# Small text helpers
# --------------------------------------------------------------------------------------------


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}…"


def to_json(value: Any) -> str:
    """Compact JSON as JavaScript's JSON.stringify writes it (no spaces, non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def compact_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Metadata trimmed to what helps a planner.

    Top level: drops `photos`/`raw`, null values and strings longer than 400 characters. One level
    of nested objects is filtered the same way except that nested nulls are kept. Arrays are kept
    as they are.
    """
    compact: dict[str, Any] = {}
    for key, value in metadata.items():
        if key in METADATA_DROPPED_KEYS or value is None or _is_long_string(value):
            continue
        if isinstance(value, Mapping):
            compact[key] = {
                sub_key: sub_value
                for sub_key, sub_value in value.items()
                if sub_key not in METADATA_DROPPED_KEYS and not _is_long_string(sub_value)
            }
        else:
            compact[key] = value
    return compact


def _is_long_string(value: Any) -> bool:
    return isinstance(value, str) and len(value) > METADATA_STRING_LIMIT


def _section(heading: str, lines: Sequence[str]) -> str:
    return "\n".join([f"## {heading}", "", *(lines or [NONE_LINE])])


def _js_number(value: float | int) -> str:
    # Scores come as floats; print 0 rather than 0.0, as the original prompt did.
    return str(int(value)) if float(value).is_integer() else str(value)


# --------------------------------------------------------------------------------------------
# Leaf planner
# --------------------------------------------------------------------------------------------

PLANNER_OUTPUT_SHAPE = """{
  "pageUpdates": [
    {
      "pageId": "<id of a candidate page>",
      "aliases": ["<new alternate names for the page, optional>"],
      "sections": [
        {
          "slug": "<section slug>",
          "rationale": "<one sentence: why this section changes>",
          "proposed_body_md": "<the full new markdown body of the section>",
          "source_refs": ["<id of a record in this batch that informs THIS section>"]
        }
      ]
    }
  ],
  "newPages": [
    {
      "type": "entity | topic | decision",
      "slug": "<kebab-case slug>",
      "title": "<display title>",
      "aliases": ["<alternate names, optional>"],
      "summary": "<one-line summary>",
      "source_refs": ["<record ids backing the page as a whole>"],
      "sections": [
        {
          "slug": "<section slug>",
          "heading": "<section heading>",
          "body_md": "<markdown body>",
          "source_refs": ["<id of a record in this batch that informs THIS section>"]
        }
      ]
    }
  ],
  "unresolvedMentions": [
    {
      "alias": "<the name as written>",
      "suggestedType": "entity | topic | decision | null",
      "context": "<a short quote or paraphrase of where it appeared>",
      "source_ref": "<id of the record it appeared in>"
    }
  ],
  "promotions": [
    {
      "mentionId": "<id of an open mention>",
      "reason": "<one sentence: why now>",
      "type": "entity | topic | decision",
      "title": "<page title>",
      "slug": "<kebab-case slug>",
      "sections": [
        {"slug": "<section slug>", "heading": "<heading>", "body_md": "<body>", "source_refs": ["<record id>"]}
      ]
    }
  ],
  "pageLinks": [
    {
      "fromType": "entity | topic | decision",
      "fromSlug": "<slug of a candidate page or of one of your newPages>",
      "toType": "entity | topic | decision",
      "toSlug": "<slug of a candidate page or of one of your newPages>",
      "context": "<one line: why the link exists>"
    }
  ]
}"""

PLANNER_SYSTEM = f"""You are the planner of a wiki compiled from one user's memories. You read a batch of \
memory records together with the pages and the open unresolved mentions that already exist, and you \
decide how the wiki should change. You never write to the wiki yourself: you return a plan, and the \
compiler applies it.

Everything you are shown belongs to exactly one scope (one tenant, one owner). Refer only to the \
records, pages and mentions you are given.

## Page types

{describe_page_types()}

The defaults are a guide, not a cage: propose another section slug when the records clearly call for one.

## What a plan contains

One JSON object with the arrays below; any of them may be empty.
- pageUpdates: candidate pages whose sections should change given the new records. Include a section \
only when its content materially changes; never rewrite for style.
- newPages: new pages. Propose one only when all three hold: the subject is durable, at least two \
records reinforce it, and no candidate page already covers it (compare titles, slugs and aliases).
- unresolvedMentions: names the records mention that no candidate page covers and that do not yet \
justify a page of their own.
- promotions: open unresolved mentions that should now become pages, only when the mention has been \
seen at least 3 times and is still active recently. Use the mention's id as mentionId.
- pageLinks: directed links between pages that meaningfully reference each other: a restaurant to the \
trip or city it belongs to, a place to the larger place that contains it, a person to their \
organisation or family, a decision to the things it is about, a topic to its members. Emit both \
directions when both are meaningful. Both ends must be candidate pages or pages in your own newPages, \
named by (type, slug); never create a page through a link alone.

## Be cautious

Holding a name as an unresolved mention is almost free; a spurious page is expensive to undo. When in \
doubt, hold the name instead of creating a page. If you cannot tell whether something is an entity, a \
topic or a decision, hold it.

## Rules

1. Every section you write (in pageUpdates, newPages and promotions) MUST carry source_refs: the ids of \
exactly those records in this batch that inform that section. Never cite a record on a section whose \
text does not draw on it. Leave out any section that no record in this batch supports.
2. Never invent ids. pageId must be a candidate page id, mentionId an open mention id, and every \
source_ref the id of a record you were shown.
3. When a record clearly refers to a candidate page (by title, slug or alias), update that page; never \
create a second page for it.
4. Keep section bodies short, factual markdown. No speculation, nothing beyond what the records say.
5. Never write record ids, UUIDs, hex keys or any internal identifier into section text. Provenance \
belongs in source_refs only.
6. Never use [[wikilink]] syntax. Write names as plain text; you may bold a page's exact title \
(**Title**). Relationships between pages belong in pageLinks.
7. Slugs are lowercase kebab-case.
8. Answer with JSON only.

## Output shape

{PLANNER_OUTPUT_SHAPE}"""


class PlannerPrompt(BaseModel):
    """A prompt split for prompt caching: `system` and `stable_user` are cacheable prefixes."""

    model_config = ConfigDict(frozen=True)

    system: str
    stable_user: str
    batch_user: str

    @property
    def chars(self) -> int:
        return len(self.system) + len(self.stable_user) + len(self.batch_user)

    def user_text(self) -> str:
        """The whole user message, for callers that do not cache."""
        return "\n\n".join(part for part in (self.stable_user, self.batch_user) if part)


def build_planner_prompt(ctx: PlannerContext) -> PlannerPrompt:
    stable = "\n\n".join(
        [
            _section(
                "Candidate pages already in this scope", [_candidate_line(p) for p in ctx.candidate_pages]
            ),
            _section("Open unresolved mentions in this scope", [_mention_line(m) for m in ctx.open_mentions]),
        ]
    )
    batch_parts = [_section("Memory records in this batch", [_record_lines(r) for r in ctx.memories])]
    if ctx.promotion_candidate_ids:
        batch_parts.append(_promotion_section(ctx.promotion_candidate_ids, ctx.open_mentions))
    batch_parts.append(JSON_ONLY_INSTRUCTION)
    return PlannerPrompt(system=PLANNER_SYSTEM, stable_user=stable, batch_user="\n\n".join(batch_parts))


def _record_lines(record: MemoryRecord) -> str:
    metadata = compact_metadata(record.metadata)
    metadata_part = f" metadata={to_json(metadata)}" if metadata else ""
    return (
        f"- id={record.id} when={record.updated_at.isoformat()}{metadata_part}\n"
        f"  text: {truncate(record.content, RECORD_TEXT_LIMIT)}"
    )


def _candidate_line(page: CandidatePage) -> str:
    line = f"- id={page.id} type={page.type} slug={page.slug} title={to_json(page.title)}"
    if page.summary:
        line += f" summary={to_json(truncate(page.summary, CANDIDATE_SUMMARY_LIMIT))}"
    if page.aliases:
        line += f" aliases={to_json(page.aliases[:CANDIDATE_ALIAS_LIMIT])}"
    # Existing section slugs let the planner update a section instead of inventing a near-duplicate.
    if page.sections:
        line += f" sections={to_json([section.slug for section in page.sections])}"
    return line


def _mention_line(mention: OpenMention) -> str:
    line = f"- id={mention.id} alias={to_json(mention.alias)} count={mention.mention_count}"
    if mention.suggested_type:
        line += f" suggestedType={mention.suggested_type}"
    # The promotion rule needs recency, so the planner is told when the name was last seen.
    return f"{line} lastSeen={mention.last_seen_at.date().isoformat()}"


def _promotion_section(candidate_ids: Iterable[UUID], mentions: Sequence[OpenMention]) -> str:
    by_id = {mention.id: mention for mention in mentions}
    lines = [
        "These open mentions have been seen at least 3 times within the last 30 days. Promote each one "
        "(promotions[], mentionId = its id) if its accumulated contexts justify a durable page of its "
        "own; otherwise leave it open.",
        "",
    ]
    for mention_id in candidate_ids:
        mention = by_id.get(mention_id)
        if mention is None:
            lines.append(f"- id={mention_id}")
            continue
        lines.append(_mention_line(mention))
        lines.extend(_context_line(context) for context in mention.sample_contexts[:MENTION_CONTEXTS_SHOWN])
    return _section("Mentions that crossed the promotion threshold", lines)


def _context_line(context: Mapping[str, Any]) -> str:
    line = f"    context: {to_json(truncate(str(context.get('quote') or ''), MENTION_CONTEXT_LIMIT))}"
    if context.get("source_ref"):
        line += f" source_ref={context['source_ref']}"
    return line


# --------------------------------------------------------------------------------------------
# Section writer
# --------------------------------------------------------------------------------------------

SECTION_WRITER_SYSTEM = """You rewrite one section of one page of a wiki compiled from a user's memories.

Your output is the final markdown body of that section and nothing else: no JSON, no heading line, no \
other sections, no preamble, no closing remarks.

- Stay grounded in the source records and the planner's draft. Do not invent facts.
- Keep specific details of the existing body (names, dates, places) that are still correct.
- Prefer short prose; use bullets only for content that really is a list.
- If the existing body is still right and the new evidence only confirms it, return the existing body, \
with small factual updates at most.
- Never speculate, moralise, or describe the user's feelings beyond what the records show.
- Never write record ids, UUIDs or any internal identifier, and no "(see record …)" notes.
- Never use [[wikilink]] syntax; write names as plain text."""

EMPTY_EXISTING_BODY = "_(empty — this is a new section)_"
NO_CITED_SOURCES = "(none explicitly cited — stay close to the planner's draft)"


def build_section_writer_prompt(
    page_title: str,
    page_type: str,
    section_slug: str,
    heading: str,
    existing_body: str | None,
    proposed_body: str,
    cited_texts: Sequence[str],
) -> str:
    """The writer's user message. Record ids are never shown, so they cannot leak into the body."""
    sources = (
        "\n".join(f"- {truncate(text, WRITER_SOURCE_LIMIT)}" for text in cited_texts)
        if cited_texts
        else NO_CITED_SOURCES
    )
    return "\n".join(
        [
            f"Page: {page_title}  (type: {page_type})",
            f"Section: {heading}  (slug: {section_slug})",
            f"Section purpose: {section_purpose(page_type, section_slug)}",
            "",
            "## Existing body",
            (existing_body or "").strip() or EMPTY_EXISTING_BODY,
            "",
            "## Planner's proposed body",
            proposed_body.strip(),
            "",
            "## Source records (grounding only — do NOT cite ids in the body)",
            sources,
            "",
            "Return only the final markdown body of this one section, without its heading line.",
        ]
    )


# --------------------------------------------------------------------------------------------
# Aggregation planner
# --------------------------------------------------------------------------------------------




AGGREGATION_LEAF_ARRAYS = ("pageUpdates", "unresolvedMentions", "promotions")

AGGREGATION_OUTPUT_SHAPE = """{
  "parentSectionUpdates": [
    {
      "pageId": "<id of an existing hub page from the input>",
      "sectionSlug": "<rollup section slug>",
      "heading": "<section heading>",
      "proposed_body_md": "<rollup markdown; replaced by a rendered list when linked_page_slugs is set>",
      "rationale": "<one sentence: why this section changes now>",
      "linked_page_slugs": [{"type": "entity | topic | decision", "slug": "<slug of a page in the input>"}],
      "source_refs": ["<record id that informs this rollup>"],
      "observed_tags": ["<tags shared by the linked pages, optional>"]
    }
  ],
  "sectionPromotions": [
    {
      "pageId": "<id of the parent page>",
      "sectionSlug": "<the section being promoted>",
      "reason": "<one sentence: why it is ready to stand alone>",
      "parentSummary": "<short paragraph left on the parent section>",
      "topHighlights": ["<3 to 5 short highlight lines kept on the parent>"],
      "newPage": {
        "type": "topic",
        "slug": "<kebab-case slug>",
        "title": "<display title>",
        "aliases": [],
        "summary": "<one-line summary>",
        "source_refs": [],
        "sections": [
          {"slug": "<section slug>", "heading": "<heading>", "body_md": "<body>", "source_refs": ["<record id>"]}
        ]
      }
    }
  ],
  "newPages": [
    {
      "type": "topic",
      "slug": "<kebab-case slug>",
      "title": "<display title>",
      "summary": "<one-line summary>",
      "aliases": [],
      "source_refs": [],
      "sections": [
        {"slug": "<section slug>", "heading": "<heading>", "body_md": "<body>", "source_refs": ["<record id>"]}
      ]
    }
  ],
  "pageLinks": [
    {"fromType": "entity | topic | decision", "fromSlug": "<slug>", "toType": "entity | topic | decision",
     "toSlug": "<slug>", "context": "<why the link exists>"}
  ]
}"""

AGGREGATION_SYSTEM = f"""You are the aggregation planner of a wiki compiled from one user's memories. A leaf \
planner has already created and updated the concrete pages. Your job is the layer above them, the hubs:
- refresh rollup sections on existing hub pages (for example the "restaurants" section of an "Austin" \
topic page);
- promote a rollup section into its own topic page when it has become dense, coherent and durable \
enough to stand alone;
- create a hub topic page when the scope clearly needs one and none exists;
- emit the links that make the hierarchy navigable.

Everything you are shown belongs to exactly one scope. Every page you reference must be in the input \
or be a hub page you create in this same answer.

## Page types

{describe_page_types()}

Hub pages are topics.

## You must not

- Create leaf pages (a restaurant, a person, a park): that is the leaf planner's job. newPages is for \
hub topic pages only.
- Rewrite leaf sections (overview, notes, visits, ...). Touch only rollup sections of hub pages.
- Emit pageUpdates, unresolvedMentions or promotions: they are discarded.
- Promote a section whose status is already "promoted". Promotion is permanent.
- Invent page ids, slugs or record ids.

## Membership needs evidence

- Put a page under a hub (linked_page_slugs) only when that page's own title or summary shows that it \
belongs there. A page "Momofuku Daishō" summarised as "Korean-inspired restaurant in Toronto" does not \
belong in an Austin rollup. If the summary does not prove membership, leave the page out.
- If fewer than 3 pages in the input clearly match a hub, do not create or reinforce that hub now. \
Grouping too little is safe; grouping too much pollutes the wiki.
- Prefer the derived parent candidates as hubs: they come from record metadata and page summaries and \
are grounded. When there are none, be especially conservative.
- A city or place hub needs place evidence in the summary of every page it lists.
- List each child page under at most one section of a given parent.
- Create a new hub page only when at least 5 pages in the scope point to the same concept and no page \
for it exists yet.
- Promote a section only when it is dense (many linked pages), coherent (shared place, tags or theme) \
and persistent (evidence spread over time, not a one-day burst).

## Rules

- Every parentSectionUpdate and every section you write MUST carry source_refs: ids from the records \
lists of the parent candidates that inform it. Never make ids up; leave source_refs empty rather than \
guess.
- Never write record ids, UUIDs or any internal identifier into prose. Never use [[wikilink]] syntax.
- Keep bodies short, factual markdown. No speculation.
- Answer with JSON only.

## Output shape

{AGGREGATION_OUTPUT_SHAPE}"""


def build_aggregation_prompt(
    pages: Sequence[AggregationPage | Mapping[str, Any] | Any],
    parent_candidates: Sequence[AggregationParentCandidate | Mapping[str, Any] | Any],
    neighborhoods: Mapping[UUID | str, int],
) -> PlannerPrompt:
    """The aggregation planner's prompt. Inputs may be these models, dicts, or objects with the same
    attribute names. `neighborhoods` maps page id to its inbound link count (first 30 are shown).
    It runs once per compile, so nothing in it is worth caching beyond the system prompt."""
    page_models = [AggregationPage.model_validate(page, from_attributes=True) for page in pages]
    candidate_models = [
        AggregationParentCandidate.model_validate(candidate, from_attributes=True)
        for candidate in parent_candidates
    ]
    page_lines = [line for page in page_models for line in _aggregation_page_lines(page)]
    neighborhood_lines = [
        f"- pageId={page_id} inbound={count}"
        for page_id, count in list(neighborhoods.items())[:AGGREGATION_NEIGHBORHOOD_LIMIT]
    ]
    user = "\n\n".join(
        [
            _section("Recently changed pages in this scope", page_lines),
            _section(
                "Derived parent candidates (from record metadata and page summaries)",
                [_parent_candidate_line(candidate) for candidate in candidate_models],
            ),
            _section("Link neighborhoods (inbound links per page)", neighborhood_lines),
            JSON_ONLY_INSTRUCTION,
        ]
    )
    return PlannerPrompt(system=AGGREGATION_SYSTEM, stable_user="", batch_user=user)


def _aggregation_page_lines(page: AggregationPage) -> list[str]:
    head = f"- id={page.id} type={page.type} slug={page.slug} title={to_json(page.title)}"
    if page.parent_page_id:
        head += f" parent_page_id={page.parent_page_id}"
    head += f" hubness={page.hubness_score}"
    if page.tags:
        head += f" tags={to_json(page.tags[:AGGREGATION_TAG_LIMIT])}"
    lines = [head]
    # Summaries are the evidence for membership; without them the model over-groups.
    if page.summary:
        lines.append(f"    summary: {truncate(page.summary, AGGREGATION_SUMMARY_LIMIT)}")
    lines.extend(_aggregation_section_line(section) for section in page.sections)
    return lines


def _aggregation_section_line(section: AggregationSection) -> str:
    aggregation_part = ""
    if section.aggregation is not None:
        agg = section.aggregation
        aggregation_part = (
            f" linked={len(agg.get('linked_page_ids') or [])}"
            f" records={agg.get('supporting_record_count') or 0}"
            f" score={_js_number(agg.get('promotion_score') or 0)}"
            f" status={agg.get('promotion_status') or 'none'}"
        )
    return f"  · section={section.slug}{aggregation_part} body_chars={len(section.body_md)}"


def _parent_candidate_line(candidate: AggregationParentCandidate) -> str:
    line = (
        f"- reason={candidate.reason} parent={to_json(candidate.parent_title)} slug={candidate.parent_slug}"
        f" section={candidate.suggested_section_slug} supporting={candidate.supporting_count}"
        f" tags={to_json(candidate.observed_tags[:AGGREGATION_CANDIDATE_TAG_LIMIT])}"
    )
    # Record ids give the planner something real to cite in source_refs; summary-derived candidates
    # carry page ids, which are not citable records.
    if candidate.source_kind == "record" and candidate.source_record_ids:
        line += f" records={to_json(candidate.source_record_ids[:AGGREGATION_CANDIDATE_RECORD_LIMIT])}"
    return line


def force_aggregation_arrays(raw: Any) -> Any:
    """The aggregation reply with the leaf planner's arrays emptied (the aggregation planner may not
    re-enter the leaf planner's job) and non-list pageLinks/newPages replaced by []. Non-objects are
    returned untouched for the plan validation to reject."""
    if not isinstance(raw, dict):
        return raw
    shaped = {**raw, **{key: [] for key in AGGREGATION_LEAF_ARRAYS}}
    for key in ("pageLinks", "newPages"):
        if not isinstance(shaped.get(key), list):
            shaped[key] = []
    return shaped


# --------------------------------------------------------------------------------------------
# Reply schemas, for the model gateway's structured-output mechanism
# --------------------------------------------------------------------------------------------


class _LeafPlanReply(BaseModel):
    """What the leaf planner is asked for (the Plan model validates the reply afterwards)."""

    pageUpdates: list[PageUpdate]
    newPages: list[NewPage]
    unresolvedMentions: list[PlannedMention]
    promotions: list[Promotion]
    pageLinks: list[PageLink]


class _AggregationReply(BaseModel):
    parentSectionUpdates: list[ParentSectionUpdate]
    sectionPromotions: list[SectionPromotion]
    newPages: list[NewPage]
    pageLinks: list[PageLink]


PLANNER_REPLY_SCHEMA: dict[str, Any] = _LeafPlanReply.model_json_schema()
AGGREGATION_REPLY_SCHEMA: dict[str, Any] = _AggregationReply.model_json_schema()
