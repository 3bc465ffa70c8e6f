"""When the sample's memories happen, and who appears where: the calendar of the nine months (denser
on trips), the timeline of memory times, bursts of visits to places, and the scheduling of decisions,
rare names and one-off names. sample/corpus.py renders the memories."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sample.catalogue import (
    DECISIONS,
    ONE_OFF_FIRST_NAMES,
    ONE_OFF_LAST_NAMES,
    ONE_OFF_SHOP_KINDS,
    ONE_OFF_SHOP_PREFIXES,
    RARE_NAMES,
    TRIPS,
    Place,
    Storyline,
    Trip,
)

FIRST_DAY = date(2026, 1, 5)
LAST_DAY = date(2026, 9, 28)
# Eric writes more on trips than at home.
TRIP_DAY_WEIGHT = 1.5
# Memories happen between 07:00 and 22:00 UTC.
DAY_START_HOUR = 7
DAY_SPAN_SECONDS = 15 * 3600
# A batch of the leaf compile holds at most 50 memories; names meant to stay unresolved until promoted
# are spaced further apart than that, so no two of their mentions ever share a batch.
BATCH_SIZE = 50
RARE_NAME_MIN_GAP = BATCH_SIZE + 3
RARE_NAME_MAX_GAP = BATCH_SIZE + 14


def writing_calendar() -> list[tuple[date, float, Trip | None]]:
    """Every day of the span with its weight (how much Eric writes) and the trip he is on, if any."""
    days = []
    day = FIRST_DAY
    while day <= LAST_DAY:
        trip = next((t for t in TRIPS if t.first_day <= day <= t.last_day), None)
        days.append((day, TRIP_DAY_WEIGHT if trip else 1.0, trip))
        day += timedelta(days=1)
    return days


def memory_timeline(rng: random.Random, memories: int) -> list[tuple[datetime, Trip | None]]:
    """Strictly increasing times over the nine months, denser on trip days, and the trip of each."""
    days = writing_calendar()
    total = sum(weight for _, weight, _ in days)
    timeline: list[tuple[datetime, Trip | None]] = []
    day_index, day_start = 0, 0.0
    for index in range(memories):
        # Jitter stays inside +-0.4 of a slot, so consecutive memories are always in order.
        position = (index + 0.5 + 0.8 * (rng.random() - 0.5)) / memories * total
        while day_start + days[day_index][1] <= position:
            day_start += days[day_index][1]
            day_index += 1
        day, weight, trip = days[day_index]
        seconds = int((position - day_start) / weight * DAY_SPAN_SECONDS)
        moment = datetime(day.year, day.month, day.day, DAY_START_HOUR, tzinfo=UTC) + timedelta(
            seconds=seconds
        )
        timeline.append((moment, trip))
    return timeline


# --------------------------------------------------------------------------- the plan of who appears where


def bursts(rng: random.Random, pool: tuple[Place, ...], slots: int, sizes: tuple[int, int]) -> list[Place]:
    """Places for `slots` consecutive visits: each place comes in a burst of a few visits close
    together, with up to three bursts interleaved, cycling through the whole pool in shuffled order."""
    order: list[Place] = []
    open_bursts: list[list[Any]] = []
    visits: list[Place] = []
    for _ in range(slots):
        while len(open_bursts) < 3:
            if not order:
                order = list(pool)
                rng.shuffle(order)
            open_bursts.append([order.pop(), rng.randint(*sizes)])
        burst = open_bursts[rng.randrange(len(open_bursts))]
        visits.append(burst[0])
        burst[1] -= 1
        if burst[1] == 0:
            open_bursts.remove(burst)
    return visits


def first_index_on_or_after(timeline: list[tuple[datetime, Trip | None]], day: date) -> int:
    return next((i for i, (moment, _) in enumerate(timeline) if moment.date() >= day), len(timeline))


def schedule_decisions(
    timeline: list[tuple[datetime, Trip | None]], reserved: dict[int, tuple[Storyline, int]]
) -> None:
    for storyline in DECISIONS:
        for line_index, offset in enumerate(storyline.day_offsets):
            index = first_index_on_or_after(timeline, FIRST_DAY + timedelta(days=offset))
            while index < len(timeline) and (index in reserved or timeline[index][1] is not None):
                index += 1
            if index < len(timeline):
                reserved[index] = (storyline, line_index)


def schedule_rare_names(
    rng: random.Random,
    timeline: list[tuple[datetime, Trip | None]],
    reserved: dict[int, tuple[Storyline, int]],
) -> None:
    """Each rare name's mentions are more than a batch apart, all at home; a name that cannot fit
    (a small corpus) is left out rather than squeezed into one batch."""
    memories = len(timeline)
    for storyline in RARE_NAMES:
        mentions = len(storyline.lines)
        for _ in range(50):
            gaps = [rng.randint(RARE_NAME_MIN_GAP, RARE_NAME_MAX_GAP) for _ in range(mentions - 1)]
            span = sum(gaps)
            if span >= memories:
                break
            start = rng.randrange(memories - span)
            positions = [start + sum(gaps[:k]) for k in range(mentions)]
            if all(p not in reserved and timeline[p][1] is None for p in positions):
                for line_index, position in enumerate(positions):
                    reserved[position] = (storyline, line_index)
                break


def one_off_names(rng: random.Random) -> tuple[list[str], list[tuple[str, str, str]]]:
    people = [f"{first} {last}" for first in ONE_OFF_FIRST_NAMES for last in ONE_OFF_LAST_NAMES]
    shops = [
        (f"{prefix} {suffix}", kind, item)
        for prefix in ONE_OFF_SHOP_PREFIXES
        for suffix, kind, item in ONE_OFF_SHOP_KINDS
    ]
    rng.shuffle(people)
    rng.shuffle(shops)
    return people, shops
