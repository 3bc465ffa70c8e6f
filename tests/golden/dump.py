"""Every row of one scope's compiled wiki, as plain JSON-able data, read with plain SQL.

This module imports nothing from the project (only the standard library and sqlalchemy), so the
golden fixture it produces can be compared against any later version of the code, wherever the
project's packages have moved.

What is compared, per table (schema of migrations/versions/0001_initial_schema.py):

- memories (`memory_units`): id, content, metadata, created_at. created_at is the sample's own
  `occurred_at` (retain writes coalesce(occurred_at, stamp)), so it is deterministic; for a memory
  without occurred_at it is the retain stamp, equal to updated_at, and is dumped as null.
- pages (`wiki_pages`): id, type, slug, title, summary, body_md, status, parent_page_id,
  hubness_score, tags.
- sections (`wiki_page_sections`): id, page_id, section_slug, heading, body_md, position, aggregation.
- aliases (`wiki_page_aliases`): id, page_id, alias, source.
- links (`wiki_page_links`): id, from_page_id, to_page_id, kind, context.
- mentions (`wiki_unresolved_mentions`): id, alias, alias_normalized, mention_count, suggested_type,
  status, promoted_page_id, sample_contexts (every key of every context but `seen_at`).
- sources (`wiki_section_sources`): id, section_id, source_kind, source_ref.
- cursor (`wiki_compile_cursors`): last_record_id.

Every id is a uuid5 of the row's natural key (domain/ids.py, domain/memory.py), so ids are compared
too. Every query orders by a unique key, text compared bytewise (COLLATE "C") so the host's locale
cannot reorder rows.

What is left out, and why (each comes from the wall clock or from a random / workflow run id):

- memory_units.updated_at: retain stamps it from clock_timestamp() (activities/memory_store.py).
- wiki_pages.last_compiled_at / created_at / updated_at, wiki_page_sections.last_source_at /
  created_at / updated_at, wiki_page_aliases.created_at, wiki_page_links.created_at,
  wiki_unresolved_mentions.first_seen_at / last_seen_at / created_at / updated_at,
  wiki_section_sources.first_seen_at: all set from the apply transaction's now() or a column
  DEFAULT now().
- wiki_unresolved_mentions.sample_contexts[*].seen_at: the apply transaction's now().
- wiki_compile_cursors.last_record_updated_at: the last compiled memory's retain-time updated_at;
  wiki_compile_cursors.updated_at: now().
- wiki_pages.search_tsv: not written by the code at all; Postgres generates it from title, summary
  and body_md, which are compared.
- Whole tables: wiki_compile_jobs (the ledger: run ids, timestamps, latencies, costs),
  wiki_compile_plans and wiki_compile_section_drafts (per-batch staging keyed by
  workflow.uuid4() plan ids and run ids).

Normalised rather than left out: a memory without occurred_at happened, as far as the store knows,
when it was retained, so its date (created_at, which the scripted planner writes in bodies) is the
retain day. Every retain day (UTC) of the scope is replaced by RETAIN_DATE_PLACEHOLDER in every string
of the dump (two runs on one day are byte-identical without this, but the fixture must also hold on a
later day). The sample gives every memory an occurred_at, so its bodies carry no retain day at all;
the replacement guards scopes that do. dump_scope refuses, rather than guess, when a retain day is
also a day the memories say they happened on (the sample's days are 2026-01-05 to 2026-09-28, all
before the fixture was made). A retain that straddles UTC midnight (700 memories are stamped 1 ms
apart, so within 0.7 s of it) gives two retain days; both become the placeholder.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import uuid
from decimal import Decimal
from typing import Any

from sqlalchemy import text

RETAIN_DATE_PLACEHOLDER = "<retain-date>"

_SCOPE_PAGES = "JOIN wiki_pages p ON p.id = {page_column} WHERE p.tenant_id = :t AND p.owner_id = :o"

# Columns whose value is jsonb, read as text (jsonb's own canonical text) and parsed here, so the
# result does not depend on the driver's json codec.
_JSON_COLUMNS = frozenset({"metadata", "aggregation", "sample_contexts"})

TABLE_QUERIES: dict[str, str] = {
    "memories": """
        SELECT id, content, CAST(metadata AS text) AS metadata,
               -- retain writes coalesce(occurred_at, stamp): equal to updated_at only for a memory
               -- without occurred_at, whose created_at is then the wall-clock stamp.
               CASE WHEN created_at = updated_at THEN NULL ELSE created_at END AS created_at
        FROM memory_units WHERE tenant_id = :t AND owner_id = :o
        ORDER BY id
    """,
    "pages": """
        SELECT id, type, slug, title, summary, body_md, status, parent_page_id, hubness_score, tags
        FROM wiki_pages WHERE tenant_id = :t AND owner_id = :o
        ORDER BY type COLLATE "C", slug COLLATE "C"
    """,
    "sections": f"""
        SELECT s.id, s.page_id, s.section_slug, s.heading, s.body_md, s.position,
               CAST(s.aggregation AS text) AS aggregation
        FROM wiki_page_sections s {_SCOPE_PAGES.format(page_column="s.page_id")}
        ORDER BY p.type COLLATE "C", p.slug COLLATE "C", s.position, s.section_slug COLLATE "C"
    """,
    "aliases": f"""
        SELECT a.id, a.page_id, a.alias, a.source
        FROM wiki_page_aliases a {_SCOPE_PAGES.format(page_column="a.page_id")}
        ORDER BY p.type COLLATE "C", p.slug COLLATE "C", a.alias COLLATE "C"
    """,
    "links": f"""
        SELECT l.id, l.from_page_id, l.to_page_id, l.kind, l.context
        FROM wiki_page_links l {_SCOPE_PAGES.format(page_column="l.from_page_id")}
        ORDER BY l.from_page_id, l.to_page_id, l.kind COLLATE "C"
    """,
    "mentions": """
        SELECT id, alias, alias_normalized, mention_count, suggested_type, status, promoted_page_id,
               CAST(sample_contexts AS text) AS sample_contexts
        FROM wiki_unresolved_mentions WHERE tenant_id = :t AND owner_id = :o
        ORDER BY alias_normalized COLLATE "C", status COLLATE "C"
    """,
    "sources": """
        SELECT ss.id, ss.section_id, ss.source_kind, ss.source_ref
        FROM wiki_section_sources ss JOIN wiki_page_sections s ON s.id = ss.section_id
        JOIN wiki_pages p ON p.id = s.page_id WHERE p.tenant_id = :t AND p.owner_id = :o
        ORDER BY ss.section_id, ss.source_kind COLLATE "C", ss.source_ref COLLATE "C"
    """,
    "cursor": """
        SELECT last_record_id FROM wiki_compile_cursors WHERE tenant_id = :t AND owner_id = :o
    """,
}

# The UTC days on which retain stamped the scope's memories, and the UTC days the memories say
# they happened on (for a memory with an occurred_at).
_RETAIN_DAYS = """
    SELECT DISTINCT to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') FROM memory_units
    WHERE tenant_id = :t AND owner_id = :o
"""
_OCCURRED_DAYS = """
    SELECT DISTINCT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') FROM memory_units
    WHERE tenant_id = :t AND owner_id = :o AND created_at <> updated_at
"""


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dt.datetime):
        return (value.astimezone(dt.UTC) if value.tzinfo else value).isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    raise TypeError(f"no JSON form for {type(value).__name__}: {value!r}")


def _row(mapping: Any) -> dict[str, Any]:
    row = {}
    for column, value in mapping.items():
        if column in _JSON_COLUMNS and isinstance(value, str):
            value = json.loads(value)
        row[column] = _jsonable(value)
    if "sample_contexts" in row:
        # seen_at is the apply transaction's now(); quote and source_ref (and any other key) stay.
        row["sample_contexts"] = [
            {key: item for key, item in context.items() if key != "seen_at"} if isinstance(context, dict)
            else context
            for context in row["sample_contexts"]
        ]
    return row


def _replace_strings(value: Any, pattern: re.Pattern[str]) -> Any:
    if isinstance(value, str):
        return pattern.sub(RETAIN_DATE_PLACEHOLDER, value)
    if isinstance(value, list):
        return [_replace_strings(item, pattern) for item in value]
    if isinstance(value, dict):
        return {key: _replace_strings(item, pattern) for key, item in value.items()}
    return value


async def dump_scope(engine, tenant: str, owner: str) -> dict[str, list[dict[str, Any]]]:
    """{table: [row, ...]} for the scope (see the module docstring for what is in and out).

    Two dumps are equal exactly when the two compiles wrote the same wiki.
    """
    params = {"t": tenant, "o": owner}
    dump: dict[str, list[dict[str, Any]]] = {}
    async with engine.connect() as conn:
        for table, query in TABLE_QUERIES.items():
            result = await conn.execute(text(query), params)
            dump[table] = [_row(row) for row in result.mappings()]
        retain_days = sorted(day for (day,) in await conn.execute(text(_RETAIN_DAYS), params))
        occurred_days = {day for (day,) in await conn.execute(text(_OCCURRED_DAYS), params)}
    if not retain_days:
        return dump
    clash = sorted(occurred_days.intersection(retain_days))
    if clash:
        # The placeholder would also hide a date the data itself carries: refuse rather than guess.
        raise RuntimeError(f"memories of {tenant}/{owner} were retained on a day they also say they happened "
                           f"on ({', '.join(clash)}); the retain date cannot be normalised unambiguously")
    pattern = re.compile(r"(?<!\d)(?:" + "|".join(re.escape(day) for day in retain_days) + r")(?!\d)")
    return {table: _replace_strings(rows, pattern) for table, rows in dump.items()}


def encode(dump: dict[str, list[dict[str, Any]]]) -> bytes:
    """The fixture's byte form: sorted keys, indented, UTF-8, ending with a newline."""
    return (json.dumps(dump, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode()


def first_difference(expected: dict[str, list[dict[str, Any]]], actual: dict[str, list[dict[str, Any]]]) -> str | None:
    """None when equal; otherwise a message naming the first table and row that differ."""
    if sorted(expected) != sorted(actual):
        return f"tables differ: expected {sorted(expected)}, got {sorted(actual)}"
    for table in expected:
        want, got = expected[table], actual[table]
        if want == got:
            continue
        header = f"table {table!r}: expected {len(want)} rows, got {len(got)}"
        want_ids, got_ids = {row.get("id") for row in want}, {row.get("id") for row in got}
        for index, (w, g) in enumerate(zip(want, got, strict=False)):
            if w != g and w.get("id") != g.get("id"):
                # Rows are ordered by a unique key: name the row that is missing or extra.
                if w.get("id") not in got_ids:
                    return f"{header}; first difference at row {index}: missing row {_short(w)}"
                if g.get("id") not in want_ids:
                    return f"{header}; first difference at row {index}: unexpected row {_short(g)}"
            if w != g:
                columns = sorted(key for key in set(w) | set(g) if w.get(key) != g.get(key))
                details = "\n".join(f"  {key}: expected {_short(w.get(key))}\n  {' ' * len(key)}  got      "
                                    f"{_short(g.get(key))}" for key in columns)
                return (f"{header}; first difference at row {index} (id {w.get('id', '-')} vs "
                        f"{g.get('id', '-')}), columns {columns}:\n{details}")
        index = min(len(want), len(got))
        extra = want[index] if len(want) > len(got) else got[index]
        which = "missing" if len(want) > len(got) else "unexpected"
        return f"{header}; first {which} row at {index}: {_short(extra)}"
    return None


def _short(value: Any, limit: int = 600) -> str:
    shown = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return shown if len(shown) <= limit else shown[:limit] + f"... ({len(shown)} chars)"
