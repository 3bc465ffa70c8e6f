"""Prompts of the three model calls: the leaf planner (planners/leaf_prompt.py, re-exported here),
the section writer and the aggregation planner, and the reply schemas of the forced tool.

Pure text building, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from domain.context import AggregationPage, AggregationParentCandidate, AggregationSection
from planners.compact_plan import PLANNER_REPLY_SCHEMA  # noqa: F401 - the leaf reply's schema, re-exported
from planners.handles import Handles
from planners.leaf_prompt import (  # noqa: F401 - the leaf planner's prompt, re-exported
    PLANNER_SYSTEM,
    RECORD_TEXT_LIMIT,
    PlannerPrompt,
    build_planner_prompt,
    planner_max_tokens,
    planner_view,
)
from planners.prompt_text import (  # noqa: F401 - re-exported for the prompts' users
    JSON_ONLY_INSTRUCTION,
    NONE_LINE,
    compact_metadata,
    js_number,
    section,
    to_json,
    truncate,
)
from planners.section_edits import SECTION_BUDGET_CHARS, numbered
from planners.templates import describe_page_types, section_purpose

WRITER_SOURCE_LIMIT = 400
AGGREGATION_SUMMARY_LIMIT = 300
AGGREGATION_TAG_LIMIT = 8
AGGREGATION_CANDIDATE_TAG_LIMIT = 6
AGGREGATION_CANDIDATE_RECORD_LIMIT = 20
AGGREGATION_NEIGHBORHOOD_LIMIT = 30


# --------------------------------------------------------------------------------------------
# Section writer
# --------------------------------------------------------------------------------------------

SECTION_WRITER_SYSTEM = """You edit one section of one page of a wiki compiled from a user's memories.

You are shown the section's existing body with numbered lines, the planner's proposed new content and \
the source records. Answer with edits to the existing lines, never the whole section, as one JSON object:
{"edits": [{"op": "replace", "line": 3, "text": "<new text of line 3>"},
           {"op": "insert", "line": 5, "text": "<new line(s) to put after line 5; 0 = at the top>"},
           {"op": "delete", "line": 7, "to": 9}]}
Line numbers always refer to the existing body as shown; "to" (optional) makes a replace or delete \
cover lines line..to. An empty edits list keeps the section as it is.

- Stay grounded in the source records and the planner's draft. Do not invent facts.
- Replace a line only when the new evidence corrects or supersedes it; otherwise insert.
- The section has a size budget. When the body with your edits would pass it, condense line by line, \
until the body is at most half the budget, so that the next additions fit without another rewrite: \
keep the lines that together say the most of the records with the least repetition, whatever their \
date (a line said once long ago is as much the section's as the latest); merge lines that say the \
same thing into one line that says how many times and when ("- <the line> (3 times, 2026-01-03 to \
2026-02-20)"); keep a line stating what holds now (where someone lives, what they do, who is in their \
life) whatever its date; delete only lines a kept line already says, and keep counts as count lines. \
Nothing is lost from the evidence: the section keeps citing every record behind the lines it drops.
- Never speculate, moralise, or describe the user's feelings beyond what the records show.
- Never write record ids, UUIDs or any internal identifier, and no "(see record …)" notes.
- Never use [[wikilink]] syntax; write names as plain text."""

EMPTY_EXISTING_BODY = "_(empty — this is a new section)_"
NO_CITED_SOURCES = "(none explicitly cited — stay close to the planner's draft)"
# An update that only adds lines and passes the budget: its lines are appended in code before the
# writer is called, so the writer only condenses, and neither retypes them nor needs their records.
ALREADY_APPENDED = "_(its new lines are already at the end of the existing body: only condense)_"
NO_SOURCES_NEEDED = "(none needed: nothing new to write)"


def build_section_writer_prompt(
    page_title: str,
    page_type: str,
    section_slug: str,
    heading: str,
    existing_body: str | None,
    proposed_body: str,
    cited_texts: Sequence[str],
    budget_chars: int = SECTION_BUDGET_CHARS,
    *,
    appended: bool = False,
) -> str:
    """The writer's user message. Record ids are never shown, so they cannot leak into the body.
    `appended`: `existing_body` already ends with the proposal's lines (a condense-only call)."""
    sources = (
        NO_SOURCES_NEEDED if appended
        else "\n".join(f"- {truncate(text, WRITER_SOURCE_LIMIT)}" for text in cited_texts)
        if cited_texts
        else NO_CITED_SOURCES
    )
    return "\n".join(
        [
            f"Page: {page_title}  (type: {page_type})",
            f"Section: {heading}  (slug: {section_slug})",
            f"Section purpose: {section_purpose(page_type, section_slug)}",
            f"Budget: {budget_chars} characters",
            "",
            "## Existing body",
            numbered(existing_body) or EMPTY_EXISTING_BODY,
            "",
            "## Planner's proposed body",
            ALREADY_APPENDED if appended else proposed_body.strip(),
            "",
            "## Source records (grounding only — do NOT cite ids in the body)",
            sources,
            "",
            "Answer with the edits JSON object only.",
        ]
    )


# --------------------------------------------------------------------------------------------
# Aggregation planner
# --------------------------------------------------------------------------------------------




AGGREGATION_LEAF_ARRAYS = ("pageUpdates", "unresolvedMentions", "promotions")

AGGREGATION_OUTPUT_SHAPE = """{
  "parentSectionUpdates": [
    {
      "pageId": "<p-handle of an existing hub page from the input>",
      "sectionSlug": "<rollup section slug>",
      "heading": "<section heading>",
      "proposed_body_md": "<rollup markdown; replaced by a rendered list when linked_page_slugs is set>",
      "rationale": "<one sentence: why this section changes now>",
      "linked_page_slugs": [{"type": "entity | topic | decision", "slug": "<slug of a page in the input>"}],
      "source_refs": ["<m-handle of a record that informs this rollup>"],
      "observed_tags": ["<tags shared by the linked pages, optional>"]
    }
  ],
  "sectionPromotions": [
    {
      "pageId": "<p-handle of the parent page>",
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
          {"slug": "<section slug>", "heading": "<heading>", "body_md": "<body>", "source_refs": ["<m-handle>"]}
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
        {"slug": "<section slug>", "heading": "<heading>", "body_md": "<body>", "source_refs": ["<m-handle>"]}
      ]
    }
  ],
  "pageLinks": [
    ["<from: type/slug, or a list of them>", "<to: type/slug, or a list of them>", "<why the link exists>"]
  ]
}

A link entry links every page of its first end to every page of its second, with one context: a hub \
linking to its members is one entry whose second end lists them."""

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

- Pages are named by short handles (p1, p2, …) and records by m1, m2, …; copy them exactly.
- Every parentSectionUpdate and every section you write MUST carry source_refs: handles from the records \
lists of the parent candidates that inform it. Never make handles up; leave source_refs empty rather than \
guess.
- Never write record ids, UUIDs or any internal identifier into prose. Never use [[wikilink]] syntax.
- Keep bodies short, factual markdown. No speculation.
- Answer with JSON only.

## Output shape

{AGGREGATION_OUTPUT_SHAPE}"""


def build_aggregation_prompt(
    pages: Sequence[AggregationPage | Mapping[str, Any] | Any],
    parent_candidates: Sequence[AggregationParentCandidate | Mapping[str, Any] | Any],
    neighborhoods: Mapping[str, int],
) -> PlannerPrompt:
    """The aggregation planner's prompt. Inputs may be these models, dicts, or objects with the same
    attribute names. `neighborhoods` maps page id to its inbound link count (first 30 are shown).
    It runs once per compile, so nothing in it is worth caching beyond the system prompt."""
    page_models = [AggregationPage.model_validate(page, from_attributes=True) for page in pages]
    candidate_models = [
        AggregationParentCandidate.model_validate(candidate, from_attributes=True)
        for candidate in parent_candidates
    ]
    # Ids are shown as handles (p1… pages, m1… records): a UUID costs a model ~20 tokens to read and
    # as many to copy back. `Handles.resolve` maps the reply back.
    page_ids = [str(page.id) for page in page_models]
    page_ids += [str(page.parent_page_id) for page in page_models if page.parent_page_id]
    page_ids += [str(page_id) for page_id in list(neighborhoods)[:AGGREGATION_NEIGHBORHOOD_LIMIT]]
    record_ids = [str(r) for c in candidate_models if c.source_kind == "record"
                  for r in c.source_record_ids[:AGGREGATION_CANDIDATE_RECORD_LIMIT]]
    handles = Handles.build(record_ids, list(dict.fromkeys(page_ids)), [])
    page_lines = [line for page in page_models for line in _aggregation_page_lines(page, handles)]
    neighborhood_lines = [
        f"- pageId={handles.page(page_id)} inbound={count}"
        for page_id, count in list(neighborhoods.items())[:AGGREGATION_NEIGHBORHOOD_LIMIT]
    ]
    user = "\n\n".join(
        [
            section("Recently changed pages in this scope", page_lines),
            section(
                "Derived parent candidates (from record metadata and page summaries)",
                [_parent_candidate_line(candidate, handles) for candidate in candidate_models],
            ),
            section("Link neighborhoods (inbound links per page)", neighborhood_lines),
            JSON_ONLY_INSTRUCTION,
        ]
    )
    return PlannerPrompt(system=AGGREGATION_SYSTEM, user=user, handles=handles)


def _aggregation_page_lines(page: AggregationPage, handles: Handles) -> list[str]:
    head = f"- id={handles.page(page.id)} type={page.type} slug={page.slug} title={to_json(page.title)}"
    if page.parent_page_id:
        head += f" parent_page_id={handles.page(page.parent_page_id)}"
    head += f" hubness={page.hubness_score}"
    if page.tags:
        head += f" tags={to_json(page.tags[:AGGREGATION_TAG_LIMIT])}"
    lines = [head]
    # Summaries are the evidence for membership; without them the model over-groups.
    if page.summary:
        lines.append(f"    summary={to_json(truncate(page.summary, AGGREGATION_SUMMARY_LIMIT))}")
    lines.extend(_aggregation_section_line(section) for section in page.sections)
    return lines


def _aggregation_section_line(section: AggregationSection) -> str:
    aggregation_part = ""
    if section.aggregation is not None:
        agg = section.aggregation
        aggregation_part = (
            f" linked={len(agg.get('linked_page_ids') or [])}"
            f" records={agg.get('supporting_record_count') or 0}"
            f" score={js_number(agg.get('promotion_score') or 0)}"
            f" status={agg.get('promotion_status') or 'none'}"
        )
    return f"  · section={section.slug}{aggregation_part} body_chars={len(section.body_md)}"


def _parent_candidate_line(candidate: AggregationParentCandidate, handles: Handles) -> str:
    line = (
        f"- reason={candidate.reason} parent={to_json(candidate.parent_title)} slug={candidate.parent_slug}"
        f" section={candidate.suggested_section_slug} supporting={candidate.supporting_count}"
        f" tags={to_json(candidate.observed_tags[:AGGREGATION_CANDIDATE_TAG_LIMIT])}"
    )
    # Record ids give the planner something real to cite in source_refs; summary-derived candidates
    # carry page ids, which are not citable records.
    if candidate.source_kind == "record" and candidate.source_record_ids:
        shown = candidate.source_record_ids[:AGGREGATION_CANDIDATE_RECORD_LIMIT]
        line += f" records={to_json([handles.memory(record) for record in shown])}"
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
    shaped["pageLinks"] = [link for entry in shaped["pageLinks"] for link in link_entry(entry)]
    return shaped


def _type_slug(end: Any) -> tuple[str, str]:
    page_type, _, slug = end.strip().partition("/") if isinstance(end, str) else ("", "", "")
    return page_type, slug


def link_entry(entry: Any) -> list[Any]:
    """The long-form links of one reply entry: an object is one link as it is; an array
    [from, to, context?] links each page of `from` to each page of `to` ("type/slug", or a list of
    them). An end that is not "type/slug" gives a link the Plan contract drops and counts."""
    if not isinstance(entry, list):
        return [entry]
    if len(entry) < 2:
        return [{}]
    sources, targets = ([end] if not isinstance(end, list) else end for end in entry[:2])
    context = entry[2] if len(entry) > 2 and isinstance(entry[2], str) and entry[2] else None
    return [{"fromType": from_type, "fromSlug": from_slug, "toType": to_type, "toSlug": to_slug, "context": context}
            for from_type, from_slug in map(_type_slug, sources) for to_type, to_slug in map(_type_slug, targets)]


# --------------------------------------------------------------------------------------------
# Reply schemas, for the model gateway's structured-output mechanism
# --------------------------------------------------------------------------------------------


# The aggregation tool's input schema: its arrays and their items' keys, no prose or titles (the
# system prompt's output shape says what each means; the Plan model validates the reply afterwards).
_STR: dict[str, Any] = {"type": "string"}
_STRS: dict[str, Any] = {"type": "array", "items": _STR}
_AGG_SECTION = {"type": "object", "properties": {"slug": _STR, "heading": _STR, "body_md": _STR, "source_refs": _STRS}}
_AGG_PAGE = {"type": "object", "properties": {"type": _STR, "slug": _STR, "title": _STR, "summary": _STR,
                                              "aliases": _STRS, "source_refs": _STRS,
                                              "sections": {"type": "array", "items": _AGG_SECTION}}}
AGGREGATION_REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["parentSectionUpdates", "sectionPromotions", "newPages", "pageLinks"],
    "properties": {
        "parentSectionUpdates": {"type": "array", "items": {"type": "object", "properties": {
            "pageId": _STR, "sectionSlug": _STR, "heading": _STR, "proposed_body_md": _STR, "rationale": _STR,
            "linked_page_slugs": {"type": "array", "items": {"type": "object", "properties": {
                "type": _STR, "slug": _STR}}},
            "source_refs": _STRS, "observed_tags": _STRS}}},
        "sectionPromotions": {"type": "array", "items": {"type": "object", "properties": {
            "pageId": _STR, "sectionSlug": _STR, "reason": _STR, "parentSummary": _STR, "topHighlights": _STRS,
            "newPage": _AGG_PAGE}}},
        "newPages": {"type": "array", "items": _AGG_PAGE},
        "pageLinks": {"type": "array", "items": {"type": "array"}},
    },
}
