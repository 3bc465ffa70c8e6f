"""The leaf planner's prompt: the batch's memories, the scope's candidate pages and open mentions.

Pure text building, no I/O. What the model is shown, and the bounds on it (each a constant below):

Every id is shown as a short handle (`m1…` memories, `p1…` pages, `u1…` mentions; planners/handles.py)
and the reply is written in handles, mapped back to ids by the planner before anything uses it.

- Memories: handle, when each HAPPENED (`created_at`, the memory's own occurred_at; not when it was
  retained, which for a bootstrap import is the same day for everything), compact metadata, for a turn
  of a conversation `said_by` (its speaker, role, conversation and position: domain/conversation.py),
  and the text in full up to RECORD_TEXT_LIMIT characters. A longer text is shown up to the limit and marked
  as cut, with its full length, so the model knows it saw part of it; nothing is cut silently.
- Candidate pages: handle, type, slug, title, summary, aliases, and each section's slug, heading (left
  out when it is the slug's default heading) and its first line (up to SECTION_EXCERPT_LIMIT
  characters), so the model knows what each section holds and reuses its slug.
- Open mentions: handle, alias, count, suggested type, the day it was last seen, and every sighting the mention
  holds (its quoted context and the handle of the record it came from), so a promotion can cite them.
- Promotion candidates (a lint-triggered compile): the mentions to consider promoting.

The reply contract is compact (planners/compact_plan.py): the prompt's handles also carry what the
compiler derives from the reply (each batch memory's quoted line, each candidate page's type/slug).

Every value taken from memories or the wiki is written as JSON (one line, escaped), so untrusted
text cannot forge a line of the prompt. `planner_view` returns the context exactly as the prompt
shows it (bounds applied): the scripted planner plans from that view, so it decides from the same
evidence a model would, and a model simulator that parses the prompt back recovers the same view.

Caching: nothing here is marked for the prompt cache. The candidates and mentions depend on the
batch's names, so they change from call to call; the model gateway caches only the stable prefix
(tools and system prompt) and only when it is long enough for the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from uuid import UUID

from pydantic import BaseModel, ConfigDict

from domain.aliases import format_heading_from_slug, normalize_alias
from domain.context import (
    CandidateFact,
    CandidatePage,
    CandidateSection,
    MemoryRecord,
    OpenMention,
    PlannerContext,
)
from domain.line_formats import (
    address_line,
    count_line,
    dated_line,
    latest_line,
    span_line,
    visited_on_line,
    visits_line,
)
from planners.compact_plan import quote_line, quote_text
from planners.handles import Handles
from planners.prompt_text import JSON_ONLY_INSTRUCTION, compact_metadata, section, to_json, truncate
from planners.templates import describe_page_types

# A memory's text is shown in full up to this many characters (about 1,500 tokens); longer texts
# are shown up to it and marked as cut.
RECORD_TEXT_LIMIT = 6_000
CANDIDATE_SUMMARY_LIMIT = 200
CANDIDATE_ALIAS_LIMIT = 16
CANDIDATE_SECTION_LIMIT = 12
# A section's excerpt is its first line, up to this many characters: what the section holds (an
# overview's sentence, a log's count and date span, a condensed section's summary). Measured on the
# sample, the plans and the wiki were the same with 160, 100, 80, 60 or 40 characters of each body's start:
# updates only add lines (the compiler appends them and drops repeats), so the model need not see a
# body to avoid restating it.
SECTION_EXCERPT_LIMIT = 60
# The claims a candidate page the batch names shows (those that hold now, and those replaced, with
# when), newest first, each with a handle (f1, …) a new line can name as the one it replaces (or
# that replaces it), each cut to this many characters.
FACTS_SHOWN = 20
FACT_TEXT_LIMIT = 200
# Sightings a mention keeps (store/plan_apply.py keeps the newest 5) are all shown, each quote to here.
MENTION_CONTEXT_LIMIT = 300
MENTION_CONTEXTS_SHOWN = 5
# max_tokens of a leaf plan: a base plus a share per memory and per promotion candidate, capped. A
# dense plan runs to ~150 output tokens a memory; the share leaves room for twice that.
PLANNER_BASE_TOKENS = 1_024
PLANNER_TOKENS_PER_MEMORY = 320
PLANNER_TOKENS_PER_PROMOTION = 600
PLANNER_MAX_TOKENS = 24_000

# The lines the compact contract stands for, shown to the model as the compiler writes them
# (domain/line_formats.py), with placeholders for what varies.
_QUOTE = dated_line("<date m4 happened>", "<m4's first sentence>")
_LED_QUOTE = dated_line("<date>", "<first sentence>", "<name>")
_COUNT = count_line(3)
_SPAN = span_line(3, "<first day>", "<last day>")
_VISITS = visits_line(3, "<first>", "<last>")
_LATEST = latest_line([("<days>", 1)])
_VISITED = visited_on_line("<day>")
_ADDRESS = address_line("<the records' place address>")

PLANNER_OUTPUT_SHAPE = """{"updates": [{"page": "<p-handle>", "aliases": ["<new alternate name>"],
              "sections": [{"slug": "<section slug>", "lines": ["<new line>", "@<m-handle>"],
                            "refs": ["<m-handle>"], "rewrite": true}]}],
 "new_pages": [{"type": "entity|topic|decision", "title": "<display title>", "slug": "<kebab-case>",
                "summary": "<one line>", "aliases": ["<alternate name>"], "refs": ["<m-handle>"],
                "sections": [{"slug": "<slug>", "heading": "<heading>", "lines": ["<line>", "@<m-handle>"],
                              "refs": ["<m-handle>"]}]}],
 "held": [{"name": "<the name as written>", "type": "entity|topic|decision", "ref": "<m-handle>",
           "quote": "<short quote>"}],
 "promotions": [{"mention": "<u-handle>", "type": "entity|topic|decision", "title": "<page title>",
                 "slug": "<kebab-case>", "reason": "<one sentence>", "sections": [<as in new_pages>]}],
 "links": [["<from: p-handle, or type/slug of a page in new_pages or promotions; or a list of them>", "<to>",
            "<context>"]]}

Lines and citations:
""" + f"""- A section's body is its "lines" (markdown, one string per line). The line "@m4" stands for m4's own \
dated line, "{_QUOTE}": use it whenever that line says what you \
would write, rather than copying the text; "@m4:<name>" stands for that line led by a name in bold, \
"{_LED_QUOTE}". Every record a section quotes this way is cited by it; \
"refs" lists the other records the section draws on.
- The compiler writes these lines from the section's citations (records of this batch only) when \
you write their name as the line: "=count" ("{_COUNT}"), "=span" ("{_SPAN}"), "=visits" (the visit summary: \
"{_VISITS}", by month \
when several, "{_LATEST}"), "=visited" (one "{_VISITED}" per day, newest first), \
"=address" ("{_ADDRESS}").
""" + """- In updates, lines are added to the section as they are; set "rewrite": true only when an existing \
line is wrong or superseded (the section is then rewritten from your lines).
- A candidate page the records name lists its lines as "fact f<n>" (since: when it began to hold; \
until: when a newer line replaced it). When a line of yours says that one of them no longer holds, because something its holder has \
one of at a time now has another value (where someone lives, works or studies, a role, partner, \
manager, doctor, phone, email, address, car, diet, age, a meeting's time, a project's status, or \
anything else of that kind), or because it ended ("no longer lives in …", "quit …", "left … for …", \
"moved out of …", "… is over"), add to its section "supersede": [["<your line, or @m-handle>", \
"<f-handle, or a line of this plan>", "<why, a few words>"]]. The newer replaces the older: when your \
record happened before that fact (it arrived late), write the pair the other way round, \
["<f-handle>", "<your line>", "<why>"] (a fact with "until" placed after your line's record, too). \
A value said again after another replaced it replaces that \
other. Never mark facts that accumulate (groups joined, roles taken on, places visited, people met, \
hobbies, pets, trips): a new one sits beside the others. The compiler checks each pair against the \
records' dates.
- A section with nothing but "slug", "lines" and "refs" may be written as an array: \
["<slug>", ["<line>", "@<m-handle>"], ["<m-handle>"]] (refs last, left out when empty).
Leave out what you have nothing for, and what the compiler derives: "slug" when it is the title's \
kebab-case, "heading" when it is the section's default, a new page's "refs" when they are its \
sections' citations, a held name's "quote" when it is its record's first sentence, "rewrite" when \
false, a link's context when there is none. Links from several pages to one page with one context \
are one link whose first end lists them."""

PLANNER_SYSTEM = f"""You are the planner of a wiki compiled from one user's memories. You read a batch of \
memory records together with the pages and the open unresolved mentions that already exist, and you \
decide how the wiki should change. You never write to the wiki yourself: you return a plan, and the \
compiler applies it.

Everything you are shown belongs to exactly one scope (one tenant, one owner). Refer only to the \
records, pages and mentions you are given. A record's metadata lists its entities as rows: [name, \
kind, type] or [name, kind, type, [aliases]], null where a value is absent; a value several records \
share (a place, a journal) is listed once under "Metadata shared by several records", and each record \
names it in "shared". Many records have no such \
list: plain sentences name people, places, organisations, events and things too ("Lunch at Franklin \
Barbecue with Lena" names a restaurant and a person), so read every record's text for the names it \
mentions, listed or not, and treat them as you treat listed ones.

Some records are turns of a conversation: "said_by" gives the speaker's name, their role when the \
message was sent by the user or the assistant, the conversation and the turn's position, and the text \
starts with the speaker's name. First-person words (I, my, me, we, our) are the speaker's; "you" is the \
person spoken to; a name after a greeting or thanks ("Hey Mel!") only addresses someone. Write what a \
turn states in the third person, naming whom it is about ("Priya adopted a second cat."), on that \
person's page, citing the turns it comes from; greetings, thanks, questions and reactions state \
nothing. Each speaker has one page however they are addressed (a nickname, a first name alone). An \
assistant's turn is no fact about the user unless the user's next turn confirms it; then cite both.

## Page types

{describe_page_types()}

The defaults are a guide, not a cage: propose another section slug when the records clearly call for one.

## What a plan contains

One JSON object with the arrays below; any of them may be empty.
- updates: candidate pages whose sections should change given the new records. Each candidate page \
lists its sections with the first line of their current text (a section without a heading has the \
slug's default heading); include a section only when its content materially changes, never rewrite \
for style, and reuse an existing section's slug rather than invent a near-duplicate.
- new_pages: new pages. Propose one only when all three hold: the subject is durable, at least two \
records reinforce it, and no candidate page already covers it (compare titles, slugs and aliases).
- held: names the records mention that no candidate page covers and that do not yet justify a page \
of their own, each with the record it appeared in.
- promotions: open unresolved mentions that should now become pages, only when the mention has been \
seen at least 3 times and is still active recently. A promotion's sections may cite, besides records \
of this batch, the records of the sightings listed under that mention: they are the earlier records \
the name was held from.
- links: directed links between pages that meaningfully reference each other: a restaurant to the \
trip or city it belongs to, a place to the larger place that contains it, a person to their \
organisation or family, a decision to the things it is about, a topic to its members. Emit both \
directions when both are meaningful. Both ends must be candidate pages or pages of this plan; never \
create a page through a link alone.

## Be cautious

Holding a name is almost free; a spurious page is expensive to undo. When in doubt, hold the name \
instead of creating a page. If you cannot tell whether something is an entity, a topic or a \
decision, hold it.

## Rules

1. Every section you write MUST cite exactly those records of this batch (for a promotion, also the \
mention's sightings) that inform it. Never cite a record on a section whose text does not draw on it. \
Leave out any section that no record supports.
2. Everything is named by a short handle: m1, m2, … for records, p1, … for candidate pages, u1, … for \
open mentions. Never invent a handle; copy handles exactly.
3. When a record clearly refers to a candidate page (by title, slug or alias), update that page; never \
create a second page for it.
4. Keep section text short, factual markdown. No speculation, nothing beyond what the records say.
5. Never write handles (except a whole "@m<n>" line), ids, UUIDs or any internal identifier into \
section text. Provenance belongs in the citations only.
6. Never use [[wikilink]] syntax. Write names as plain text; you may bold a page's exact title \
(**Title**). Relationships between pages belong in links.
7. Slugs are lowercase kebab-case.
8. Answer with JSON only.

## Output shape

{PLANNER_OUTPUT_SHAPE}"""


class PlannerPrompt(BaseModel):
    """A prompt: the system prompt (with the tool schema, the only stable prefix), the user message, and
    the handles the user message names ids by."""

    model_config = ConfigDict(frozen=True)

    system: str
    user: str
    handles: Handles = Handles()

    @property
    def chars(self) -> int:
        return len(self.system) + len(self.user)


def planner_max_tokens(memories: int, promotions: int = 0) -> int:
    """The output budget of one leaf plan, sized to what the batch can need."""
    wanted = PLANNER_BASE_TOKENS + memories * PLANNER_TOKENS_PER_MEMORY + promotions * PLANNER_TOKENS_PER_PROMOTION
    return min(PLANNER_MAX_TOKENS, wanted)


def prompt_handles(ctx: PlannerContext) -> Handles:
    sightings = [str(c.get("source_ref") or "") for m in ctx.open_mentions
                 for c in shown_mention(m).sample_contexts]
    mentions = [m.id for m in ctx.open_mentions]
    mentions += [i for i in ctx.promotion_candidate_ids if i not in mentions]
    handles = Handles.build([m.id for m in ctx.memories], [p.id for p in ctx.candidate_pages], mentions, sightings)
    # The values the compact reply leaves to the compiler, from the memories as the prompt shows them.
    # Only the batch's records: their text is in the prompt, so the model knows what "@m<n>" says.
    shown = {str(m.id).lower(): shown_memory(m) for m in ctx.memories}
    quotes: dict[str, str] = {}
    held_quotes: dict[str, str] = {}
    happened: dict[str, str] = {}
    addresses: dict[str, str] = {}
    for handle, memory_id in handles.memories.items():
        memory = shown.get(memory_id.lower())
        if memory is not None:
            quotes[handle] = quote_line(memory)
            held_quotes[handle] = quote_text(memory)
            happened[handle] = memory.created_at.isoformat()
            place = memory.metadata.get("place")
            if isinstance(place, dict) and isinstance(place.get("address"), str):
                addresses[handle] = place["address"]
    page_keys = {handles.page(p.id): f"{p.type}/{p.slug}" for p in ctx.candidate_pages}
    facts: dict[str, str] = {}
    page_facts: dict[str, list[str]] = {}
    for page in ctx.candidate_pages:
        for fact in page.facts[:FACTS_SHOWN]:
            handle = f"f{len(facts) + 1}"
            facts[handle] = fact.text
            page_facts.setdefault(str(page.id), []).append(handle)
    return handles.model_copy(update={"quotes": quotes, "held_quotes": held_quotes, "page_keys": page_keys,
                                      "facts": facts, "page_facts": page_facts,
                                      "happened": happened, "addresses": addresses})


def build_planner_prompt(ctx: PlannerContext) -> PlannerPrompt:
    handles = prompt_handles(ctx)
    shared = shared_metadata(ctx.memories)
    parts = [
        section("Candidate pages already in this scope", [_candidate_lines(p, handles) for p in ctx.candidate_pages]),
        section("Open unresolved mentions in this scope", [_mention_lines(m, handles) for m in ctx.open_mentions]),
        *([section(SHARED_HEADING, _shared_lines(shared))] if shared else []),
        section("Memory records in this batch", [_record_lines(r, handles, shared) for r in ctx.memories]),
    ]
    if ctx.promotion_candidate_ids:
        parts.append(_promotion_section(ctx.promotion_candidate_ids, ctx.open_mentions, handles))
    parts.append(JSON_ONLY_INSTRUCTION)
    return PlannerPrompt(system=PLANNER_SYSTEM, user="\n\n".join(parts), handles=handles)


# ------------------------------------------------------------------ what the prompt shows


def shown_text(content: str) -> str:
    return content[:RECORD_TEXT_LIMIT]


SHARED_HEADING = "Metadata shared by several records"
# Metadata the leaf planner is not shown: tags name themes, which the aggregation pass reads from the
# stored memories when it builds hubs; a leaf plan's pages come from names. A journal's id is shown
# only when it has no title (the title names the trip).
PLANNER_DROPPED_METADATA = frozenset({"tags"})
# Metadata values shown once per batch when several of its records carry the same one (a trip's
# journal, a place visited twice), each record naming them under `shared`.
SHAREABLE_METADATA = ("place", "journal")


def planner_metadata(metadata: dict) -> dict:
    shown = {key: value for key, value in compact_metadata(metadata).items() if key not in PLANNER_DROPPED_METADATA}
    journal = shown.get("journal")
    if isinstance(journal, dict) and journal.get("title") and "id" in journal:
        shown["journal"] = {key: value for key, value in journal.items() if key != "id"}
    return shown


def shown_memory(record: MemoryRecord) -> MemoryRecord:
    # The prompt dates a memory by when it happened; that is the only date a planner gets.
    return MemoryRecord(id=record.id, content=shown_text(record.content), metadata=planner_metadata(record.metadata),
                        created_at=record.created_at, updated_at=record.created_at, speaker=record.speaker,
                        speaker_role=record.speaker_role, conversation=record.conversation, position=record.position)


def shown_page(page: CandidatePage) -> CandidatePage:
    return CandidatePage(
        id=page.id, type=page.type, slug=page.slug, title=page.title,
        summary=truncate(page.summary, CANDIDATE_SUMMARY_LIMIT) if page.summary else None,
        aliases=page.aliases[:CANDIDATE_ALIAS_LIMIT],
        sections=[CandidateSection(slug=s.slug, heading=s.heading, body_md=section_excerpt(s.body_md))
                  for s in page.sections[:CANDIDATE_SECTION_LIMIT]],
        facts=[CandidateFact(text=truncate(f.text, FACT_TEXT_LIMIT), since=f.since, until=f.until)
               for f in page.facts[:FACTS_SHOWN]],
    )


def section_excerpt(body: str) -> str:
    first = next((line.strip() for line in body.splitlines() if line.strip()), "")
    return truncate(first, SECTION_EXCERPT_LIMIT)


def last_seen_day(moment: datetime) -> datetime:
    """When a mention was last seen, to the day (UTC): the promotion rule's recency is counted in days,
    and the time of day (to the microsecond) cost a prompt ~8 tokens a mention."""
    utc = moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    return datetime(utc.year, utc.month, utc.day, tzinfo=UTC)


def shown_mention(mention: OpenMention) -> OpenMention:
    contexts = [{"quote": truncate(str(c.get("quote") or ""), MENTION_CONTEXT_LIMIT),
                 "source_ref": str(c.get("source_ref") or "")}
                for c in mention.sample_contexts[:MENTION_CONTEXTS_SHOWN]]
    return OpenMention(id=mention.id, alias=mention.alias, alias_normalized=mention.alias_normalized,
                       mention_count=mention.mention_count, suggested_type=mention.suggested_type,
                       last_seen_at=last_seen_day(mention.last_seen_at), sample_contexts=contexts)


def planner_view(ctx: PlannerContext) -> PlannerContext:
    """The context exactly as the leaf prompt shows it: what a planner may decide from."""
    return PlannerContext(
        tenant_id=ctx.tenant_id, owner_id=ctx.owner_id,
        memories=[shown_memory(m) for m in ctx.memories],
        candidate_pages=[shown_page(p) for p in ctx.candidate_pages],
        open_mentions=[shown_mention(m) for m in ctx.open_mentions],
        promotion_candidate_ids=list(ctx.promotion_candidate_ids),
        # The memories behind the open mentions' sightings: the prompt names them by handle with the
        # sighting's quote, so a promotion can cite them and be written from them.
        held_memories=[shown_memory(m) for m in ctx.held_memories],
    )


# ------------------------------------------------------------------ lines
# Each line leads with its handle; values from memories or the wiki are JSON.


# A record's metadata entities are written as rows, [name, kind, type] or [name, kind, type, [aliases]]
# (null where absent), rather than as objects repeating their keys: on the sample the keys were a
# fifth of a plan's metadata. Entities with any other key, or a non-text value, keep their objects.
ENTITY_FIELDS = ("name", "kind", "type")


def entity_rows(metadata: dict) -> dict:
    entities = metadata.get("entities")
    if not isinstance(entities, list) or not entities or not all(_row_able(e) for e in entities):
        return metadata
    rows = [[e.get(key) for key in ENTITY_FIELDS] + ([e["aliases"]] if "aliases" in e else []) for e in entities]
    return {**metadata, "entities": rows}


def _row_able(entity: object) -> bool:
    return (isinstance(entity, dict) and set(entity) <= {*ENTITY_FIELDS, "aliases"}
            and all(isinstance(entity[key], str) for key in ENTITY_FIELDS if key in entity)
            and (isinstance(entity.get("aliases"), list) if "aliases" in entity else True))


def shared_metadata(memories: Sequence[MemoryRecord]) -> dict[str, tuple[str, str, object]]:
    """The metadata values several of the batch's records carry (SHAREABLE_METADATA), by their JSON:
    (handle s1, s2, ..., key, value), in the order the records first carry them."""
    seen: dict[str, int] = {}
    values: dict[str, tuple[str, object]] = {}
    for memory in memories:
        metadata = planner_metadata(memory.metadata)
        for key in SHAREABLE_METADATA:
            if key in metadata:
                shown = to_json({key: metadata[key]})
                seen[shown] = seen.get(shown, 0) + 1
                values.setdefault(shown, (key, metadata[key]))
    shared = [shown for shown, count in seen.items() if count > 1]
    return {shown: (f"s{n}", *values[shown]) for n, shown in enumerate(shared, 1)}


def _shared_lines(shared: dict[str, tuple[str, str, object]]) -> list[str]:
    return [f"- {handle} {key}={to_json(value)}" for handle, key, value in shared.values()]


def happened_text(moment: datetime) -> str:
    """When a memory happened, as ISO 8601 with "Z" for UTC (6 characters fewer than "+00:00")."""
    text = moment.isoformat()
    return text.removesuffix("+00:00") + "Z" if text.endswith("+00:00") else text


def said_by(record: MemoryRecord) -> str:
    """A turn's ` said_by={"speaker", "role", "conversation", "turn"}` (role only when it has one); ""
    for a memory that is no turn."""
    if not record.speaker:
        return ""
    turn: dict[str, object] = {"speaker": record.speaker}
    if record.speaker_role:
        turn["role"] = record.speaker_role
    if record.conversation is not None:
        turn["conversation"] = record.conversation
        turn["turn"] = record.position
    return f" said_by={to_json(turn)}"


def _record_lines(record: MemoryRecord, handles: Handles, shared: dict[str, tuple[str, str, object]]) -> str:
    metadata = planner_metadata(record.metadata)
    refs = []
    for key in SHAREABLE_METADATA:
        found = shared.get(to_json({key: metadata[key]})) if key in metadata else None
        if found is not None:
            refs.append(found[0])
            del metadata[key]
    metadata = entity_rows(metadata)
    metadata_part = (f" shared={to_json(refs)}" if refs else "") + (f" metadata={to_json(metadata)}" if metadata else "")
    line = (f"- {handles.memory(record.id)} happened={happened_text(record.created_at)}{metadata_part}"
            f"{said_by(record)} text={to_json(shown_text(record.content))}")
    if len(record.content) > RECORD_TEXT_LIMIT:
        line += f" text_cut=first-{RECORD_TEXT_LIMIT}-of-{len(record.content)}-characters"
    return line


def _candidate_lines(page: CandidatePage, handles: Handles) -> str:
    shown = shown_page(page)
    line = f"- {handles.page(shown.id)} type={shown.type} slug={shown.slug} title={to_json(shown.title)}"
    if shown.summary:
        line += f" summary={to_json(shown.summary)}"
    if shown.aliases:
        line += f" aliases={to_json(shown.aliases)}"
    lines = [line]
    for s in shown.sections:
        heading = "" if s.heading == format_heading_from_slug(s.slug) else f" heading={to_json(s.heading)}"
        lines.append(f"  · slug={s.slug}{heading} excerpt={to_json(s.body_md)}")
    for handle, fact in zip(handles.page_facts.get(str(page.id), []), shown.facts, strict=False):
        since = f" since={fact.since.date().isoformat()}" if fact.since else ""
        until = f" until={fact.until.date().isoformat()}" if fact.until else ""
        lines.append(f"  · fact {handle}{since}{until} text={to_json(fact.text)}")
    return "\n".join(lines)


def _mention_head(mention: OpenMention, handles: Handles) -> str:
    line = f"- {handles.mention(mention.id)} alias={to_json(mention.alias)}"
    if mention.alias_normalized != normalize_alias(mention.alias):
        line += f" key={to_json(mention.alias_normalized)}"
    line += f" count={mention.mention_count}"
    if mention.suggested_type:
        line += f" suggestedType={mention.suggested_type}"
    # The promotion rule needs recency, so the planner is told when the name was last seen.
    return f"{line} lastSeen={mention.last_seen_at.date().isoformat()}"


def _mention_lines(mention: OpenMention, handles: Handles) -> str:
    shown = shown_mention(mention)
    lines = [_mention_head(shown, handles)]
    for context in shown.sample_contexts:
        ref = f" {handles.memory(context['source_ref'])}" if context["source_ref"] else ""
        lines.append(f"  · sighting{ref} context={to_json(context['quote'])}")
    return "\n".join(lines)


def _promotion_section(candidate_ids: Sequence[UUID], mentions: Sequence[OpenMention], handles: Handles) -> str:
    by_id = {mention.id: mention for mention in mentions}
    lines = [
        "These open mentions have been seen at least 3 times within the last 30 days. Promote each one "
        "(promotions, mention = its handle) if its sightings (listed with the open mentions above) justify "
        "a durable page of its own; otherwise leave it open. Its sections may cite those sightings' records.",
        "",
    ]
    for mention_id in candidate_ids:
        mention = by_id.get(mention_id)
        lines.append(f"- {handles.mention(mention_id)}" + (f" alias={to_json(mention.alias)}" if mention else ""))
    return section("Mentions that crossed the promotion threshold", lines)
