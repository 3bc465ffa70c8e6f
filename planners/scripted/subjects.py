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

from domain.aliases import is_properly_cased, normalize_alias
from domain.context import MemoryRecord, PlannerContext
from domain.merge_questions import MergeSide
from domain.name_words import NO_NAMES, KnownNames
from domain.plan import PAGE_TYPES
from domain.resolution import NameSet, Verdict, compare
from planners.memory_text import clean, title_case
from planners.scripted.matching import EVIDENCE_LINES, same_subject, subject_side
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
    """Everything a list of memories says about one name, its spelling variants collapsed.

    Sightings are added in memory order (`add`) or merged (`absorb`); what the subject is compared by
    (its title, distinct spellings and aliases, places and their cities) is kept up to date as they
    are, so reading it costs the number of distinct names, not of sightings: a section is rebuilt from
    every memory it cites, thousands for a city, and its subjects are compared for each name of each.
    """

    type: str
    kind: str
    names: set[str] = field(default_factory=set)  # normalised; only ever used for membership tests
    hint_aliases: list[str] = field(default_factory=list)
    sightings: list[Sighting] = field(default_factory=list)
    # Bumped by every change (add, absorb): what is derived from the subject can be kept per version.
    version: int = field(default=0, repr=False)
    # Bumped only when what it is compared by changes (names, spellings, aliases, kind, cities, title).
    shape: int = field(default=0, repr=False)
    _spelling_counts: dict[str, int] = field(default_factory=dict, repr=False)  # first seen first
    _alias_order: dict[str, None] = field(default_factory=dict, repr=False)
    _places: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)  # where -> first place
    _cities: set[str] = field(default_factory=set, repr=False)  # normalised cities of its places

    def add(self, memory_index: int, memory: MemoryRecord, hint: Hint) -> None:
        before = self._shape_key()
        self._add(memory_index, memory, hint)
        if self._shape_key() != before:
            self.shape += 1

    def _shape_key(self) -> tuple:
        return (len(self.names), len(self._spelling_counts), len(self._alias_order), self.kind, len(self._cities),
                self.title)

    def _add(self, memory_index: int, memory: MemoryRecord, hint: Hint) -> None:
        self.version += 1
        self.names |= hint.names()
        self.kind = self.kind or hint.kind
        self.hint_aliases.extend(hint.aliases)
        self._alias_order.update(dict.fromkeys(hint.aliases))
        # Sightings stay in memory order, one per memory, and memories are added in order: only the last
        # sighting can be this memory's (a scan only when called out of order).
        last = self.sightings[-1] if self.sightings else None
        if last is None or last.memory_index < memory_index:
            seen = None
        elif last.memory_index == memory_index:
            seen = last
        else:
            seen = next((s for s in self.sightings if s.memory_index == memory_index), None)
        if seen is not None:
            seen.take_roles(hint)
            self._note_roles(seen)
            return
        sighting = Sighting(memory_index, memory, hint.name, hint.is_place, hint.is_city, hint.is_journal)
        self.sightings.append(sighting)
        self._spelling_counts[sighting.spelling] = self._spelling_counts.get(sighting.spelling, 0) + 1
        self._note_roles(sighting)

    def absorb(self, other: Subject) -> None:
        self.version += 1
        self.shape += 1
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
        # Merging reorders the sightings: read again what is kept of them.
        self._spelling_counts, self._places, self._cities = {}, {}, set()
        self._alias_order = dict.fromkeys(self.hint_aliases)
        for sighting in self.sightings:
            self._spelling_counts[sighting.spelling] = self._spelling_counts.get(sighting.spelling, 0) + 1
            self._note_roles(sighting)

    def _note_roles(self, sighting: Sighting) -> None:
        if sighting.is_place or sighting.is_city:
            place = place_of(sighting.memory)
            self._places.setdefault(str(place.get("address") or place.get("city") or ""), place)
        if sighting.is_place:
            self._cities.add(normalize_alias(str(place_of(sighting.memory).get("city") or "")))

    @property
    def spellings(self) -> list[str]:
        return [s.spelling for s in self.sightings]

    @property
    def distinct_spellings(self) -> list[str]:
        """Its spellings, each once, first seen first."""
        return list(self._spelling_counts)

    @property
    def distinct_hint_aliases(self) -> list[str]:
        """The aliases its hints gave, each once, first given first."""
        return list(self._alias_order)

    @property
    def title(self) -> str:
        """The best-attested spelling: the most frequent properly cased one (`best_attested` over the
        spellings, counted as they come)."""
        counts = self._spelling_counts
        proper = [spelling for spelling in counts if is_properly_cased(spelling)]
        candidates = proper or list(counts)
        # max() keeps the first of equals, as best_attested's Counter does.
        return max(candidates, key=counts.__getitem__) if candidates else ""

    @property
    def place_cities(self) -> set[str]:
        """The normalised cities of the memories that name it as their place."""
        return self._cities

    @property
    def places(self) -> list[dict[str, Any]]:
        """One place record per distinct address (or city) of the memories naming it as a place or city."""
        return list(self._places.values())

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
        for raw in [*self.distinct_spellings, *self.distinct_hint_aliases]:
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
    """The subject as the resolution ladder compares it (its names each once: the side lists them so)."""
    return subject_side(subject.title, subject.type, [*subject.distinct_spellings, *subject.distinct_hint_aliases], summary,
                        [s.memory.content for s in subject.sightings[:EVIDENCE_LINES]], subject.places)


def _elsewhere(cities: set[str], city: str) -> bool:
    """A place in `city` (normalised; "" for a name that is not the memory's place) is another place than
    a subject whose places are in `cities`: one name, two places ("Piari Coffee" in Raleigh and in Tucson)."""
    return bool(city) and bool(cities - {""}) and city not in cities


def known_names(ctx: PlannerContext) -> KnownNames:
    """The names the scope already holds, read as names wherever a memory puts them: its candidate pages'
    titles and aliases and its open mentions."""
    return KnownNames.of([*(name for page in ctx.candidate_pages for name in (page.title, *page.aliases)),
                          *(mention.alias for mention in ctx.open_mentions)])


NamesKey = tuple[str, str, tuple[str, ...], str | None]


def _names_key(side: MergeSide) -> NamesKey:
    """What `side.names()` is made of: two sides with equal keys compare alike on the ladder."""
    return (side.type, side.title, tuple(side.aliases), side.summary)


class _Probe:
    """One name of one memory, as collect_subjects compares it with the subjects so far. Its side (with
    the memory's evidence) is made only when a comparison needs more than the names."""

    def __init__(self, index: int, memory: MemoryRecord, hint: Hint) -> None:
        self._index, self._memory, self._hint = index, memory, hint
        self.names = hint.names()
        # As side_of would give for a subject of this one sighting: its title is the hint's name.
        aliases = tuple(dict.fromkeys(s for s in (hint.name, *hint.aliases) if s != hint.name))
        self.key: NamesKey = (hint.type, hint.name, aliases, hint.kind)
        self.city = normalize_alias(str(place_of(memory).get("city") or "")) if hint.is_place else ""
        self._side: tuple[MergeSide, NameSet] | None = None

    def side(self) -> tuple[MergeSide, NameSet]:
        if self._side is None:
            subject = Subject(type=self._hint.type, kind=self._hint.kind)
            subject.add(self._index, self._memory, self._hint)
            side = side_of(subject, self._hint.kind)
            self._side = (side, side.names())
        return self._side


class _Comparisons:
    """The ladder's comparisons of a memory's name with the subjects so far. A subject's side is made
    once per version, and the verdict on two name sets once per pair of them: the same names recur in
    memory after memory. `judged` turns true when a comparison needed the memories' evidence."""

    def __init__(self) -> None:
        self._sides: dict[int, tuple[int, MergeSide, NameSet, NamesKey]] = {}
        self._verdicts: dict[tuple[NamesKey, NamesKey], Verdict] = {}
        self.judged = False

    def same(self, probe: _Probe, subject: Subject) -> bool:
        """`same_subject(probe's side, side_of(subject, subject.kind))`."""
        kept = self._sides.get(id(subject))
        if kept is None or kept[0] != subject.version:
            side = side_of(subject, subject.kind)
            kept = (subject.version, side, side.names(), _names_key(side))
            self._sides[id(subject)] = kept
        pair = (probe.key, kept[3])
        verdict = self._verdicts.get(pair)
        if verdict is None:
            verdict = self._verdicts[pair] = compare(probe.side()[1], kept[2])
        if verdict.confident:
            return True
        if not verdict.ambiguous:
            return False
        # An ambiguous pair is judged on the memories' evidence, which differs from memory to memory.
        self.judged = True
        seen, seen_names = probe.side()
        return same_subject(seen, kept[1], (seen_names, kept[2]))


class _Matches:
    """The subjects each name matches, kept per name (its key, normalised names and place's city) and
    brought up to date by comparing it again only with the subjects whose shape changed since (each
    page type logs its subjects as they are created, absorbed or change what they are compared by):
    most memories only add sightings to subjects whose names, spellings and cities they already hold.
    A name whose comparison needed the memories' evidence (an ambiguous pair) is never kept."""

    def __init__(self, comparisons: _Comparisons, of_type: dict[str, list[Subject]]) -> None:
        self._comparisons = comparisons
        self._of_type = of_type
        self._log: dict[str, list[Subject]] = {}  # page type -> subjects changed, in order
        self._order: dict[int, int] = {}  # id(subject) -> its creation number (`of_type` keeps that order)
        self._kept: dict[tuple, tuple[_Probe, int, dict[int, Subject]]] = {}  # name -> (probe, log read, matched)

    def created(self, subject: Subject) -> None:
        self._order[id(subject)] = len(self._order)
        self.changed(subject)

    def changed(self, subject: Subject) -> None:
        self._log.setdefault(subject.type, []).append(subject)

    def _matches(self, probe: _Probe, subject: Subject) -> bool:
        return not _elsewhere(subject.place_cities, probe.city) and bool(
            subject.names & probe.names or self._comparisons.same(probe, subject))

    def matching(self, probe: _Probe) -> list[Subject]:
        page_type = probe.key[0]
        log = self._log.get(page_type, [])
        name = (probe.key, frozenset(probe.names), probe.city)
        kept = self._kept.get(name)
        self._comparisons.judged = False
        if kept is None:
            matched = {id(s): s for s in self._of_type.get(page_type, ()) if self._matches(probe, s)}
        else:
            first, read, matched = kept
            alive = self._of_type.get(page_type, [])
            alive_ids = {id(s) for s in alive} if read < len(log) else set()
            for subject in {id(s): s for s in log[read:]}.values():
                if id(subject) in alive_ids and self._matches(first, subject):
                    matched[id(subject)] = subject
                else:
                    matched.pop(id(subject), None)
        if self._comparisons.judged:
            self._kept.pop(name, None)
            # Judged on this memory's evidence: compared afresh, in order, and not kept.
            return [s for s in self._of_type.get(page_type, ()) if self._matches(probe, s)]
        self._kept[name] = (kept[0] if kept else probe, len(log), matched)
        return sorted(matched.values(), key=lambda s: self._order[id(s)])


def collect_subjects(memories: list[MemoryRecord], known: KnownNames = NO_NAMES) -> list[Subject]:
    """Group the memories' names into subjects of one page type (Austin the city, Austin the friend):
    one normalises like the other, or the resolution ladder says they name one thing ("Biscuit the dog"),
    unless their place records are in two cities. `known` are the names the scope already holds, read
    as names wherever they stand; the memories' turns are read together (who speaks in each conversation)."""
    subjects: list[Subject] = []
    of_type: dict[str, list[Subject]] = {}  # the same subjects by type, in the same order
    comparisons = _Comparisons()  # keyed by id(): a subject stays alive in `subjects` or `absorbed`
    matches = _Matches(comparisons, of_type)
    absorbed: list[Subject] = []
    turns = TurnReading(memories, known)
    for index, memory in enumerate(memories):
        for hint in hints_of(memory, turns, known):
            probe = _Probe(index, memory, hint)
            matching = matches.matching(probe)
            if matching:
                subject = matching[0]
                for other in matching[1:]:
                    subject.absorb(other)
                    subjects.remove(other)
                    of_type[other.type].remove(other)
                    absorbed.append(other)
                    matches.changed(other)
                if len(matching) > 1:
                    matches.changed(subject)
            else:
                subject = Subject(type=hint.type, kind=hint.kind)
                subjects.append(subject)
                of_type.setdefault(subject.type, []).append(subject)
                matches.created(subject)
            shape = subject.shape
            subject.add(index, memory, hint)
            if subject.shape != shape:
                matches.changed(subject)
    return sorted(subjects, key=lambda s: s.order)
