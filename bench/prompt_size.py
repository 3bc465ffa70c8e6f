"""The prompt part: planner input size as a scope grows to 100, 1,000 and 10,000 pages.

Each scope is seeded directly in Postgres (bulk INSERTs): the sample's own names first (the pages a
real scope compiled from the sample would have, so the batch's names find their pages at every
size), then generated names of the same shapes (shops, cafés, people, trips), each page with a
summary, a body, its title alias, and `last_compiled_at` spread over the past year. Open mentions
are seeded in proportion (MENTIONS_PER_PAGE), since the planner also reads those. Then one batch of
50 sample memories goes through the planner's context path exactly as `llm.plan_batch` does:
names_in_batch -> candidate_pages -> open_mentions -> build_planner_prompt.
"""

from __future__ import annotations

import json
import random
import statistics
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from activities.planning import MAX_OPEN_MENTIONS
from bench.overhead import sample_memories
from bench.services import Services
from domain import ids
from domain.aliases import normalize_alias, seed_aliases_for_title, slugify_title
from domain.context import PlannerContext
from domain.pricing import estimate_tokens
from planners.prompts import build_planner_prompt
from runtime.database import create_engine
from runtime.settings import Settings
from sample import catalogue
from sample import corpus as sample
from store.memories import load_memories
from store.memories import store_memories as retain
from store.scope_reads import (
    MAX_MENTION_PADDING,
    MAX_RECENT_PADDING,
    candidate_pages,
    names_in_batch,
    open_mentions,
)

SCOPE_SIZES = (100, 1_000, 10_000)
BATCH = slice(350, 400)  # a batch from the middle of the sample: recurring names and new ones
# Open mentions per page in the seeded scopes (the compiled 700-memory sample has about 0.4).
MENTIONS_PER_PAGE = 0.5
TIMED_READS = 3
SEED = 11

_PLACE_WORDS = (
    "Juniper", "Copper", "Magpie", "Lantern", "Saffron", "Thistle", "Marigold", "Bramble", "Cobalt", "Indigo",
    "Willow", "Hazel", "Ember", "Sparrow", "Pebble", "Clover", "Falcon", "Harbor", "Meadow", "Quarry", "Cedar",
    "Birch", "Ivy", "Oak", "Maple", "Rowan", "Aspen", "Heron", "Otter", "Fox", "Wren", "Lark", "Finch", "Robin",
)
_PLACE_NOUNS = (
    "Street", "Corner", "Garden", "Table", "House", "Yard", "Kitchen", "Hall", "Hill", "Bridge", "Lane", "Market",
    "Square", "Grove", "Point", "Bay", "Creek", "Row", "Mill", "Dock", "Gate", "Wharf", "Terrace", "Court", "Ridge",
    "Field", "Brook", "Alley", "Arcade", "Pier", "Station", "Works", "Loft", "Cellar", "Annex", "Commons",
)
_PLACE_KINDS = (
    ("Café", "cafe"), ("Bistro", "restaurant"), ("Taqueria", "restaurant"), ("Bakery", "bakery"),
    ("Books", "bookshop"), ("Records", "record shop"), ("Park", "park"), ("Hotel", "hotel"), ("Tavern", "bar"),
    ("Noodle Bar", "restaurant"), ("Wine Bar", "bar"), ("Trailhead", "park"), ("Roasters", "cafe"),
)
_CITIES = ("Austin", "Toronto", "Paris", "Lisbon", "London", "Tokyo", "Mexico City", "San Francisco", "Denver")


@dataclass(frozen=True)
class SeedPage:
    type: str
    title: str
    summary: str
    aliases: tuple[str, ...]


def sample_pages(batch_names: set[str]) -> list[SeedPage]:
    """The sample's recurring names as pages, those the batch mentions first."""
    pages = []
    for spec in sample.RECURRING_ENTITIES:
        city = getattr(spec, "city", None)
        where = f" in {city.name}" if city is not None else ""
        summary = f"A {spec.kind}{where} that comes up again and again in Eric's memories."
        aliases = {normalize_alias(a) for a in (spec.name, *spec.aliases)} | {
            normalize_alias(variant) for variant, how in spec.variants if how in sample.ALIAS_BEARING_HOWS}
        pages.append(SeedPage(spec.type, spec.name, summary, tuple(sorted(a for a in aliases if a))))
    pages.sort(key=lambda page: not (set(page.aliases) & batch_names))
    return pages


def generated_pages(count: int, taken: set[str], rng: random.Random) -> list[SeedPage]:
    """Names of the sample's shapes (places, people, trips) that no sample memory mentions."""
    pages: list[SeedPage] = []
    while len(pages) < count:
        shape = rng.random()
        if shape < 0.7:
            suffix, kind = rng.choice(_PLACE_KINDS)
            title = f"{rng.choice(_PLACE_WORDS)} {rng.choice(_PLACE_NOUNS)} {suffix}"
            summary = f"A {kind} in {rng.choice(_CITIES)} Eric visited {rng.randint(1, 9)} times."
            page_type = "entity"
        elif shape < 0.9:
            title = f"{rng.choice(catalogue.ONE_OFF_FIRST_NAMES)} {rng.choice(catalogue.ONE_OFF_LAST_NAMES)}"
            summary = f"Someone Eric knows from {rng.choice(('work', 'the running club', 'the neighbourhood'))}."
            page_type = "entity"
        else:
            title = f"{rng.choice(('Weekend in', 'Trip to', 'Summer in', 'Conference in'))} {rng.choice(_CITIES)} " \
                    f"{rng.randint(2015, 2026)}"
            summary = "A trip Eric took, with the places he went and the people he met."
            page_type = "topic"
        key = normalize_alias(title)
        if key in taken:
            continue
        taken.add(key)
        pages.append(SeedPage(page_type, title, summary, tuple(seed_aliases_for_title(title))))
    return pages


async def seed_scope(conn: AsyncConnection, tenant: str, owner: str, pages: list[SeedPage],
                     rng: random.Random) -> None:
    now = datetime.now(UTC)
    rows = []
    for page in pages:
        slug = slugify_title(page.title)
        rows.append({
            "id": ids.page_id(tenant, owner, page.type, slug), "type": page.type, "slug": slug,
            "title": page.title, "summary": page.summary,
            "body": f"## Overview\n\n{page.summary}\n\n## Notes\n\nFirst mentioned in {rng.randint(2019, 2026)}.",
            "compiled": now - timedelta(minutes=rng.randint(0, 365 * 24 * 60)),
        })
    await conn.execute(text("""
        INSERT INTO wiki_pages (id, tenant_id, owner_id, type, slug, title, summary, body_md, last_compiled_at)
        SELECT id, :tenant, :owner, type, slug, title, summary, body, compiled
        FROM unnest(CAST(:ids AS uuid[]), CAST(:types AS text[]), CAST(:slugs AS text[]), CAST(:titles AS text[]),
                    CAST(:summaries AS text[]), CAST(:bodies AS text[]), CAST(:compiled AS timestamptz[]))
             AS t(id, type, slug, title, summary, body, compiled)
    """), {"tenant": tenant, "owner": owner, **_columns(rows, ids="id", types="type", slugs="slug", titles="title",
                                                         summaries="summary", bodies="body", compiled="compiled")})
    aliases = [(row["id"], alias) for row, page in zip(rows, pages, strict=True) for alias in page.aliases]
    await conn.execute(text("""
        INSERT INTO wiki_page_aliases (id, page_id, alias)
        SELECT id, page_id, alias FROM unnest(CAST(:ids AS uuid[]), CAST(:pages AS uuid[]), CAST(:aliases AS text[]))
             AS t(id, page_id, alias)
    """), {"ids": [ids.alias_id(page_id, alias) for page_id, alias in aliases],
           "pages": [page_id for page_id, _ in aliases], "aliases": [alias for _, alias in aliases]})
    await _seed_mentions(conn, tenant, owner, int(len(pages) * MENTIONS_PER_PAGE), rng, now)


async def _seed_mentions(conn: AsyncConnection, tenant: str, owner: str, count: int, rng: random.Random,
                         now: datetime) -> None:
    names: dict[str, str] = {}
    while len(names) < count:
        name = f"{rng.choice(catalogue.ONE_OFF_FIRST_NAMES)} {rng.choice(_PLACE_WORDS)}{rng.randint(1, 999)}"
        names.setdefault(normalize_alias(name), name)
    await conn.execute(text("""
        INSERT INTO wiki_unresolved_mentions (id, tenant_id, owner_id, alias, alias_normalized, mention_count,
                                              last_seen_at, sample_contexts)
        SELECT id, :tenant, :owner, alias, normalized, counted, seen, CAST(contexts AS jsonb)
        FROM unnest(CAST(:ids AS uuid[]), CAST(:aliases AS text[]), CAST(:normalized AS text[]),
                    CAST(:counts AS int[]), CAST(:seen AS timestamptz[]), CAST(:contexts AS text[]))
             AS t(id, alias, normalized, counted, seen, contexts)
    """), {
        "tenant": tenant, "owner": owner,
        "ids": [ids.mention_id(tenant, owner, key, 0) for key in names],
        "aliases": list(names.values()), "normalized": list(names),
        "counts": [rng.choice((1, 1, 1, 2)) for _ in names],
        "seen": [now - timedelta(days=rng.randint(0, 200)) for _ in names],
        "contexts": [json.dumps([{"quote": f"Met {alias} briefly.", "source_ref": str(uuid.uuid4())}])
                     for alias in names.values()],
    })


def _columns(rows: list[dict], **names: str) -> dict[str, list]:
    return {param: [row[key] for row in rows] for param, key in names.items()}


async def planner_input(services: Services, scope_pages: int) -> dict:
    """Seed one scope of `scope_pages` pages, then build the planner prompt for one batch in it."""
    tenant, owner = "prompt", f"pages{scope_pages}"
    rng = random.Random(SEED)
    batch = sample_memories()[BATCH]
    settings = Settings(WIKI_LLM="scripted")
    async with services.fresh_database() as url:
        engine = create_engine(url)
        try:
            await retain(engine, tenant, owner, batch)
            async with engine.begin() as conn:
                memories = await load_memories(conn, tenant, owner, [m.resolved_id(tenant, owner) for m in batch])
                names = names_in_batch(memories)
                pages = sample_pages(set(names))
                pages += generated_pages(scope_pages - len(pages), {normalize_alias(p.title) for p in pages}, rng)
                await seed_scope(conn, tenant, owner, pages[:scope_pages], rng)
            async with engine.begin() as conn:
                # Committed: statistics written inside a transaction that rolls back are lost with it.
                await conn.execute(text("ANALYZE"))
            async with engine.connect() as conn:
                timings = []
                for _ in range(TIMED_READS):
                    started = time.perf_counter()
                    candidates = await candidate_pages(conn, tenant, owner, names, settings.max_candidate_pages)
                    mentions = await open_mentions(conn, tenant, owner, names, MAX_OPEN_MENTIONS, [])
                    timings.append(time.perf_counter() - started)
        finally:
            await engine.dispose()
    prompt = build_planner_prompt(PlannerContext(tenant_id=tenant, owner_id=owner, memories=memories,
                                                 candidate_pages=candidates, open_mentions=mentions))
    chars = prompt.chars
    batch_part = prompt.user[prompt.user.index("## Memory records in this batch"):]
    batch_titles = {normalize_alias(p.title) for p in pages if set(p.aliases) & set(names)}
    return {
        "scope_pages": scope_pages,
        "open_mentions_in_scope": int(scope_pages * MENTIONS_PER_PAGE),
        "batch_memories": len(memories),
        "names_in_batch": len(names),
        "candidate_pages": len(candidates),
        "candidate_pages_named_by_batch": sum(normalize_alias(c.title) in batch_titles for c in candidates),
        "pages_named_by_batch": len(batch_titles),
        "open_mentions": len(mentions),
        "input_chars": chars,
        "input_chars_by_part": {"system": len(prompt.system),
                                "candidates_and_mentions": len(prompt.user) - len(batch_part),
                                "batch": len(batch_part)},
        "estimated_input_tokens": estimate_tokens(chars),
        "context_read_ms_median": round(statistics.median(timings) * 1000, 1),
    }


async def measure_prompt(services: Services, repeats: int) -> dict:
    """One scope of each size of SCOPE_SIZES, each read TIMED_READS times (`repeats` does not apply),
    and the bounds the context was read with."""
    return {"scopes": [await planner_input(services, pages) for pages in SCOPE_SIZES],
            "bounds": {"max_recent_padding": MAX_RECENT_PADDING, "max_mention_padding": MAX_MENTION_PADDING,
                       "max_candidate_pages": Settings(WIKI_LLM="scripted").max_candidate_pages,
                       "max_open_mentions": MAX_OPEN_MENTIONS}}
