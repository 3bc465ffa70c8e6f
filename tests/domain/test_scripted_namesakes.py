"""One name, two things, in one batch: the scripted planner keeps a namesake in another city apart
from a page of that name or a name held as an open mention, as the resolver does across batches.
Names, cities and the order of the visits are composed at random."""

from __future__ import annotations

import random

import pytest

from domain.aliases import normalize_alias
from domain.context import MemoryRecord
from planners.scripted.leaf_plan import scripted_plan
from tests.domain.test_scripted import BASE_TIME, context, entity, memory, open_mention


@pytest.mark.parametrize("seed", range(6))
def test_one_name_in_two_cities_in_one_batch_makes_two_pages(seed: int) -> None:
    """A venue name invented at random, visited in two cities, the visits shuffled into one batch: two
    pages, the second titled with its city and holding the plain name as no alias (the resolver would
    merge them by it), as when the two cities' memories come in two batches."""
    rng = random.Random(seed)
    name = "".join(rng.choice("bdklmprstv") + rng.choice("aeiou") for _ in range(3)).title() + " " + rng.choice(
        ["Tavern", "Cafe", "Books", "Bakery"])
    first_city, second_city = rng.sample(["Madison", "Denver", "Tucson", "Raleigh", "Boise", "Porto"], 2)
    visits = [first_city] * rng.randint(2, 6) + [second_city] * rng.randint(2, 6)
    rng.shuffle(visits)
    memories = [memory(n, f"{rng.choice(['Stopped at', 'Went to', 'Lunch at'])} {name} {rng.choice(['', 'again '])}"
                          f"today.", day=n, place={"name": name, "city": city, "address": f"{n} Main St, {city}",
                                                  "types": ["bar"]},
                       entities=[entity(name, "venue")]) for n, city in enumerate(visits, 1)]

    plan = scripted_plan(context(memories))

    pages = [page for page in plan.newPages if normalize_alias(name) in normalize_alias(page.title)]
    other = second_city if visits[0] == first_city else first_city
    assert {page.title for page in pages} == {name, f"{name} ({other})"}
    assert len({page.slug for page in pages}) == 2
    assert all(normalize_alias(name) not in {normalize_alias(a) for a in page.aliases} for page in pages)
    assert {frozenset(page.source_refs) for page in pages} == {
        frozenset(str(m.id) for m, c in zip(memories, visits, strict=True) if c == city) for city in (first_city, second_city)}


@pytest.mark.parametrize("seed", range(6))
def test_a_held_name_and_its_namesake_elsewhere_in_one_batch_leave_no_memory_unplaced(seed: int) -> None:
    """A venue name held as an open mention from a visit in one city, then a batch visiting it there and
    a namesake in another city: each of the batch's memories is cited by a page or a promotion, or held
    again, and the two cities are never one page."""
    rng = random.Random(seed)
    name = "".join(rng.choice("bdklmprstv") + rng.choice("aeiou") for _ in range(3)).title() + " Cafe"
    home, away = rng.sample(["Madison", "Denver", "Tucson", "Raleigh", "Boise", "Porto"], 2)

    def visit(number: int, city: str, day: int) -> MemoryRecord:
        return memory(number, f"Coffee at {name} today.", day=day, place={"name": name, "city": city,
                      "address": f"{number} Main St, {city}", "types": ["cafe"]}, entities=[entity(name, "venue")])

    held = [visit(1, home, 0)]
    cities = [home] * rng.randint(1, 3) + [away] * rng.randint(2, 4)
    rng.shuffle(cities)
    memories = [visit(n, city, 1 + n) for n, city in enumerate(cities, 2)]
    mention = open_mention(name, 1, BASE_TIME, suggested_type="entity",
                           sample_contexts=[{"quote": f"Coffee at {name} today.", "source_ref": str(held[0].id)}])

    plan = scripted_plan(context(memories, mentions=[mention]).model_copy(update={"held_memories": held}))

    placed: dict[str, set[str]] = {}
    for page in [*plan.newPages, *plan.promotions]:
        refs = {ref for section in page.sections for ref in section.source_refs}
        refs |= set(getattr(page, "source_refs", []))
        placed.setdefault(page.slug, set()).update(refs)
    held_again = {m.source_ref for m in plan.unresolvedMentions}
    promoted = [p.mentionId for p in plan.promotions]
    assert len(promoted) == len(set(promoted)), promoted  # one held name, promoted once
    for m, city in zip(memories, cities, strict=True):
        assert str(m.id) in held_again or any(str(m.id) in refs for refs in placed.values()), (city, placed)
    by_city = {city: {str(m.id) for m, c in zip(memories, cities, strict=True) if c == city} for city in (home, away)}
    for refs in placed.values():
        assert not (refs & by_city[home] and refs & by_city[away]), placed
