"""Scenario 7: bad input at every boundary — CLI arguments, retain files, configuration.

Every case runs the real command in a process of its own (`wiki ...` or `python worker.py`)
against the suite's Postgres and Temporal. A rejected input must end with the documented exit
code (2 bad input, 1 a service it cannot reach), say what is wrong on stderr, never show a
traceback, and store nothing: the row counts of every table are the same before and after all
the rejected cases. Then hostile but valid memories (SQL and markdown injection, odd Unicode) are
retained and compiled: they must be stored verbatim, and compile into bodies without wikilinks,
with every table intact and no row outside their scope. One of them reuses the id of another
tenant's memory: memory ids are scoped, so it is stored as a new memory of its own scope, and the
other tenant's memory is untouched (retain must not reveal that the id exists elsewhere).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from chaos.measure import cross_scope_rows, isolation_breaches, ledger_rows, pending_memories
from chaos.outcome import Outcome
from chaos.processes import PROJECT_DIR, clean_environment
from chaos.suite import TENANT, Suite
from domain.memory import MAX_CONTENT_BYTES, MAX_METADATA_BYTES
from runtime.devservices import free_port

CASE_TIMEOUT_SECONDS = 120
PARALLEL_CASES = 3
TABLES = ("memory_units", "wiki_pages", "wiki_page_sections", "wiki_page_aliases", "wiki_page_links",
          "wiki_unresolved_mentions", "wiki_section_sources", "wiki_compile_cursors", "wiki_compile_jobs",
          "wiki_compile_plans")
HOSTILE = ("hostile", "mallory")
WIKI = str(Path(sys.executable).parent / "wiki")


@dataclass
class Case:
    boundary: str
    label: str
    argv: list[str]
    exit_code: int
    says: str  # a fragment the error output must contain (case-insensitive)
    file: bytes | None = None  # written to a file whose path replaces "{file}" in argv
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class CaseResult:
    case: Case
    exit_code: int | None
    stderr: str

    @property
    def clear(self) -> bool:
        return (self.exit_code == self.case.exit_code and self.case.says.lower() in self.stderr.lower()
                and "Traceback" not in self.stderr)

    def describe(self) -> str:
        first = next((line for line in self.stderr.splitlines() if line.strip()), "(nothing on stderr)")
        return f"{self.case.boundary} / {self.case.label}: exit {self.exit_code}, {first.strip()[:160]}"


def _lines(*rows: object) -> bytes:
    return "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows).encode()


def _good(n: int) -> dict:
    return {"content": f"Eric had tea at Kinda Tea #{n}.", "metadata": {"tags": ["tea"]}}


def _retain(*extra: str) -> list[str]:
    return [WIKI, "retain", "{file}", "--tenant", "badinput", "--owner", "alice", "--no-compile", *extra]


def _rejected_cases() -> list[Case]:
    big = "x" * (MAX_CONTENT_BYTES + 1)
    same_id = str(uuid.uuid4())
    status = [WIKI, "status", "--tenant", "badinput", "--owner", "alice"]
    cases = [
        # -------------------------------------------------------------------- CLI arguments
        Case("CLI", "tenant with a space", [WIKI, "retain", "{file}", "--tenant", "a b", "--owner", "o"], 2,
             "tenant must be", file=_lines(_good(1))),
        Case("CLI", "empty tenant", [WIKI, "retain", "{file}", "--tenant", "", "--owner", "o"], 2, "tenant must be",
             file=_lines(_good(1))),
        Case("CLI", "SQL in the tenant", [WIKI, "retain", "{file}", "--tenant", "x'; DROP TABLE memory_units; --",
                                           "--owner", "o"], 2, "tenant must be", file=_lines(_good(1))),
        Case("CLI", "200-character owner", [WIKI, "status", "--tenant", "t", "--owner", "o" * 200], 2,
             "owner must be"),
        Case("CLI", "path in the owner", [WIKI, "compile", "--tenant", "t", "--owner", "../../etc/passwd"], 2,
             "owner must be"),
        Case("CLI", "missing option", [WIKI, "retain", "{file}", "--tenant", "t"], 2, "missing option",
             file=_lines(_good(1))),
        Case("CLI", "unknown command", [WIKI, "frobnicate"], 2, "no such command"),
        Case("CLI", "negative sample size", [WIKI, "sample", "--memories", "-5"], 2, "Invalid value for '--memories'"),
        Case("CLI", "file that does not exist", [WIKI, "retain", "/nonexistent/memories.jsonl", "--tenant", "t",
                                                 "--owner", "o"], 2, "cannot read"),
        Case("CLI", "a directory as the file", [WIKI, "retain", "/tmp", "--tenant", "t", "--owner", "o"], 2,
             "cannot read"),
        Case("CLI", "binary file", _retain(), 2, "cannot read", file=b"\xff\xfe\x00\x81 not utf-8"),
        # -------------------------------------------------------------------- retain files
        Case("retain file", "broken JSON among good lines", _retain(), 2, "line 3: malformed JSON",
             file=_lines(_good(1), _good(2), '{"content": "unterminated', _good(4))),
        Case("retain file", "a JSON array, not an object", _retain(), 2, "must be a JSON object",
             file=_lines(_good(1), [1, 2, 3])),
        Case("retain file", "content is a number", _retain(), 2, "content", file=_lines({"content": 42})),
        Case("retain file", "metadata is a list", _retain(), 2, "metadata must be a JSON object",
             file=_lines({"content": "ok", "metadata": ["a"]})),
        Case("retain file", "occurred_at is not a time", _retain(), 2, "occurred_at",
             file=_lines({"content": "ok", "occurred_at": "yesterday-ish"})),
        Case("retain file", "id is not a UUID", _retain(), 2, "id", file=_lines({"id": "42; DROP", "content": "ok"})),
        Case("retain file", "unknown field (a tenant smuggled in)", _retain(), 2, "extra",
             file=_lines({"content": "ok", "tenant_id": "victim"})),
        Case("retain file", "oversized content (32 KiB + 1)", _retain(), 2, "32 KiB", file=_lines({"content": big})),
        Case("retain file", "oversized metadata", _retain(), 2, "64 KiB",
             file=_lines({"content": "ok", "metadata": {"blob": "y" * (MAX_METADATA_BYTES + 1)}})),
        Case("retain file", "NUL in content", _retain(), 2, "control characters",
             file=_lines({"content": "bad\u0000byte"})),
        Case("retain file", "BEL in content", _retain(), 2, "control characters",
             file=_lines({"content": "ring \u0007 ring"})),
        Case("retain file", "NUL in metadata", _retain(), 2, "NUL", file=_lines({"content": "ok", "metadata": {"k": "\u0000"}})),
        Case("retain file", "blank content", _retain(), 2, "must not be empty", file=_lines({"content": "   \n\t"})),
        Case("retain file", "one id twice with different content", _retain(), 2, "appears twice",
             file=_lines({"id": same_id, "content": "first"}, {"id": same_id, "content": "second"})),
        Case("retain file", "metadata nested 5,000 deep", _retain(), 2, "line 2: metadata nests more than",
             file=_lines(_good(1), '{"content": "deep", "metadata": ' + "[" * 5000 + "]" * 5000 + "}")),
        Case("retain file", "occurred_at in year 10000 once in UTC", _retain(), 2, "line 1: occurred_at: 9999",
             file=_lines({"content": "ok", "occurred_at": "9999-12-31T23:59:59-05:00"}, _good(2))),
        Case("retain file", "a number JSON cannot hold (1e999)", _retain(), 2, "out of range",
             file=_lines({"content": "ok", "metadata": {"n": 1}}, '{"content": "ok", "metadata": {"n": 1e999}}')),
        Case("retain file", "NaN in metadata", _retain(), 2, "NaN is not a JSON number",
             file=_lines('{"content": "ok", "metadata": {"n": NaN}}')),
        Case("retain file", "a 5,000-digit number", _retain(), 2, "5000 digits",
             file=_lines('{"content": "ok", "metadata": {"n": ' + "9" * 5000 + "}}")),
        Case("retain file", "500 good lines, the last one bad", _retain(), 2, "line 501",
             file=_lines(*[_good(n) for n in range(500)], {"content": ""})),
        # -------------------------------------------------------------------- configuration
        Case("configuration", "unknown WIKI_LLM", status, 2, "WIKI_LLM", env={"WIKI_LLM": "gpt-9"}),
        Case("configuration", "WIKI_RECORD_PAGE_SIZE=0", status, 2, "WIKI_RECORD_PAGE_SIZE",
             env={"WIKI_RECORD_PAGE_SIZE": "0"}),
        Case("configuration", "negative debounce", status, 2, "WIKI_DEBOUNCE_SECONDS",
             env={"WIKI_DEBOUNCE_SECONDS": "-1"}),
        Case("configuration", "not a number", status, 2, "WIKI_MAX_NEW_PAGES_PER_RUN",
             env={"WIKI_MAX_NEW_PAGES_PER_RUN": "many"}),
        Case("configuration", "anthropic without a key", status, 2, "ANTHROPIC_API_KEY",
             env={"WIKI_LLM": "anthropic"}),
        Case("configuration", "rate limit without its queue", status, 2, "WIKI_LLM_TASK_QUEUE",
             env={"WIKI_LLM_MAX_PER_SECOND": "5"}),
        Case("configuration", "DATABASE_URL of another database kind", status, 2, "DATABASE_URL",
             env={"DATABASE_URL": "mysql://root@localhost/wiki"}),
        Case("configuration", "DATABASE_URL nobody listens on", _retain(), 1, "cannot connect to the database",
             file=_lines(_good(1)), env={"DATABASE_URL": f"postgresql://postgres@127.0.0.1:{free_port()}/wiki"}),
        Case("configuration", "TEMPORAL_ADDRESS nobody listens on (retain with compile)",
             [WIKI, "retain", "{file}", "--tenant", "badinput", "--owner", "alice"], 1, "cannot reach Temporal",
             file=_lines(_good(1)), env={"TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}"}),
        Case("configuration", "`python worker.py` with a bad setting", [sys.executable, "worker.py"], 2,
             "WIKI_SECTION_WRITER_CONCURRENCY", env={"WIKI_SECTION_WRITER_CONCURRENCY": "0"}),
        Case("configuration", "`python worker.py` without a reachable Temporal", [sys.executable, "worker.py"], 1,
             "cannot reach Temporal", env={"TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}"}),
    ]
    return cases


def _hostile_memories(existing_memory_id: str) -> bytes:
    bobby = {"name": "Bobby'); DROP TABLE memory_units;--", "type": "entity", "kind": "person"}
    injected = {"name": "[[Injected Page]]", "type": "entity", "kind": "restaurant"}
    bold = {"name": "**Bold Café** <img src=x onerror=alert(1)>", "type": "entity", "kind": "cafe"}
    return _lines(
        {"content": "Robert'); DROP TABLE wiki_pages; -- had brisket with Eric.", "metadata": {"entities": [bobby]}},
        {"content": "Eric met Robert'); DROP TABLE wiki_pages; -- again.", "metadata": {"entities": [bobby]}},
        {"content": "Dinner at [[Injected Page]] with [[Victim Secret Garden|a secret]] <script>alert(1)</script> "
                    "![x](javascript:alert(1))\n# Not a heading", "metadata": {"entities": [injected, bold]}},
        {"content": "Back at [[Injected Page]]; **Bold Café** next door. ]] [[ [[|]]",
         "metadata": {"entities": [injected, bold]}},
        {"content": "Unicode: Bogotá café — naïve ✓ 😀 \u2028 a line separator and \u202e reversed text"},
        {"content": "Format strings %s %d {0} ${jndi:ldap://x} and a literal backslash-zero \\x00"},
        {"id": existing_memory_id, "content": "Eric's note, under the id of another tenant's memory."},
    )


async def _counts(engine: AsyncEngine) -> dict[str, int]:
    async with engine.connect() as conn:
        return {table: (await conn.execute(text(f"SELECT count(*) FROM {table}"))).scalar_one() for table in TABLES}


async def _run_case(case: Case, env: dict[str, str], workdir: Path, gate: asyncio.Semaphore) -> CaseResult:
    argv = list(case.argv)
    if case.file is not None:
        path = workdir / f"{uuid.uuid4().hex}.jsonl"
        path.write_bytes(case.file)
        argv = [str(path) if part == "{file}" else part for part in argv]
    async with gate:
        process = await asyncio.create_subprocess_exec(
            *argv, cwd=PROJECT_DIR, env=clean_environment({**env, **case.env}), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            _, stderr = await asyncio.wait_for(process.communicate(), CASE_TIMEOUT_SECONDS)
        except TimeoutError:
            process.kill()
            await process.wait()
            return CaseResult(case, None, f"timed out after {CASE_TIMEOUT_SECONDS}s")
    return CaseResult(case, process.returncode, stderr.decode(errors="replace"))


async def _wiki_text(engine: AsyncEngine, tenant: str, owner: str) -> str:
    async with engine.connect() as conn:
        pages = (await conn.execute(text(
            "SELECT coalesce(body_md, '') || coalesce(summary, '') FROM wiki_pages WHERE tenant_id = :t AND owner_id = :o"),
            {"t": tenant, "o": owner})).scalars().all()
        sections = (await conn.execute(text("""
            SELECT s.body_md FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id
            WHERE p.tenant_id = :t AND p.owner_id = :o"""), {"t": tenant, "o": owner})).scalars().all()
    return "\n".join([*pages, *sections])


async def run(suite: Suite) -> Outcome:
    """Scenario 7: bad input at every boundary."""
    outcome = Outcome(7, "Bad input at every boundary: CLI arguments, retain files, configuration")
    started = time.monotonic()
    workdir = suite.root / "bad-input"
    workdir.mkdir(parents=True, exist_ok=True)
    async with suite.database("bad-input") as (url, engine):
        settings = suite.settings()
        # The CLI compiles hostile memories at once (no debounce window).
        env = {**suite.worker_env(settings, url), "WIKI_DEBOUNCE_SECONDS": "0"}
        async with engine.connect() as conn:
            existing = (await conn.execute(text(
                "SELECT id, content FROM memory_units WHERE tenant_id = :t ORDER BY id LIMIT 1"), {"t": TENANT})).one()
        cases = _rejected_cases()
        before = await _counts(engine)
        gate = asyncio.Semaphore(PARALLEL_CASES)
        results = await asyncio.gather(*(_run_case(case, env, workdir, gate) for case in cases))
        after = await _counts(engine)
        hostile_case = Case("hostile content", "SQL and markdown injection, odd Unicode (valid)",
                            [WIKI, "retain", "{file}", "--tenant", HOSTILE[0], "--owner", HOSTILE[1]], 0, "",
                            file=_hostile_memories(str(existing.id)))
        with suite.fleet("bad-input", settings, url) as fleet:
            fleet.product_worker()
            hostile = await _run_case(hostile_case, env, workdir, gate)
            if hostile.exit_code == 0:
                await suite.wait_for_compile(*HOSTILE)
        stored = await _stored_contents(engine)
        wiki_text = await _wiki_text(engine, *HOSTILE)
        hostile_ledger = await ledger_rows(engine, *HOSTILE)
        left = await pending_memories(engine, *HOSTILE)
        intact = await _counts(engine)
        breaches = await cross_scope_rows(engine)
        async with engine.connect() as conn:
            owners_copy = (await conn.execute(text("SELECT content FROM memory_units WHERE tenant_id = :t AND id = :i"),
                                              {"t": TENANT, "i": existing.id})).scalars().all()
    unclear = [result for result in results if not result.clear]
    changed = {table: (before[table], after[table]) for table in TABLES if before[table] != after[table]}
    expected_contents = [json.loads(line)["content"]
                         for line in _hostile_memories(str(existing.id)).decode().splitlines()]
    verbatim = sorted(expected_contents) == sorted(stored)
    by_boundary: dict[str, int] = {}
    for case in cases:
        by_boundary[case.boundary] = by_boundary.get(case.boundary, 0) + 1
    outcome.runs = len(cases) + 1
    outcome.injected = (", ".join(f"{count} {boundary}" for boundary, count in by_boundary.items())
                        + f" cases rejected; {len(expected_contents)} hostile but valid memories retained and "
                        "compiled, one under another tenant's memory id")
    outcome.identical = "n/a"
    # Rows of the memory store the whole scenario removed, and rows the rejected input added.
    outcome.rows_lost = max(0, before["memory_units"] + len(expected_contents) - intact["memory_units"])
    outcome.rows_duplicated = sum(max(0, after[table] - before[table]) for table in TABLES)
    for result in results:
        outcome.note(("ok: " if result.clear else "UNCLEAR: ") + result.describe())
    outcome.note(f"hostile memories: exit {hostile.exit_code}, stored verbatim: {verbatim}, compiled "
                 f"({', '.join(row['status'] for row in hostile_ledger) or 'no run'}), {left} left uncompiled, "
                 f"wikilinks left in bodies: {wiki_text.count('[[')}; the other tenant's memory under the reused "
                 f"id: {'unchanged' if owners_copy == [existing.content] else 'CHANGED'}")
    passed = [
        outcome.check(not unclear, f"{len(unclear)} rejections without a clear error: "
                                   + "; ".join(result.describe() for result in unclear)),
        outcome.check(not changed, f"rejected input changed rows: {changed}"),
        outcome.check(hostile.exit_code == 0, f"the hostile but valid file was rejected: {hostile.describe()}"),
        outcome.check(verbatim, "hostile memories were not stored verbatim"),
        outcome.check(bool(hostile_ledger) and hostile_ledger[-1]["status"] == "succeeded" and left == 0,
                      "the hostile memories were not compiled"),
        outcome.check("[[" not in wiki_text, "wikilinks survived into page bodies"),
        outcome.check(intact["memory_units"] == before["memory_units"] + len(expected_contents),
                      "memory rows other than the hostile ones changed"),
        outcome.check(isolation_breaches(breaches) == 0, f"rows cross scopes: {breaches}"),
        outcome.check(owners_copy == [existing.content], "the other tenant's memory under the reused id changed"),
    ]
    return outcome.conclude(passed, started,
                            f"all {len(cases)} rejected with a clear message and the right exit code, nothing stored; "
                            "hostile content stored verbatim and compiled safely")


async def _stored_contents(engine: AsyncEngine) -> list[str]:
    async with engine.connect() as conn:
        return sorted((await conn.execute(text(
            "SELECT content FROM memory_units WHERE tenant_id = :t AND owner_id = :o"),
            {"t": HOSTILE[0], "o": HOSTILE[1]})).scalars().all())

