"""Open mentions pool the sightings of one thing whatever spelling each used (store/mention_pool.py).

Names are invented per seed from syllables and written the ways people write them (an "&" for
"and", a legal form, an ordinal as a word or as digits, an article, capitals, two letters swapped
in a long word); each sighting is applied as its own plan, so no batch ever sees two spellings
together. Beside each name, must-not-merge traps (one letter replaced, initials in another order,
the neighbouring ordinal) are sighted too and must keep rows of their own.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from domain.aliases import normalize_alias
from domain.promotion import PROMOTION_MIN_SIGHTINGS
from domain.resolved_plan import MentionSighting, ResolvedPlan
from store.mention_pool import MentionPool, PoolRow
from tests.compile.test_apply_batching import apply, rows

ONSETS = ("b", "br", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z")
VOWELS = ("a", "e", "i", "o", "u", "ai", "ou")
CODAS = ("", "n", "r", "l", "s", "m", "nd")
ORDINALS = (("First", "1st"), ("Second", "2nd"), ("Third", "3rd"), ("Fourth", "4th"), ("Fifth", "5th"),
            ("Sixth", "6th"), ("Seventh", "7th"), ("Eighth", "8th"))


def _word(rng: random.Random, minimum: int = 8) -> str:
    while True:
        word = "".join(rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS) for _ in range(3))
        if len(word) >= minimum:
            return word.title()


def _swap_two(rng: random.Random, word: str) -> str:
    """Two neighbouring different letters swapped inside the word (a slip of the keyboard)."""
    spots = [i for i in range(1, len(word) - 2) if word[i] != word[i + 1]]
    i = rng.choice(spots)
    return word[:i] + word[i + 1] + word[i] + word[i + 2:]


def _replace_one(rng: random.Random, word: str) -> str:
    """One letter replaced by another: a different name, not a slip."""
    i = rng.randrange(1, len(word))
    other = rng.choice([c for c in "bdfgkmnprstvz" if c != word[i].lower()])
    return word[:i] + other + word[i + 1:]


@dataclass
class Named:
    key: str
    spellings: list[str]  # every sighting's spelling, one per sighting


def _compose(rng: random.Random, index: int) -> tuple[Named, Named]:
    """A thing written three or four ways, and the trap beside it."""
    first, second = _word(rng), _word(rng)
    family = rng.choice(("ampersand", "legal form", "ordinal", "article", "casing", "swap", "initials"))
    if family == "ampersand":
        canonical = f"{first} & {second}"
        variants = [f"{first} and {second}", f"{first} + {second}", f"{first} and {second} LLC"]
        trap = f"{_replace_one(rng, first)} & {second}"
    elif family == "legal form":
        canonical = f"{first} {second}"
        variants = [f"{first} {second} Inc.", f"{first} {second}, Ltd", f"{first} {second} GmbH"]
        trap = f"{first} {_replace_one(rng, second)}"
    elif family == "ordinal":
        n = rng.randrange(len(ORDINALS) - 1)
        canonical = f"{ORDINALS[n][0]} {first} {second}"
        variants = [f"{ORDINALS[n][1]} {first} {second}", f"{ORDINALS[n][0].lower()} {first} {second}"]
        trap = f"{ORDINALS[n + 1][0]} {first} {second}"
    elif family == "article":
        canonical = f"The {first} {second}"
        variants = [f"{first} {second}", f"the {first} {second}"]
        trap = f"The {first} {_replace_one(rng, second)}"
    elif family == "casing":
        canonical = f"{first} {second}"
        variants = [canonical.upper(), f"{first}'s {second}".replace("'s", "")]
        trap = f"{_replace_one(rng, first)} {second}"
    elif family == "swap":
        canonical = f"{first} {second}"
        variants = [f"{_swap_two(rng, first)} {second}", canonical.upper()]
        trap = f"{_replace_one(rng, first)} {second}"
    else:
        a, b = rng.sample("ABDGKLMPRT", 2)
        canonical = f"{a}. {b}. {first}"
        variants = [f"{a}.{b}. {first}", f"{a} {b} {first}"]
        trap = f"{b}. {a}. {first}"
    spellings = [canonical, *variants]
    return (Named(f"thing-{index}", spellings[:PROMOTION_MIN_SIGHTINGS + 1]),
            Named(f"trap-{index}", [trap]))


def _corpus(seed: int, things: int = 6) -> list[Named]:
    rng = random.Random(seed)
    named: list[Named] = []
    for index in range(things):
        named.extend(_compose(rng, index))
    return named


def _sighting(spelling: str, key: str, n: int) -> MentionSighting:
    return MentionSighting(alias=spelling, alias_normalized=normalize_alias(spelling), suggested_type="entity",
                           context=f"{key} sighting {n}", source_ref=None)


def _plan(*sightings: MentionSighting) -> ResolvedPlan:
    return ResolvedPlan(memory_ids=[], tasks={}, pages=[], mentions=list(sightings), promotions=[], links=[])


@pytest.mark.parametrize("seed", [3, 17, 29])
async def test_each_thing_written_many_ways_counts_on_one_open_row_and_traps_keep_their_own(engine: AsyncEngine, seed):
    named = _corpus(seed)
    # Interleaved, one plan per sighting: no batch sees two spellings of a thing together.
    order = [(item, n, spelling) for item in named for n, spelling in enumerate(item.spellings)]
    random.Random(seed).shuffle(order)
    for item, n, spelling in order:
        await apply(engine, _plan(_sighting(spelling, item.key, n)))

    found = await rows(engine, "SELECT alias, mention_count, sample_contexts FROM wiki_unresolved_mentions "
                               "WHERE status = 'open'")
    holder = {c["quote"].split(" sighting ")[0]: row.alias for row in found for c in row.sample_contexts}
    counts = {row.alias: row.mention_count for row in found}
    for item in named:
        assert holder[item.key] in item.spellings
        assert counts[holder[item.key]] == len(item.spellings), (item, found)
    assert len(found) == len(named), [row.alias for row in found]
    # A pooled spelling is kept on its sample, so later spellings meet every name of the row.
    pooled = {c["alias"] for row in found for c in row.sample_contexts if c.get("alias")}
    assert pooled == {s for item in named for s in item.spellings
                      if normalize_alias(s) != normalize_alias(holder[item.key])}


async def test_spellings_of_one_thing_in_one_plan_start_one_row(engine: AsyncEngine):
    await apply(engine, _plan(_sighting("Korvandel & Presmoud", "a", 0), _sighting("Korvandel and Presmoud Inc.", "a", 1),
                              _sighting("KORVANDEL AND PRESMOUD", "a", 2)))

    found = await rows(engine, "SELECT alias, mention_count FROM wiki_unresolved_mentions")
    assert [(row.alias, row.mention_count) for row in found] == [("Korvandel & Presmoud", 3)]


async def test_a_spelling_the_scope_already_holds_keeps_its_own_row(engine: AsyncEngine):
    await apply(engine, _plan(_sighting("Brandoulis Tarmeno", "a", 0)))
    await apply(engine, _plan(_sighting("Brandoulis Tarmeno LLC", "a", 1)))
    await apply(engine, _plan(_sighting("Brandoulis Tarmeno LLC", "a", 2)))

    found = await rows(engine, "SELECT alias, mention_count FROM wiki_unresolved_mentions")
    assert [(row.alias, row.mention_count) for row in found] == [("Brandoulis Tarmeno", 3)]


def test_a_spelling_two_open_rows_could_be_joins_neither():
    pool = MentionPool([PoolRow("marvolden street", "entity", ("Marvolden Street",)),
                        PoolRow("marvolden st grill", "entity", ("Marvolden St Grill",))])
    assert pool.kin("Marvolden St.", "entity") == "marvolden street"
    assert pool.kin("Marvolden Str Grill", "entity") == "marvolden st grill"
    pool.add(PoolRow("marvolden street bis", "entity", ("Marvolden Street",)))
    assert pool.kin("Marvolden St.", "entity") is None


def test_only_a_confident_rung_pools():
    pool = MentionPool([PoolRow("international brandorf", "entity", ("International Brandorf",)),
                        PoolRow("kestrel", "entity", ("Kestrel",))])
    assert pool.kin("Intl Brandorf", "entity") is None  # an abbreviation: a question for the judge
    assert pool.kin("Kestrels", "entity") is None  # a short name takes no fuzzy rung
    assert pool.kin("International Brandorf Inc.", "topic") is None  # another page type


async def test_a_row_the_plan_promotes_takes_no_pooled_sighting(engine: AsyncEngine):
    from domain import ids
    from domain.resolved_plan import MentionPromotion
    from tests.compile.test_apply_batching import OWNER, TENANT, page, page_id
    await apply(engine, _plan(_sighting("Korvandel & Presmoud", "a", 0)))
    held = ids.mention_id(TENANT, OWNER, normalize_alias("Korvandel & Presmoud"), 0)
    promote = MentionPromotion(mention_id=str(held), alias_normalized=normalize_alias("Korvandel & Presmoud"),
                               page_id=page_id("korvandel-presmoud"))
    await apply(engine, ResolvedPlan(memory_ids=[], tasks={}, pages=[page("korvandel-presmoud")],
                                     mentions=[_sighting("Korvandel and Presmoud Inc.", "a", 1)],
                                     promotions=[promote], links=[]))

    found = await rows(engine, "SELECT alias, status, mention_count FROM wiki_unresolved_mentions ORDER BY alias")
    assert [(row.alias, row.status, row.mention_count) for row in found] == [
        ("Korvandel & Presmoud", "promoted", 1), ("Korvandel and Presmoud Inc.", "open", 1)]
