"""A deterministic sample corpus: nine months of one agent's memories about its user, Eric.

The corpus exists to exercise the whole compiler offline (demo, tests, benchmarks): it is built only
from `random.Random(seed)`, so the same (memories, seed) always gives byte-identical JSONL.

What it contains, and why:
- Eric lives in Austin, so most memories are Austin restaurants, cafés and parks; a few favourites
  recur all year and the rest come in short bursts (two to four visits close together), which is how
  the leaf compile sees a name twice in one batch and makes a page of it.
- Trips (Toronto, Mexico City, Paris, San Francisco, Lisbon, London, Tokyo) are journals: every
  memory of a trip carries the journal, and places there have real address formats for the city rule.
- Recurring names are written differently from time to time (case, accents, small typos, nicknames,
  "Paris, France" for "Paris"), so alias matching and fuzzy de-duplication have work to do.
- Decisions are mentioned one to three times; a handful of names appear exactly three or four times,
  each in a different batch, so they start as unresolved mentions and get promoted; passing names
  (a server, a shop) appear exactly once.

The catalogue (who and what, and the sentences memories are written in) is data in
sample/catalogue.yaml, read by sample/catalogue.py; this module composes the memories from it.
"""

from __future__ import annotations

import json
import random
import string
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from os import PathLike
from typing import Any, TextIO

from sample.catalogue import (
    ALIAS_BEARING_HOWS,  # noqa: F401 - re-exported: how a reader tells aliases from typos
    ATLAS,
    AUSTIN,
    AUSTIN_FAVOURITES,
    AUSTIN_ROTATION,
    CAFE_NOTES,
    CAFE_TEMPLATES,
    CHECK_IN_TEMPLATES,
    CHECK_OUT_TEMPLATES,
    DECISIONS,
    DINING_COMPANIONS,
    DOG_PARK_TEMPLATES,
    ERRANDS,
    HOME_HOTEL_TEMPLATES,
    HOTEL_MID_TEMPLATES,
    LODGING_FEEDBACK,
    LODGING_NOTES,
    MISC_LINES,
    ONE_OFF_PERSON_TEMPLATES,
    ONE_OFF_ROLES,
    ONE_OFF_SHOP_TEMPLATES,
    PARK_NOTES,
    PARK_TEMPLATES,
    PEOPLE,
    PEOPLE_TEMPLATES,
    PET_NOTES,
    RARE_NAMES,
    REACTIONS,
    RESTAURANT_TEMPLATES,
    TRIP_CITY_TEMPLATES,
    TRIPS,
    VERDICTS,
    WEATHER,
    WEEKDAYS,
    WORK_ACTIVITIES,
    WORK_NOTES,
    WORK_NOTES_SHORT,
    WORK_TEMPLATES,
    WORK_THINGS,
    WORK_TRIP_TEMPLATES,
    EntitySpec,
    Place,
    Storyline,
    Trip,
)
from sample.schedule import (
    bursts,
    memory_timeline,
    one_off_names,
    schedule_decisions,
    schedule_rare_names,
)

ONE_OFF_SHARE = 0.035
UNTAGGED_SHARE = 0.07
# At home: the share of memories that are visits, and what the other memories are about.
HOME_VISIT_SHARE = 0.56
HOME_NOTE_WEIGHTS = {"people": 0.5, "work": 0.32, "misc": 0.18}
# The share of home visits that go to the all-year favourites rather than the places in rotation.
CORE_PLACE_SHARE = 0.5

# --------------------------------------------------------------------------- what the catalogue adds up to

ALL_PLACES: tuple[Place, ...] = (
    *(place for place, _ in AUSTIN_FAVOURITES),
    *AUSTIN_ROTATION,
    *(place for trip in TRIPS for place in (trip.hotel, *trip.places)),
)
CITIES: tuple[EntitySpec, ...] = (AUSTIN, *(trip.city for trip in TRIPS))
# Every name that recurs on purpose; anything else a memory names is a passing name, used once.
RECURRING_ENTITIES: tuple[EntitySpec, ...] = (
    *ALL_PLACES,
    *CITIES,
    *PEOPLE.values(),
    ATLAS,
    *(storyline.entity for storyline in (*DECISIONS, *RARE_NAMES)),
)
# (canonical name, written variant, how it differs) for every variant the corpus may write.
NAME_VARIANTS: tuple[tuple[str, str, str], ...] = tuple(
    (spec.name, variant, how) for spec in RECURRING_ENTITIES for variant, how in spec.variants
)


# --------------------------------------------------------------------------- composing memories


@dataclass
class _Draft:
    """One memory before it gets its id and time."""

    content: str = ""
    entities: list[dict[str, Any]] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    place: dict[str, Any] | None = None
    journal: Trip | None = None


@dataclass(frozen=True)
class _Clause:
    """A piece of a sentence that may name entities, e.g. " with {person}"."""

    template: str
    slots: dict[str, Any]


class _Composer:
    """Renders templates into drafts, choosing how each recurring name is written this time."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.mentions: Counter[str] = Counter()

    def render(self, draft: _Draft, template: str, slots: dict[str, Any]) -> str:
        """Fill `template`; entity slots add the entity to the draft, in the order the text names them.

        A slot written with a capital first letter ("{Pet}") capitalises its value at a sentence start.
        """
        parts: list[str] = []
        for literal, slot, _, _ in string.Formatter().parse(template):
            parts.append(literal)
            if slot is None:
                continue
            value = self._slot_text(draft, slots[slot.lower()])
            parts.append(value[:1].upper() + value[1:] if slot[:1].isupper() else value)
        return "".join(parts)

    def _slot_text(self, draft: _Draft, value: Any) -> str:
        if isinstance(value, EntitySpec):
            return self.mention(draft, value)
        if isinstance(value, _Clause):
            return self.render(draft, value.template, value.slots)
        return str(value)

    def mention(self, draft: _Draft, spec: EntitySpec) -> str:
        written, how = spec.written_form(self.mentions[spec.name])
        self.mentions[spec.name] += 1
        entity = spec.entity(written, how)
        if entity not in draft.entities:
            draft.entities.append(entity)
        draft.tags.extend(spec.tags)
        if isinstance(spec, Place) and draft.place is None:
            # The place is recorded as the memory writes it; the city is the canonical one, as a
            # geocoder would give it.
            draft.place = {
                "name": written,
                "city": spec.city.name,
                "address": spec.address,
                "types": list(spec.types),
            }
        return written

    def pick(self, options: tuple[Any, ...]) -> Any:
        return options[self.rng.randrange(len(options))]


def _optional(rng: random.Random, probability: float, clause: _Clause) -> _Clause | str:
    return clause if rng.random() < probability else ""


def _place_draft(
    composer: _Composer, place: Place, *, trip: Trip | None, companion: EntitySpec | None, city_chance: float
) -> _Draft:
    rng = composer.rng
    draft = _Draft(journal=trip)
    with_clause = _Clause(" with {person}", {"person": companion}) if companion else ""
    slots: dict[str, Any] = {
        "place": place,
        "with": with_clause,
        "in": _optional(rng, city_chance, _Clause(" in {city}", {"city": place.city})),
        "item": composer.pick(place.items),
        "reaction": composer.pick(REACTIONS),
        "verdict": composer.pick(VERDICTS),
        "wait": rng.choice((15, 20, 30, 45, 90)),
        "cafe_note": composer.pick(CAFE_NOTES),
        "errand": composer.pick(ERRANDS),
        "park_note": composer.pick(PARK_NOTES),
        "pet_note": composer.pick(PET_NOTES),
        "weather": composer.pick(WEATHER),
        "lodging_note": composer.pick(LODGING_NOTES),
        "pet": PEOPLE["pet"],
        "lena": PEOPLE["lena"],
        "ruth": PEOPLE["ruth"],
    }
    draft.content = composer.render(draft, _place_template(composer, place, trip), slots)
    return draft


def _place_template(composer: _Composer, place: Place, trip: Trip | None) -> str:
    if "lodging" in place.types:
        return composer.pick(HOME_HOTEL_TEMPLATES if trip is None else HOTEL_MID_TEMPLATES)
    if "park" in place.types:
        at_home_with_dog = trip is None and composer.rng.random() < 0.5
        return composer.pick(DOG_PARK_TEMPLATES if at_home_with_dog else PARK_TEMPLATES)
    if "cafe" in place.types:
        return composer.pick(CAFE_TEMPLATES)
    return composer.pick(RESTAURANT_TEMPLATES)


def _hotel_draft(composer: _Composer, trip: Trip, templates: tuple[str, ...]) -> _Draft:
    draft = _Draft(journal=trip)
    slots = {
        "place": trip.hotel,
        "in": _Clause(" in {city}", {"city": trip.city}),
        "companion": PEOPLE[trip.companion_key],
        "lodging_note": composer.pick(LODGING_NOTES),
        "lodging_feedback": composer.pick(LODGING_FEEDBACK),
    }
    draft.content = composer.render(draft, composer.pick(templates), slots)
    return draft


def _trip_city_draft(composer: _Composer, trip: Trip) -> _Draft:
    draft = _Draft(journal=trip)
    if trip.companion_key == "priya":
        template = composer.pick(WORK_TRIP_TEMPLATES)
    else:
        template = composer.pick(TRIP_CITY_TEMPLATES)
    slots = {
        "city": trip.city,
        "in": _Clause(" in {city}", {"city": trip.city}),
        "companion": PEOPLE[trip.companion_key],
        "priya": PEOPLE["priya"],
        "atlas": ATLAS,
        "steps": f"{composer.rng.randrange(18, 31)},000",
    }
    draft.content = composer.render(draft, template, slots)
    return draft


def _people_draft(composer: _Composer) -> _Draft:
    key = composer.pick(("pet", "pet", "pet", "joao", "joao", "lena", "lena", "sam", "ruth"))
    draft = _Draft()
    slots = {
        **PEOPLE,
        "city": AUSTIN,
        "weight": composer.rng.randrange(24, 31),
        "distance": composer.rng.randrange(4, 11),
    }
    draft.content = composer.render(draft, composer.pick(PEOPLE_TEMPLATES[key]), slots)
    return draft


def _work_draft(composer: _Composer) -> _Draft:
    draft = _Draft(tags=["work"])
    slots = {
        "priya": PEOPLE["priya"],
        "atlas": ATLAS,
        "work_thing": composer.pick(WORK_THINGS),
        "work_activity": composer.pick(WORK_ACTIVITIES),
        "work_note": composer.pick(WORK_NOTES),
        "work_note_short": composer.pick(WORK_NOTES_SHORT),
        "weekday": composer.pick(WEEKDAYS),
    }
    draft.content = composer.render(draft, composer.pick(WORK_TEMPLATES), slots)
    return draft


def _misc_draft(composer: _Composer) -> _Draft:
    line, tags = composer.pick(MISC_LINES)
    return _Draft(content=line, tags=list(tags))


def _storyline_draft(composer: _Composer, storyline: Storyline, line_index: int) -> _Draft:
    draft = _Draft()
    composer.mention(draft, storyline.entity)
    draft.content = storyline.lines[line_index]
    return draft


def _one_off_person_draft(
    composer: _Composer, name: str, place: Place, trip: Trip | None, city_chance: float
) -> _Draft:
    draft = _Draft(journal=trip)
    slots = {
        "place": place,
        "in": _optional(composer.rng, city_chance, _Clause(" in {city}", {"city": place.city})),
        "role": composer.pick(ONE_OFF_ROLES),
        "one_off": name,
        "item": composer.pick(place.items),
    }
    draft.content = composer.render(draft, composer.pick(ONE_OFF_PERSON_TEMPLATES), slots)
    draft.entities.append({"name": name, "type": "entity", "kind": "person"})
    draft.tags.append("people")
    return draft


def _one_off_shop_draft(composer: _Composer, name: str, kind: str, item: str, trip: Trip | None) -> _Draft:
    draft = _Draft(journal=trip, tags=["shopping"])
    article = "an" if kind[:1] in "aeiou" else "a"
    slots = {"one_off": name, "shop_kind": f"{article} {kind}", "shop_item": item}
    draft.content = composer.render(draft, composer.pick(ONE_OFF_SHOP_TEMPLATES), slots)
    draft.entities.append({"name": name, "type": "entity", "kind": kind})
    return draft


# --------------------------------------------------------------------------- the calendar


# --------------------------------------------------------------------------- the corpus


def generate_sample(memories: int, seed: int = 7) -> list[dict[str, Any]]:
    """`memories` rows in chronological order: {"content", "metadata", "occurred_at"}.

    Deterministic for (memories, seed): only `random.Random(seed)` is used, never the clock.
    """
    if memories < 0:
        raise ValueError("memories must be >= 0")
    rng = random.Random(seed)
    composer = _Composer(rng)
    timeline = memory_timeline(rng, memories)
    drafts = _drafts(rng, composer, timeline)
    return [
        _row(seed, index, moment, draft, rng)
        for index, ((moment, _), draft) in enumerate(zip(timeline, drafts, strict=True))
    ]


def _drafts(
    rng: random.Random, composer: _Composer, timeline: list[tuple[datetime, Trip | None]]
) -> list[_Draft]:
    storylines: dict[int, tuple[Storyline, int]] = {}
    schedule_decisions(timeline, storylines)
    schedule_rare_names(rng, timeline, storylines)
    trip_bounds = _trip_bounds(timeline)
    one_off_slots = _one_off_slots(rng, len(timeline), storylines, trip_bounds)
    people, shops = one_off_names(rng)

    home_places = _home_place_plan(rng, timeline, storylines, one_off_slots)
    trip_visits = Counter(trip.journal_id for _, trip in timeline if trip is not None)
    trip_places = {
        trip.journal_id: iter(
            bursts(rng, (trip.places[0], *trip.places), trip_visits[trip.journal_id], (2, 3))
        )
        for trip in TRIPS
    }
    drafts: list[_Draft] = []
    for index, (_, trip) in enumerate(timeline):
        if index in storylines:
            storyline, line_index = storylines[index]
            drafts.append(_storyline_draft(composer, storyline, line_index))
        elif trip is not None and index == trip_bounds[trip.journal_id][0]:
            drafts.append(_hotel_draft(composer, trip, CHECK_IN_TEMPLATES))
        elif trip is not None and index == trip_bounds[trip.journal_id][1]:
            drafts.append(_hotel_draft(composer, trip, CHECK_OUT_TEMPLATES))
        elif index in one_off_slots:
            drafts.append(_one_off_draft(composer, trip, people, shops))
        elif trip is not None:
            drafts.append(_trip_draft(composer, trip, next(trip_places[trip.journal_id])))
        else:
            drafts.append(_home_draft(composer, home_places.get(index)))
    return drafts


def _trip_bounds(timeline: list[tuple[datetime, Trip | None]]) -> dict[str, tuple[int, int]]:
    bounds: dict[str, tuple[int, int]] = {}
    for index, (_, trip) in enumerate(timeline):
        if trip is not None:
            first, _ = bounds.get(trip.journal_id, (index, index))
            bounds[trip.journal_id] = (first, index)
    return bounds


def _one_off_slots(
    rng: random.Random, memories: int, taken: dict[int, Any], trip_bounds: dict[str, tuple[int, int]]
) -> set[int]:
    ends = {i for bounds in trip_bounds.values() for i in bounds}
    free = [i for i in range(memories) if i not in taken and i not in ends]
    wanted = min(len(free), round(memories * ONE_OFF_SHARE))
    return set(rng.sample(free, wanted))


def _home_place_plan(
    rng: random.Random,
    timeline: list[tuple[datetime, Trip | None]],
    taken: dict[int, Any],
    one_off_slots: set[int],
) -> dict[int, Place | None]:
    """Which home memories are place visits, and where: favourites any time, the rest in bursts.

    Home memories that are not visits map to None (people, work and other notes)."""
    home = [
        i
        for i, (_, trip) in enumerate(timeline)
        if trip is None and i not in taken and i not in one_off_slots
    ]
    visits = [i for i in home if rng.random() < HOME_VISIT_SHARE]
    favourites = [place for place, _ in AUSTIN_FAVOURITES]
    favourite_weights = [weight for _, weight in AUSTIN_FAVOURITES]
    plan: dict[int, Place | None] = dict.fromkeys(home)
    rotation_slots = []
    for index in visits:
        if rng.random() < CORE_PLACE_SHARE:
            plan[index] = rng.choices(favourites, favourite_weights)[0]
        else:
            rotation_slots.append(index)
    for index, place in zip(
        rotation_slots, bursts(rng, AUSTIN_ROTATION, len(rotation_slots), (2, 4)), strict=True
    ):
        plan[index] = place
    return plan


def _home_draft(composer: _Composer, place: Place | None) -> _Draft:
    if place is not None:
        companion = PEOPLE[composer.pick(DINING_COMPANIONS)] if composer.rng.random() < 0.3 else None
        return _place_draft(composer, place, trip=None, companion=companion, city_chance=0.1)
    kind = composer.rng.choices(list(HOME_NOTE_WEIGHTS), list(HOME_NOTE_WEIGHTS.values()))[0]
    if kind == "people":
        return _people_draft(composer)
    if kind == "work":
        return _work_draft(composer)
    return _misc_draft(composer)


def _trip_draft(composer: _Composer, trip: Trip, place: Place) -> _Draft:
    roll = composer.rng.random()
    if roll < 0.12:
        return _trip_city_draft(composer, trip)
    if roll < 0.16:
        return _place_draft(composer, trip.hotel, trip=trip, companion=None, city_chance=0.3)
    companion = PEOPLE[trip.companion_key] if composer.rng.random() < 0.25 else None
    return _place_draft(composer, place, trip=trip, companion=companion, city_chance=0.35)


def _one_off_draft(
    composer: _Composer,
    trip: Trip | None,
    people: list[str],
    shops: list[tuple[str, str, str]],
) -> _Draft:
    if composer.rng.random() < 0.5 and people:
        if trip is None:
            place = composer.pick(tuple(p for p in AUSTIN_ROTATION if "restaurant" in p.types))
        else:
            place = composer.pick(tuple(p for p in trip.places if "restaurant" in p.types))
        return _one_off_person_draft(composer, people.pop(), place, trip, 0.3 if trip else 0.0)
    name, kind, item = shops.pop()
    return _one_off_shop_draft(composer, name, kind, item, trip)


def _row(seed: int, index: int, moment: datetime, draft: _Draft, rng: random.Random) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    if draft.entities:
        metadata["entities"] = draft.entities
    if draft.place is not None:
        metadata["place"] = draft.place
    trip_tags: tuple[str, ...] = ()
    if draft.journal is not None:
        metadata["journal"] = {"id": draft.journal.journal_id, "title": draft.journal.title}
        trip_tags = draft.journal.tags
    tags = list(dict.fromkeys([*draft.tags, *trip_tags]))
    if tags and rng.random() >= UNTAGGED_SHARE:
        metadata["tags"] = tags
    # No "id": retain derives one from the scope, the content and the time, so the same sample can
    # be retained into several scopes (two tenants with identical wikis is a test we run).
    return {
        "content": draft.content,
        "metadata": metadata,
        "occurred_at": moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


# --------------------------------------------------------------------------- writing JSONL


def write_sample_jsonl(path_or_stream: str | PathLike[str] | TextIO, memories: int, seed: int = 7) -> int:
    """Write the corpus as UTF-8 JSON lines to a path or an open text stream; returns the row count."""
    rows = generate_sample(memories, seed)
    lines = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    if isinstance(path_or_stream, str | PathLike):
        with open(path_or_stream, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(lines)
    else:
        path_or_stream.write(lines)
    return len(rows)


def main_write(out: str, memories: int, seed: int = 7) -> int:
    """CLI entry: write the corpus to `out`, or to stdout when `out` is "-"."""
    return write_sample_jsonl(sys.stdout if out == "-" else out, memories, seed)
