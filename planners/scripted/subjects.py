"""What the scripted planner and writer read in memories: the names their metadata hints at, grouped.

Each memory's metadata may name entities (with their type, kind and aliases), a place with its city,
and a journal; a memory whose metadata names no entities has them read from its text instead
(planners/text_entities.py). A subject is one name across memories, its spelling variants collapsed:
two names are one subject when any spelling or alias of one normalises like a spelling or alias of
the other.
Subjects are visited in memory order, then name order; nothing iterates a set.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from domain.aliases import best_attested, normalize_alias
from domain.context import MemoryRecord, PlannerContext
from domain.merge_questions import MergeSide
from domain.name_words import NO_NAMES, KnownNames
from domain.plan import PAGE_TYPES
from planners.memory_text import clean, title_case
from planners.scripted.matching import same_subject, subject_side
from planners.scripted.turns import TurnReading
from planners.text_entities import extract_entities, names_entities

PERSON_KINDS = ("person", "pet")


@dataclass(frozen=True)
class Hint:
    """One name as one memory's metadata gives it."""

    name: str
    type: str
    kind: str
    aliases: tuple[str, ...] = ()
    is_place: bool = False
    is_city: bool = False
    is_journal: bool = False

    def names(self) -> set[str]:
        return {key for key in (normalize_alias(raw) for raw in (self.name, *self.aliases)) if key}


@dataclass
class Sighting:
    """A subject seen in one memory (a memory that names it twice is still one sighting)."""

    memory_index: int
    memory: MemoryRecord
    spelling: str
    is_place: bool
    is_city: bool
    is_journal: bool

    @property
    def memory_id(self) -> str:
        return str(self.memory.id)

    def take_roles(self, other: Hint | Sighting) -> None:
        self.is_place = self.is_place or other.is_place
        self.is_city = self.is_city or other.is_city
        self.is_journal = self.is_journal or other.is_journal


@dataclass(eq=False)  # identity, not field equality: merging removes one exact subject from the list
class Subject:
    """Everything a list of memories says about one name, its spelling variants collapsed."""

    type: str
    kind: str
    names: set[str] = field(default_factory=set)  # normalised; only ever used for membership tests
    hint_aliases: list[str] = field(default_factory=list)
    sightings: list[Sighting] = field(default_factory=list)

    def add(self, memory_index: int, memory: MemoryRecord, hint: Hint) -> None:
        self.names |= hint.names()
        self.kind = self.kind or hint.kind
        self.hint_aliases.extend(hint.aliases)
        seen = next((s for s in self.sightings if s.memory_index == memory_index), None)
        if seen is not None:
            seen.take_roles(hint)
            return
        self.sightings.append(
            Sighting(memory_index, memory, hint.name, hint.is_place, hint.is_city, hint.is_journal)
        )

    def absorb(self, other: Subject) -> None:
        self.names |= other.names
        self.kind = self.kind or other.kind
        self.hint_aliases.extend(other.hint_aliases)
        mine = {s.memory_index: s for s in self.sightings}
        for sighting in other.sightings:
            if sighting.memory_index in mine:
                mine[sighting.memory_index].take_roles(sighting)
            else:
                self.sightings.append(sighting)
        self.sightings.sort(key=lambda s: s.memory_index)

    @property
    def spellings(self) -> list[str]:
        return [s.spelling for s in self.sightings]

    @property
    def title(self) -> str:
        """The best-attested spelling: the most frequent properly cased one."""
        return best_attested(self.spellings)

    @property
    def order(self) -> tuple[int, str]:
        return (self.sightings[0].memory_index, normalize_alias(self.title))

    @property
    def memory_ids(self) -> list[str]:
        return [s.memory_id for s in self.sightings]

    @property
    def is_person(self) -> bool:
        return self.kind in PERSON_KINDS

    @property
    def is_context(self) -> bool:
        """A city or journal subject: the setting of its memories rather than one of their things."""
        return all(s.is_city or s.is_journal for s in self.sightings)

    def place_metadata(self) -> dict[str, Any] | None:
        for sighting in self.sightings:
            if sighting.is_place:
                return place_of(sighting.memory)
        return None

    def variant_spellings(self, known: set[str]) -> list[str]:
        """Spellings and hint aliases, as written, whose normalised form is not in `known`."""
        variants: dict[str, str] = {}
        for raw in [*self.spellings, *self.hint_aliases]:
            key = normalize_alias(raw)
            if key and key not in known and key not in variants:
                variants[key] = raw
        return list(variants.values())


def place_of(memory: MemoryRecord) -> dict[str, Any]:
    place = (memory.metadata or {}).get("place")
    return place if isinstance(place, dict) else {}


def entities_of(memory: MemoryRecord, turns: TurnReading | None = None, known: KnownNames = NO_NAMES) -> list[Any]:
    """The entities a memory names: its metadata's list; else, for a turn of a conversation, its speaker
    and what it names (planners/scripted/turns.py); else those its text names (planners/text_entities.py)."""
    metadata = memory.metadata or {}
    if names_entities(metadata):
        return list(metadata["entities"])
    reading = turns or TurnReading([memory], known)
    spoken = reading.entities(memory)
    return spoken if spoken is not None else extract_entities(memory.content, known)


def _entity_hints(memory: MemoryRecord, place_key: str, turns: TurnReading | None = None,
                  known: KnownNames = NO_NAMES) -> list[Hint]:
    entities = entities_of(memory, turns, known)
    hints: list[Hint] = []
    for raw in entities if isinstance(entities, list) else []:
        if not isinstance(raw, dict):
            continue
        name = clean(raw.get("name"))
        if not normalize_alias(name):
            continue
        written_type = raw.get("type")
        page_type = str(written_type) if written_type in PAGE_TYPES else "entity"
        kind = clean(raw.get("kind")).lower()
        written_aliases = raw.get("aliases")
        raw_aliases = written_aliases if isinstance(written_aliases, list) else []
        aliases = tuple(alias for alias in (clean(x) for x in raw_aliases) if alias)
        hint = Hint(name=name, type=page_type, kind=kind, aliases=aliases)
        # The entity the memory's place names is the place: it gets visits and the city link.
        hints.append(replace(hint, is_place=bool(place_key) and place_key in hint.names()))
    return hints


def journal_title(metadata: dict[str, Any]) -> str:
    journal = metadata.get("journal")
    if not isinstance(journal, dict):
        return ""
    title = clean(journal.get("title"))
    if title:
        return title
    # The parent expander's fallback title, so both name the same trip topic.
    journal_id = clean(journal.get("id"))
    return f"Journal {journal_id[:8]}" if journal_id else ""


def hints_of(memory: MemoryRecord, turns: TurnReading | None = None, known: KnownNames = NO_NAMES) -> list[Hint]:
    """The names one memory's metadata offers: its entities, its place's city and its journal."""
    metadata = memory.metadata or {}
    place = place_of(memory)
    hints = _entity_hints(memory, normalize_alias(clean(place.get("name"))), turns, known)
    city = title_case(clean(place.get("city")))
    if normalize_alias(city):
        hints.append(Hint(name=city, type="topic", kind="city", is_city=True))
    journal = journal_title(metadata)
    if normalize_alias(journal):
        hints.append(Hint(name=journal, type="topic", kind="trip", is_journal=True))
    return hints


def side_of(subject: Subject, summary: str) -> MergeSide:
    """The subject as the resolution ladder compares it."""
    return subject_side(subject.title, subject.type, [*subject.spellings, *subject.hint_aliases], summary,
                        [s.memory.content for s in subject.sightings],
                        [place_of(s.memory) for s in subject.sightings if s.is_place or s.is_city])


def _elsewhere(subject: Subject, hint: Hint, memory: MemoryRecord) -> bool:
    """A place seen in another city than the subject's places: one name, two places ("Piari Coffee" in
    Raleigh and in Tucson)."""
    city = normalize_alias(str(place_of(memory).get("city") or "")) if hint.is_place else ""
    cities = {normalize_alias(str(place_of(s.memory).get("city") or "")) for s in subject.sightings if s.is_place}
    return bool(city) and bool(cities - {""}) and city not in cities


def known_names(ctx: PlannerContext) -> KnownNames:
    """The names the scope already holds, read as names wherever a memory puts them: its candidate pages'
    titles and aliases and its open mentions."""
    return KnownNames.of([*(name for page in ctx.candidate_pages for name in (page.title, *page.aliases)),
                          *(mention.alias for mention in ctx.open_mentions)])


def collect_subjects(memories: list[MemoryRecord], known: KnownNames = NO_NAMES) -> list[Subject]:
    """Group the memories' names into subjects of one page type (Austin the city, Austin the friend):
    one normalises like the other, or the resolution ladder says they name one thing ("Biscuit the dog"),
    unless their place records are in two cities. `known` are the names the scope already holds, read
    as names wherever they stand; the memories' turns are read together (who speaks in each conversation)."""
    subjects: list[Subject] = []
    turns = TurnReading(memories, known)
    for index, memory in enumerate(memories):
        for hint in hints_of(memory, turns, known):
            names, probe = hint.names(), Subject(type=hint.type, kind=hint.kind)
            probe.add(index, memory, hint)
            seen = side_of(probe, hint.kind)
            matching = [s for s in subjects if s.type == hint.type and not _elsewhere(s, hint, memory)
                        and (s.names & names or same_subject(seen, side_of(s, s.kind)))]
            if matching:
                subject = matching[0]
                for other in matching[1:]:
                    subject.absorb(other)
                    subjects.remove(other)
            else:
                subject = Subject(type=hint.type, kind=hint.kind)
                subjects.append(subject)
            subject.add(index, memory, hint)
    return sorted(subjects, key=lambda s: s.order)
