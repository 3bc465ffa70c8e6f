"""Section bodies that read as knowledge: what a section's memories say, condensed.

The scripted planner writes a new section from the memories of its batch, and the scripted writer
rewrites a section from every memory it cites (those cited before and the new ones), both with these
functions. A body is therefore a function of the set of memories the section cites: the same
memories give the same body, whatever the batches they came in, and nothing is appended twice.

A log section (notes, highlights, a decision's context and consequences, a person's theme
sections) becomes, in this order:
- how many memories, and the span of days they cover;
- what recurs: the names mentioned in at least two of them, most mentioned first ("Most mentioned"
  on a topic, "Often together with" elsewhere);
- what is known now of the page's subject, whatever its date (planners/scripted/known_now.py);
- the memories' own lines that together say the most of them within the section's room
  (planners/scripted/extractive.py), lines several memories say alike merged into one that counts
  them (never a line stating a value of a single-valued attribute: each saying of it stays a dated
  line, domain/facts.py), the newest first, each dated by the day its memory happened;
  `lines_that_stay` is where the lines a section always keeps are chosen: what is known now, every
  value an attribute took (where someone lives, whom they work for, and the values those replaced,
  history for reads as of a date), and the newest lines.
A visits section becomes the number of visits with their span, visits by month and the latest
days; a rationale, the reasons given, counted and dated like a log.

Every line comes from the cited memories, so the section's citations are exactly its evidence.
Names are written in their best-attested form and in bold, so the apply step links each to its page
(by title or alias). Determinism: memories are taken in (created_at, id) order, ties are broken by
text, and nothing iterates a set.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from domain.aliases import normalize_alias, trigram_similarity
from domain.content_words import content_words
from domain.context import MemoryRecord
from domain.facts import fact_of
from domain.line_formats import (
    MOST_MENTIONED_LABEL,
    OFTEN_TOGETHER_LABEL,
    by_month_line,
    dated_line,
    latest_line,
    led,
    mentions_line,
    recurring_line,
    span_line,
    visits_line,
)
from domain.name_words import KnownNames
from planners.memory_text import as_utc, memory_date, sentence, sentences, truncate
from planners.scripted.extractive import Line, choose, merged_lines
from planners.scripted.known_now import known_now
from planners.scripted.subjects import Subject, collect_subjects
from planners.scripted.themes import THEME_SLUGS
from planners.section_edits import SECTION_BUDGET_CHARS
from planners.telling import telling_quote

# The newest lines a condensed section keeps first, room allowing (lines_that_stay).
LATEST_OBSERVATIONS = 3
# Lines stating (or ending) a value of an attribute a section keeps whatever else it chooses.
STANDING_FACTS = 20
MOST_MENTIONED = 5
# The share of the section bound the chosen lines may fill: the rest is headroom for a writer's edit.
LINES_SHARE = 0.9
# A condensed section says its memories in at most this share of their characters, and may always
# take FLOOR_CHARS (a few lines): a wiki is a digest of its memories, not a copy. A theme section of a
# person's page has a lower floor (a line or two): the page's notes have the full one, and a dozen
# themes each with it would make the page a copy of its memories again.
CONDENSED_SHARE = 0.3
FLOOR_CHARS = 480
THEME_FLOOR_CHARS = 240
LATEST_VISIT_DAYS = 3
SETTING_KINDS = ("city", "trip")
# A name this close to the page's own title is the page itself under another spelling.
OWN_NAME_SIMILARITY = 0.85

# Section slugs whose body the scripted writer rebuilds from the cited memories, by page type.
LOG_SECTIONS = {"entity": ("notes",), "topic": ("highlights",), "decision": ("context", "consequences")}
VISITS_SECTION = "visits"
RATIONALE_SECTION = "rationale"

_REASON_MARKER = re.compile(r"\b(because|since|so that|in order to|to avoid)\b", re.IGNORECASE)
_BOLD = re.compile(r"\*\*([^*]+)\*\*")
# What a link adds to a bold name besides its slug: brackets, parentheses and "/wiki/<type>/".
LINK_DRESSING = len("[]()/wiki/entity/")


def reason_clause(content: str) -> str:
    """The first stated reason, from its marker on ("… because parking is impossible." → "Because
    parking is impossible."), so the rationale does not repeat the context's sentence."""
    for part in sentences(content):
        marker = _REASON_MARKER.search(part)
        if marker:
            clause = part[marker.start() :]
            return sentence(truncate(clause[:1].upper() + clause[1:]))
    return ""


def condensed_body(page_type: str, slug: str, title: str, memories: Sequence[MemoryRecord]) -> str | None:
    """The body of section `slug` of a `page_type` page titled `title`, from the memories it cites;
    None for a section these rules do not write (a summary, a rollup list)."""
    if slug == VISITS_SECTION and page_type == "entity":
        return visits_body(memories)
    if slug == RATIONALE_SECTION and page_type == "decision":
        return log_body(memories, title, line_of=lambda memory: reason_clause(memory.content), names=False)
    if page_type == "entity" and slug in THEME_SLUGS:
        return log_body(memories, title, names=False, floor=THEME_FLOOR_CHARS)
    if slug in LOG_SECTIONS.get(page_type, ()):
        return log_body(memories, title, leads=page_type == "topic")
    return None


# --------------------------------------------------------------------------- observations


@dataclass(frozen=True)
class _Observation:
    memory_id: str
    at: datetime
    day: str
    text: str  # the line, with its lead; "" when the memory gives no line


def linked_size(line: str) -> int:
    """The length of a line once the apply step links its bold names to their pages
    ("**Lena**" -> "[**Lena**](/wiki/entity/lena)"): what it takes of the section bound."""
    return len(line) + sum(len(name) + LINK_DRESSING for name in _BOLD.findall(line))


def _in_order(memories: Sequence[MemoryRecord]) -> list[MemoryRecord]:
    distinct = {str(memory.id): memory for memory in memories}
    return sorted(distinct.values(), key=lambda memory: (as_utc(memory.created_at), str(memory.id)))


def _is_own(subject: Subject, title: str) -> bool:
    """Whether the subject is the page itself (its title, a variant of it, or a name whose aliases
    include it)."""
    own = normalize_alias(title)
    if not own:
        return False
    return own in subject.names or any(trigram_similarity(name, own) >= OWN_NAME_SIMILARITY
                                       for name in sorted(subject.names))


# --------------------------------------------------------------------------- log sections


def log_body(memories: Sequence[MemoryRecord], title: str, *, leads: bool = False, names: bool = True,
             line_of: Callable[[MemoryRecord], str] | None = None, floor: int = FLOOR_CHARS) -> str:
    ordered = _in_order(memories)
    if not ordered:
        return ""
    subjects = collect_subjects(ordered, KnownNames.of([title]))
    lead_of = _place_leads(subjects, title) if leads else {}
    line = line_of or (lambda memory: telling_quote(memory.content))
    observations = []
    for memory in ordered:
        text = line(memory)
        lead = lead_of.get(str(memory.id), "")
        observations.append(_Observation(memory_id=str(memory.id), at=as_utc(memory.created_at),
                                         day=memory_date(memory), text=led(lead, text) if text and lead else text))
    lines = []
    if len(ordered) > 1:
        lines.append(span_line(len(ordered), observations[0].day, observations[-1].day))
    if names:
        lines += _mention_lines(subjects, title, topic=leads)
    header = sum(linked_size(line) + 1 for line in lines)
    lines += _said_lines(ordered, observations, _room(ordered, floor) - header, title,
                         bound=int(SECTION_BUDGET_CHARS * LINES_SHARE) - header)
    return "\n".join(lines)


def _place_leads(subjects: list[Subject], title: str) -> dict[str, str]:
    """memory id -> the place it is about, for memories whose place is not the page itself (a city or
    trip page's lines lead with it)."""
    leads: dict[str, str] = {}
    for subject in subjects:
        if _is_own(subject, title):
            continue
        for sighting in subject.sightings:
            if sighting.is_place:
                leads.setdefault(sighting.memory_id, subject.title)
    return leads


def _mention_lines(subjects: list[Subject], title: str, *, topic: bool) -> list[str]:
    # On a city or trip page, cities and trips are the setting of the memories (the trip's city), not
    # something that recurs in them.
    counted = [(len(subject.sightings), subject.title) for subject in subjects
               if len(subject.sightings) > 1 and not subject.is_context and not _is_own(subject, title)
               and not (topic and subject.kind in SETTING_KINDS)]
    ranked = sorted(counted, key=lambda pair: (-pair[0], pair[1].casefold(), pair[1]))[:MOST_MENTIONED]
    if not ranked:
        return []
    return [mentions_line(MOST_MENTIONED_LABEL if topic else OFTEN_TOGETHER_LABEL, [(name, count) for count, name in ranked])]


def _room(memories: Sequence[MemoryRecord], floor: int) -> int:
    """The characters a log section's body may take: CONDENSED_SHARE of what its memories say (at
    least `floor`), within LINES_SHARE of the section bound."""
    said = sum(len(memory.content) for memory in memories)
    return int(min(SECTION_BUDGET_CHARS * LINES_SHARE, max(floor, CONDENSED_SHARE * said)))


def lines_that_stay(observations: Sequence[_Observation], title: str) -> tuple[list[str], list[str]]:
    """The memories (by id) whose lines a condensed section keeps whatever else it chooses: those that
    say what is known now of its subject (planners/scripted/known_now.py: where they live, what they
    do, the people and animals in their life), which open the section, with every value an attribute
    took (domain/facts.py: the values replaced stay too, for reads as of a date); and the newest
    LATEST_OBSERVATIONS, taken first while they fit, so a section shows its latest news. The one
    place to add a kind of line that must stay."""
    opening = [observations[position].memory_id for position in known_now([o.text for o in observations], title)]
    newest = sorted((o for o in observations if o.text), key=lambda o: (o.at, o.memory_id), reverse=True)
    standing = [o.memory_id for o in newest if fact_of(o.text) is not None][:STANDING_FACTS]
    return list(dict.fromkeys([*opening, *standing])), [o.memory_id for o in newest[:LATEST_OBSERVATIONS]]


def _said_lines(memories: Sequence[MemoryRecord], observations: Sequence[_Observation], room: int,
                title: str, *, bound: int) -> list[str]:
    """What is known now, then the lines that together say the most of the memories within `room`
    characters (planners/scripted/extractive.py), lines that say the same thing merged into one that
    counts them, newest first. The words of the page's own title are not what a memory says of it:
    every line of the page would hold them. `bound`: the characters the lines may never pass."""
    # Each saying of an attribute's value is a dated line of its own: a mark names it, and a value
    # said again after another replaced it is an assertion of its own.
    candidates = merged_lines([o.text for o in observations], apart=lambda text: fact_of(text) is not None)
    if not candidates:
        return []
    rendered = [_rendered(line, observations) for line in candidates]
    opening_ids, newest_ids = lines_that_stay(observations, title)

    def holding(memory_id: str) -> int | None:
        return next((index for index, line in enumerate(candidates)
                     if any(observations[m].memory_id == memory_id for m in line.members)), None)

    opening: list[int] = []
    for index in dict.fromkeys(i for i in map(holding, opening_ids) if i is not None):
        # what is known now stays whatever the room, never past the section's bound
        if sum(linked_size(rendered[i]) + 1 for i in [*opening, index]) <= bound:
            opening.append(index)
    newest = [i for i in dict.fromkeys(map(holding, newest_ids)) if i is not None and i not in opening]
    own = content_words(title)
    said = [(words - own) or words for words in (content_words(memory.content) for memory in memories)]
    chosen = choose(candidates, said, room, must_stay=opening, first=newest,
                    cost_of=[linked_size(text) + 1 for text in rendered])
    rest = sorted((index for index in chosen if index not in opening),
                  key=lambda index: (observations[candidates[index].members[-1]].at, candidates[index].members[-1]),
                  reverse=True)
    return [rendered[index] for index in [*opening, *rest]]


def _rendered(line: Line, observations: Sequence[_Observation]) -> str:
    first, last = observations[line.members[0]], observations[line.members[-1]]
    if len(line.members) > 1:
        return recurring_line(line.text, len(line.members), first.day, last.day)
    return dated_line(last.day, line.text)


# --------------------------------------------------------------------------- visits


def visits_body(memories: Sequence[MemoryRecord]) -> str:
    ordered = _in_order(memories)
    if not ordered:
        return ""
    days = [memory_date(memory) for memory in ordered]
    lines = [visits_line(len(days), days[0], days[-1])]
    if len(days) == 1:
        return lines[0]
    months = Counter(day[:7] for day in days)
    if len(months) > 1:
        lines.append(by_month_line(sorted(months.items())))
    per_day = Counter(days)
    latest = sorted(per_day, reverse=True)[:LATEST_VISIT_DAYS]
    lines.append(latest_line((day, per_day[day]) for day in latest))
    return "\n".join(lines)
