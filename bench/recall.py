"""Recall latency on a 10,000-memory scope: p50 / p95 of `recall` (and of `context`), and what
embedding every claim costs.

`python -m bench recall` runs this part alone.

The scope is the recall eval's generator (`evals/recall_corpus.py`) at scale: three subjects with
hundreds of facts each and a few hundred with a handful, as plain sentences. The wiki is written in
SQL the way the compile leaves one (seconds, not a 10,000-memory compile): a page per subject with
its full name and first name as aliases, one claim per memory citing it, a derived count line per
page citing all its memories, links between subjects mentioned together; then every claim is
embedded by the static model, as the compile's apply does. The questions are the generator's. Each
call goes through `app.recall.recall` (what `GET /v1/recall` and MCP `recall` run) on one
connection pool, one after the other.
"""

from __future__ import annotations

import logging
import statistics
import time
import uuid
from collections import defaultdict

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.claim_vectors import embed_new_claims
from app.context import context
from app.reads import ReadScope
from app.recall import recall
from bench.services import Services
from domain.aliases import normalize_alias, slugify_title
from domain.claim_text import claim_key
from domain.claims import confidence
from evals.recall_corpus import generate
from messages.compile import Scope
from planners.embeddings import static_embedder
from runtime.database import engine_for

TENANT, OWNER = "bench", "recall"
TARGET_P95_MS = 150.0
WARMUP = 10
log = logging.getLogger("bench.recall")


def _rows(seed: int):
    corpus = generate(seed, heavy=3, light=300, heavy_rounds=205)
    by_subject: dict[str, list] = defaultdict(list)
    for memory in corpus.memories:  # every memory opens with its subject's full name
        by_subject[" ".join(memory.content.split()[:2]).split("'")[0]].append(memory)
    return corpus, sorted(by_subject), by_subject


async def build_scope(engine: AsyncEngine, seed: int = 3) -> dict:
    corpus, subjects, by_subject = _rows(seed)
    pages, aliases, sections, claims, sources, links = [], [], [], [], [], set()
    page_of = {s: uuid.uuid5(uuid.NAMESPACE_URL, f"bench-recall/{s}") for s in subjects}
    first_names: dict[str, list[str]] = defaultdict(list)
    for subject in subjects:
        first_names[subject.split()[0]].append(subject)
    for subject in subjects:
        page_id, section_id = page_of[subject], uuid.uuid5(page_of[subject], "facts")
        memories = by_subject[subject]
        pages.append((str(page_id), slugify_title(subject), subject, f"{subject}: {len(memories)} memories."))
        aliases += [(str(uuid.uuid4()), str(page_id), normalize_alias(subject)),
                    (str(uuid.uuid4()), str(page_id), normalize_alias(subject.split()[0]))]
        sections.append((str(section_id), str(page_id)))
        lines = [(m.content, [m], "fact") for m in memories]
        lines.append((f"{len(memories)} memories mention {subject}.", memories, "derived"))
        for position, (line, cited, kind) in enumerate(lines, 1):
            claim_id = uuid.uuid5(section_id, f"{position}")
            days = [m.occurred_at for m in cited]
            claims.append((str(claim_id), str(section_id), position, line, claim_key(line), kind,
                           confidence(len(cited)), len(cited), min(days), max(days)))
            sources += [(str(claim_id), m.id) for m in cited]
        for memory in memories:
            for other in subjects:
                if other != subject and other.split()[0] in memory.content.split()[2:]:
                    links.add((str(page_id), str(page_of[other])))
    async with engine.begin() as conn:
        await conn.execute(text("""
            INSERT INTO memory_units (id, tenant_id, owner_id, content, created_at, updated_at)
            SELECT id, :t, :o, content, at, at FROM unnest(CAST(:ids AS uuid[]), CAST(:contents AS text[]),
                                                           CAST(:ats AS timestamptz[])) AS m(id, content, at)
        """), {"t": TENANT, "o": OWNER, "ids": [m.id for m in corpus.memories],
               "contents": [m.content for m in corpus.memories], "ats": [m.occurred_at for m in corpus.memories]})
        await conn.execute(text("""
            INSERT INTO wiki_pages (id, tenant_id, owner_id, type, slug, title, summary, last_compiled_at)
            SELECT CAST(id AS uuid), :t, :o, 'entity', slug, title, summary, now()
            FROM unnest(CAST(:ids AS text[]), CAST(:slugs AS text[]), CAST(:titles AS text[]),
                        CAST(:summaries AS text[])) AS p(id, slug, title, summary)
        """), {"t": TENANT, "o": OWNER, "ids": [p[0] for p in pages], "slugs": [p[1] for p in pages],
               "titles": [p[2] for p in pages], "summaries": [p[3] for p in pages]})
        await conn.execute(text("""
            INSERT INTO wiki_page_aliases (id, page_id, alias)
            SELECT CAST(id AS uuid), CAST(page AS uuid), alias
            FROM unnest(CAST(:ids AS text[]), CAST(:pages AS text[]), CAST(:aliases AS text[])) AS a(id, page, alias)
            ON CONFLICT DO NOTHING
        """), {"ids": [a[0] for a in aliases], "pages": [a[1] for a in aliases], "aliases": [a[2] for a in aliases]})
        await conn.execute(text("""
            INSERT INTO wiki_page_sections (id, page_id, section_slug, heading, body_md, position)
            SELECT CAST(id AS uuid), CAST(page AS uuid), 'facts', 'Facts', '', 1
            FROM unnest(CAST(:ids AS text[]), CAST(:pages AS text[])) AS s(id, page)
        """), {"ids": [s[0] for s in sections], "pages": [s[1] for s in sections]})
        columns = list(zip(*claims, strict=True))
        await conn.execute(text("""
            INSERT INTO wiki_section_claims (id, section_id, position, text, text_key, kind, status, confidence,
                                             corroboration, first_seen_at, last_seen_at)
            SELECT CAST(id AS uuid), CAST(section AS uuid), position, body, key, kind, 'verified', conf, n, first, last
            FROM unnest(CAST(:ids AS text[]), CAST(:sections AS text[]), CAST(:positions AS int[]),
                        CAST(:texts AS text[]), CAST(:keys AS text[]), CAST(:kinds AS text[]),
                        CAST(:confs AS numeric[]), CAST(:ns AS int[]), CAST(:firsts AS timestamptz[]),
                        CAST(:lasts AS timestamptz[]))
                 AS c(id, section, position, body, key, kind, conf, n, first, last)
        """), {"ids": list(columns[0]), "sections": list(columns[1]), "positions": list(columns[2]),
               "texts": list(columns[3]), "keys": list(columns[4]), "kinds": list(columns[5]),
               "confs": list(columns[6]), "ns": list(columns[7]), "firsts": list(columns[8]), "lasts": list(columns[9])})
        await conn.execute(text("""
            INSERT INTO wiki_claim_sources (claim_id, tenant_id, owner_id, memory_id)
            SELECT CAST(c AS uuid), :t, :o, m FROM unnest(CAST(:claims AS text[]), CAST(:memories AS text[])) AS s(c, m)
        """), {"t": TENANT, "o": OWNER, "claims": [s[0] for s in sources], "memories": [s[1] for s in sources]})
        await conn.execute(text("""
            INSERT INTO wiki_page_links (id, from_page_id, to_page_id, kind)
            SELECT gen_random_uuid(), CAST(a AS uuid), CAST(b AS uuid), 'reference'
            FROM unnest(CAST(:froms AS text[]), CAST(:tos AS text[])) AS l(a, b)
        """), {"froms": [a for a, _ in links], "tos": [b for _, b in links]})
        await conn.execute(text("""
            INSERT INTO wiki_compile_cursors (tenant_id, owner_id, last_record_updated_at, last_record_id)
            SELECT tenant_id, owner_id, date_trunc('milliseconds', updated_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', id
            FROM memory_units WHERE tenant_id = :t AND owner_id = :o
            ORDER BY date_trunc('milliseconds', updated_at AT TIME ZONE 'UTC') DESC, id DESC LIMIT 1
        """), {"t": TENANT, "o": OWNER})
    static_embedder()
    started = time.perf_counter()
    embedded = await embed_new_claims(engine, Scope(tenant=TENANT, owner=OWNER), static_embedder)
    embed_seconds = time.perf_counter() - started
    # Statistics and the visibility map as autovacuum leaves them once a scope has grown (VACUUM runs
    # outside a transaction; an ANALYZE inside one that is rolled back is lost).
    async with engine.connect() as conn:
        await (await conn.execution_options(isolation_level="AUTOCOMMIT")).execute(text("VACUUM ANALYZE"))
    return {"memories": len(corpus.memories), "pages": len(pages), "claims": len(claims), "links": len(links),
            "embedded_claims": embedded, "embed_seconds": round(embed_seconds, 2), "questions": corpus.questions}


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"p50_ms": round(statistics.median(ordered), 1), "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 1),
            "max_ms": round(ordered[-1], 1), "calls": len(ordered)}


async def measure_recall(services: Services, repeats: int) -> dict:
    async with services.fresh_database() as url:
        engine = engine_for(url, pool_size=5, max_overflow=0)
        try:
            scope = await build_scope(engine)
            questions = [q.question for q in scope.pop("questions")]
            read = ReadScope.of(TENANT, OWNER)
            for question in questions[:WARMUP]:
                await recall(engine, read, question, 500, embedder=static_embedder)
            timings: dict[str, list[float]] = {"recall": [], "recall_without_semantic": [], "context": []}
            # CPU the calls take, here and in Postgres: what a call costs when it need not wait for a
            # CPU, whatever else the machine runs.
            cpu = services.cpu_account()
            cpu.start()
            for question in questions:
                started = time.perf_counter()
                await recall(engine, read, question, 500, embedder=static_embedder)
                timings["recall"].append((time.perf_counter() - started) * 1000)
            cpu_seconds = cpu.stop()
            for question in questions:
                started = time.perf_counter()
                await recall(engine, read, question, 500, without=["semantic"])
                timings["recall_without_semantic"].append((time.perf_counter() - started) * 1000)
            for _ in range(30):
                started = time.perf_counter()
                await context(engine, read, 500)
                timings["context"].append((time.perf_counter() - started) * 1000)
            vector_search = await _vector_search(engine, questions)
        finally:
            await engine.dispose()
    return {"scope": scope, "target_p95_ms": TARGET_P95_MS, "budget_tokens": 500,
            "calls": {name: _percentiles(samples) for name, samples in timings.items()},
            "cpu_ms_per_recall": {"client": round(cpu_seconds["bench_process"] * 1000 / len(questions), 1),
                                  "postgres": round(cpu_seconds["postgres"] * 1000 / len(questions), 1),
                                  "other_processes_share": round(cpu_seconds["other_processes"]
                                                                 / max(cpu_seconds["machine_total"], 1e-9), 3)},
            "vector_search": vector_search}


async def _vector_search(engine: AsyncEngine, questions: list[str]) -> dict:
    """The semantic retriever's nearest 300 claims two ways, on the same vectors: every vector scored in
    numpy (what recall does, the matrix kept by app/recall_cache.py) and pgvector's exact `<=>` scan
    (the embedded Postgres ships the extension; a cluster may not)."""
    import numpy as np

    from app.recall_cache import indexes
    from planners.embeddings import cosine_ranking
    from store.recall_reads import recall_state

    model = static_embedder()
    async with engine.connect() as conn:
        state = await recall_state(conn, TENANT, OWNER, "")
        found = (await indexes(conn, TENANT, OWNER, state.revision, model)).claim_vectors
        assert found is not None
        kept = found
    numpy_ms, pgvector_ms = [], []
    for question in questions:
        query = model.embed([question])[0]
        started = time.perf_counter()
        cosine_ranking(query, kept.ids, kept.matrix, 300)
        numpy_ms.append((time.perf_counter() - started) * 1000)
    try:
        async with engine.begin() as conn:
            await conn.execute(text("CREATE EXTENSION IF NOT EXISTS vector"))
            await conn.execute(text("CREATE TABLE bench_claim_vectors (claim_id uuid PRIMARY KEY, v vector(256))"))
            await conn.execute(text("""
                INSERT INTO bench_claim_vectors SELECT CAST(id AS uuid), CAST(v AS vector)
                FROM unnest(CAST(:ids AS text[]), CAST(:vs AS text[])) AS t(id, v)
            """), {"ids": kept.ids, "vs": [str(np.round(row, 6).tolist()) for row in kept.matrix]})
            await conn.execute(text("ANALYZE bench_claim_vectors"))
        async with engine.connect() as conn:
            for question in questions:
                literal = str(np.round(model.embed([question])[0], 6).tolist())
                started = time.perf_counter()
                await conn.execute(text("SELECT claim_id FROM bench_claim_vectors ORDER BY v <=> CAST(:q AS vector) "
                                        "LIMIT 300"), {"q": literal})
                pgvector_ms.append((time.perf_counter() - started) * 1000)
    except Exception as error:  # noqa: BLE001 - a server without pgvector: reported, not fatal
        log.warning("pgvector not measured: %s", error)
    return {"vectors": len(kept.ids), "numpy": _percentiles(numpy_ms),
            "pgvector": _percentiles(pgvector_ms) if pgvector_ms else None}
