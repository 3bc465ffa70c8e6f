"""The compile through the real anthropic SDK, over loopback HTTP, to the Claude simulator, for
WIKI_LLM=anthropic and WIKI_LLM=bedrock.

The worker is built by the composition root from settings, as in production; the SDK finds the
simulator through ANTHROPIC_BASE_URL / ANTHROPIC_BEDROCK_BASE_URL. Temporal and Postgres are real.
The simulator's brain answers as a careful model following the prompt would (claude_sim/brain.py),
read from the request alone; the wiki it leads to is checked for the properties the prompt's
contract promises (pages for the names the memories repeat, every line's memories its own, no
handle the prompt never showed); tests that need a particular plan script the simulator's next answer. Every test also checks that the ledger's cost
is exactly what the simulator reported, priced: every billed call, failed attempts included.
"""
from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError

from app.worker import build_model_client
from claude_sim import ClaudeSimulator
from domain.memory import MemoryIn
from domain.pricing import TokenUsage, cost_usd
from runtime.settings import ConfigError, Settings
from runtime.temporal_client import signal_compile
from store.memories import store_memories
from tests.compile.helpers import compile_scope, ledger, running_worker, sample_memories, wiki_snapshot
from tests.compile.helpers import test_settings as settings_for
from tests.conftest import SIM_ACCESS_KEY
from tests.sim_helpers import leaf_plan, shown
from workflows.policies import MODEL_CALL_RETRY

TENANT, OWNER = "t-model", "alice"
API_KEY = "sim-anthropic-key"
ACCESS_KEY = SIM_ACCESS_KEY

PROVIDERS = ("anthropic", "bedrock")
STALL_SECONDS = 0.5


def provider_settings(provider: str, **env: Any) -> Settings:
    values: dict[str, Any] = {"WIKI_LLM": provider, "WIKI_LLM_STALL_TIMEOUT_SECONDS": STALL_SECONDS,
                              "WIKI_AGGREGATION_PASS_ENABLED": False}
    # The Anthropic key is set for Bedrock too: it must never reach Bedrock.
    values["ANTHROPIC_API_KEY"] = API_KEY
    if provider == "bedrock":
        values["AWS_REGION"] = "us-east-1"
    return settings_for(**(values | env))


@asynccontextmanager
async def model_worker(client: Client, engine: AsyncEngine, provider: str, **env: Any) -> AsyncIterator[Settings]:
    settings = provider_settings(provider, **env)
    model_client = build_model_client(settings)
    try:
        async with running_worker(client, engine, settings, model_client=model_client):
            yield settings
    finally:
        await model_client.aclose()


def trip_text(day: int) -> str:
    return f"Day {day}: walked through Lisbon and ate grilled sardines at stall {day}."


def trip_texts(count: int) -> list[str]:
    """The texts of `retain_trip(engine, count)`, as a leaf prompt shows them (it shows no ids)."""
    return [trip_text(day) for day in range(1, count + 1)]


async def retain_trip(engine: AsyncEngine, count: int) -> list[str]:
    """`count` memories of a trip to Lisbon, in the order a compile reads them."""
    memories = [MemoryIn(content=trip_text(day),
                         occurred_at=f"2026-05-{day:02d}T09:00:00Z",
                         metadata={"entities": [{"name": "Lisbon", "type": "topic", "kind": "city"}]})
                for day in range(1, count + 1)]
    result = await store_memories(engine, TENANT, OWNER, memories)
    return [str(memory_id) for memory_id in result.inserted]


async def only_run(engine: AsyncEngine) -> dict[str, Any]:
    rows = await ledger(engine, TENANT, OWNER)
    assert len(rows) == 1, rows
    return rows[0]


def billed(sim: ClaudeSimulator) -> float:
    """What the simulator's reported usage costs at list prices: every reply that reported usage."""
    return sum(cost_usd(model, TokenUsage(**usage.as_dict())) for model, usage in sim.reported_usage())


async def assert_ledger_is_what_was_billed(engine: AsyncEngine, sim: ClaudeSimulator) -> None:
    """Every run of the compile together (a cap may continue it as new) cost what the simulator billed."""
    runs = await ledger(engine, TENANT, OWNER)
    reported = [usage for _, usage in sim.reported_usage()]
    leaf = [c.usage for c in sim.calls if c.usage is not None and c.kind != "aggregation"]
    aggregation = [c.usage for c in sim.calls if c.usage is not None and c.kind == "aggregation"]
    # The ledger keeps the aggregation pass's tokens apart (aggregation_*); its cost is in cost_usd.
    for key, total in (("input_tokens", sum(u.input_tokens for u in leaf)),
                       ("output_tokens", sum(u.output_tokens for u in leaf)),
                       ("cache_read_tokens", sum(u.cache_read_input_tokens for u in leaf)),
                       ("aggregation_input_tokens", sum(u.input_tokens + u.cache_read_input_tokens
                                                        for u in aggregation)),
                       ("aggregation_output_tokens", sum(u.output_tokens for u in aggregation))):
        assert sum(run["metrics"].get(key, 0) for run in runs) == total, key
    cost = sum(run["metrics"]["cost_usd"] for run in runs)
    assert cost == pytest.approx(billed(sim), abs=1e-6 * (1 + len(reported)))
    assert cost > 0


async def failed_compile(client: Client, settings: Settings) -> str:
    handle = await signal_compile(client, TENANT, OWNER, trigger="admin", settings=settings)
    with pytest.raises(WorkflowFailureError) as failed:
        await handle.result()
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "CompileFailed"
    assert "\n" not in cause.message
    return cause.message


async def cursor_record(engine: AsyncEngine) -> str | None:
    async with engine.connect() as conn:
        value = (await conn.execute(text(
            "SELECT last_record_id FROM wiki_compile_cursors WHERE tenant_id = :t AND owner_id = :o"
        ), {"t": TENANT, "o": OWNER})).scalar_one()
    return str(value) if value is not None else None


# ------------------------------------------------------------------ the real path keeps the contract


async def named_in(engine: AsyncEngine) -> dict[str, set[str]]:
    """Each entity name the scope's memories give in their metadata -> the memories naming it."""
    async with engine.connect() as conn:
        rows = (await conn.execute(text(
            "SELECT id::text AS id, e->>'name' AS name FROM memory_units m, "
            "jsonb_array_elements(coalesce(m.metadata->'entities', '[]'::jsonb)) e "
            "WHERE m.tenant_id = :t AND m.owner_id = :o"), {"t": TENANT, "o": OWNER})).all()
    out: dict[str, set[str]] = {}
    for row in rows:
        out.setdefault(row.name, set()).add(row.id)
    return out


async def page_names(engine: AsyncEngine) -> set[str]:
    async with engine.connect() as conn:
        rows = (await conn.execute(text(
            "SELECT lower(p.title) AS n FROM wiki_pages p WHERE p.tenant_id = :t AND p.owner_id = :o "
            "UNION SELECT a.alias FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id "
            "WHERE p.tenant_id = :t AND p.owner_id = :o"), {"t": TENANT, "o": OWNER})).all()
    return {row.n.lower() for row in rows}


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_the_wiki_keeps_the_prompts_contract_and_the_ledger_is_what_was_billed(
        client, engine, sim, provider) -> None:
    memories = sample_memories(90)
    await store_memories(engine, TENANT, OWNER, memories)
    async with model_worker(client, engine, provider, WIKI_RECORD_PAGE_SIZE=30) as settings:
        await compile_scope(client, settings, TENANT, OWNER)

    compiled = await wiki_snapshot(engine, TENANT, OWNER)
    ids = {str(row[0]) for row in (await store_ids(engine))}
    assert len(compiled["pages"]) > 5 and compiled["mentions"]
    # Provenance: every cited memory is one of the scope's, every section cites one, every fact claim
    # cites a memory of its own.
    assert {source[2] for source in compiled["sources"]} <= ids
    async with engine.connect() as conn:
        uncited = (await conn.execute(text(
            "SELECT count(*) FROM wiki_section_claims c JOIN wiki_page_sections s ON s.id = c.section_id "
            "JOIN wiki_pages p ON p.id = s.page_id WHERE p.tenant_id = :t AND c.kind = 'fact' AND NOT EXISTS "
            "(SELECT 1 FROM wiki_claim_sources cs WHERE cs.claim_id = c.id)"), {"t": TENANT})).scalar_one()
    assert uncited == 0
    # Pages for the names: every name the memories' metadata gives in three memories or more has a
    # page carrying it (its title or an alias).
    names = await page_names(engine)
    repeated = {name for name, seen in (await named_in(engine)).items() if len(seen) >= 3}
    missing = {name for name in repeated if name.lower() not in names}
    assert repeated and not missing, f"no page for {sorted(missing)}"
    runs = await ledger(engine, TENANT, OWNER)
    assert {run["status"] for run in runs} <= {"continued", "succeeded"}
    # No handle the prompt never showed, no link to a page that does not exist.
    assert sum(run["metrics"].get("dropped_invalid_ids", 0) for run in runs) == 0
    planner_calls = sim.of_kind("planner")
    assert len(planner_calls) == 3
    assert {c.status for c in sim.calls} == {200}
    if provider == "bedrock":
        assert {(c.platform, c.auth, c.identity) for c in sim.calls} == {("bedrock", "sigv4", ACCESS_KEY)}
        assert all(c.body["anthropic_version"] == "bedrock-2023-05-31" for c in sim.calls)
    else:
        assert {(c.platform, c.auth, c.identity) for c in sim.calls} == {("anthropic", "bearer", API_KEY)}
    # max_tokens sized to the batch; no cache breakpoint on Haiku 4.5, whose minimum the prefix misses.
    assert {c.max_tokens for c in planner_calls} == {1_024 + 30 * 320}
    assert all(c.breakpoints == 0 for c in sim.calls)
    await assert_ledger_is_what_was_billed(engine, sim)


async def store_ids(engine: AsyncEngine) -> list[tuple]:
    async with engine.connect() as conn:
        return list((await conn.execute(text(
            "SELECT id FROM memory_units WHERE tenant_id = :t AND owner_id = :o"), {"t": TENANT, "o": OWNER})).all())


async def test_the_aggregation_pass_goes_through_the_simulator_and_is_priced(client, engine, sim) -> None:
    await store_memories(engine, TENANT, OWNER, sample_memories(60))
    async with model_worker(client, engine, "anthropic", WIKI_AGGREGATION_PASS_ENABLED=True) as settings:
        await compile_scope(client, settings, TENANT, OWNER)

    runs = await ledger(engine, TENANT, OWNER)
    assert runs[-1]["status"] == "succeeded"
    assert sum(run["metrics"]["aggregation_planner_calls"] for run in runs) == len(sim.of_kind("aggregation")) > 0
    await assert_ledger_is_what_was_billed(engine, sim)


# ------------------------------------------------------------------ faults that are retried


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_throttling_waits_the_providers_delay_and_transient_failures_back_off(
        client, engine, sim, provider) -> None:
    ids = await retain_trip(engine, 4)
    retry_after = MODEL_CALL_RETRY.initial_interval.total_seconds() + 1
    sim.fail_next("rate_limit", "planner", retry_after=retry_after)
    sim.fail_next("model_error" if provider == "bedrock" else "overloaded", "planner")
    async with model_worker(client, engine, provider) as settings:
        await compile_scope(client, settings, TENANT, OWNER)

    first, second, third = sim.of_kind("planner")
    assert (first.status, second.status, third.status) == (429, 424 if provider == "bedrock" else 529, 200)
    if provider == "anthropic":  # Bedrock sends no retry-after: its throttling backs off like the rest
        assert second.at - first.at >= retry_after
    assert third.at - second.at >= MODEL_CALL_RETRY.initial_interval.total_seconds()
    run = await only_run(engine)
    assert run["status"] == "succeeded"
    assert await cursor_record(engine) == ids[-1]
    await assert_ledger_is_what_was_billed(engine, sim)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_hung_plan_call_is_retried_then_the_batch_is_split(client, engine, sim, provider) -> None:
    ids = await retain_trip(engine, 4)
    sim.fail_next("hang", "planner", times=2)
    async with model_worker(client, engine, provider) as settings:
        await compile_scope(client, settings, TENANT, OWNER)

    texts = trip_texts(4)
    assert [c.memory_texts for c in sim.of_kind("planner")] == [texts, texts, texts[:2], texts[2:]]
    metrics = (await only_run(engine))["metrics"]
    assert (metrics["interrupted_calls"], metrics["batch_splits"], metrics["records_read"]) == (2, 1, 4)
    assert await cursor_record(engine) == ids[-1]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_stalled_or_broken_stream_is_retried_and_its_tokens_are_counted(client, engine, sim, provider) -> None:
    ids = await retain_trip(engine, 4)
    sim.fail_next("stall", "planner")
    sim.fail_next("stream_error", "writer")

    def rewriting_plan(user: str) -> dict[str, Any]:
        # Updates that rewrite (not only add) go through the writer, whose stream this test breaks.
        plan = leaf_plan(user)
        for update in plan["updates"]:
            for section in update["sections"]:
                section["rewrite"] = True
        return plan

    for _ in range(4):
        sim.answer_next("planner", rewriting_plan)
    async with model_worker(client, engine, provider, WIKI_RECORD_PAGE_SIZE=2) as settings:
        await compile_scope(client, settings, TENANT, OWNER)

    run = await only_run(engine)
    assert run["status"] == "succeeded"
    assert run["metrics"]["interrupted_calls"] == 2
    assert [c.fault for c in sim.calls if c.fault] == ["stall", "stream_error"]
    await assert_ledger_is_what_was_billed(engine, sim)  # the cut-short calls' reported tokens included
    assert await cursor_record(engine) == ids[-1]


@pytest.mark.parametrize("fault", ["truncate", "malformed", "refusal"])
async def test_an_unusable_plan_splits_the_batch_and_is_still_priced(client, engine, sim, fault) -> None:
    await retain_trip(engine, 4)
    sim.fail_next(fault, "planner", times=1 if fault == "truncate" else 2)
    async with model_worker(client, engine, "anthropic") as settings:
        await compile_scope(client, settings, TENANT, OWNER)

    halves = [c.memory_texts for c in sim.of_kind("planner")][-2:]
    texts = trip_texts(4)
    assert halves == [texts[:2], texts[2:]]
    run = await only_run(engine)
    assert (run["status"], run["metrics"]["batch_splits"], run["metrics"]["skipped_memories"]) == ("succeeded", 1, [])
    await assert_ledger_is_what_was_billed(engine, sim)


async def test_a_truncated_aggregation_reply_is_recorded_and_priced(client, engine, sim) -> None:
    await store_memories(engine, TENANT, OWNER, sample_memories(40))
    sim.fail_next("truncate", "aggregation")
    async with model_worker(client, engine, "anthropic", WIKI_AGGREGATION_PASS_ENABLED=True) as settings:
        await compile_scope(client, settings, TENANT, OWNER)

    first = (await ledger(engine, TENANT, OWNER))[0]
    assert "cut off" in first["metrics"]["aggregation_error"]
    await assert_ledger_is_what_was_billed(engine, sim)


async def test_miscopied_handles_are_dropped_and_counted_never_written(client, engine, sim) -> None:
    ids = await retain_trip(engine, 4)
    sim.fail_next("miscopied_ids", "planner")
    async with model_worker(client, engine, "anthropic") as settings:
        await compile_scope(client, settings, TENANT, OWNER)

    run = await only_run(engine)
    assert run["status"] == "succeeded"
    assert run["metrics"]["dropped_invalid_ids"] > 0
    snapshot = await wiki_snapshot(engine, TENANT, OWNER)
    written = {source[2] for source in snapshot["sources"]}
    assert written <= set(ids)
    # Every handle of the plan was miscopied (m1 -> m0, ...): each reference is counted, none is cited;
    # a line citing only such handles is rejected by the gate (it cites no memory of the scope), or, a
    # derived line ("=count"), never written (nothing to derive it from) and counted.
    assert sim.of_kind("planner")[0].fault == "miscopied_ids"
    assert run["metrics"]["dropped_invalid_ids"] >= 3
    async with engine.connect() as conn:
        uncited = (await conn.execute(text(
            "SELECT count(*) FROM wiki_section_claims c WHERE c.kind = 'fact' AND NOT EXISTS "
            "(SELECT 1 FROM wiki_claim_sources cs WHERE cs.claim_id = c.id)"))).scalar_one()
    assert uncited == 0  # no fact is kept without a memory of its own


# ------------------------------------------------------------------ faults that fail in one sentence


@pytest.mark.parametrize(("provider", "setting", "expected"), [
    ("anthropic", {"ANTHROPIC_API_KEY": "sk-wrong"}, "ANTHROPIC_API_KEY"),
    ("anthropic", {"WIKI_MODEL_ID": "claude-haiku-9-9"}, "WIKI_MODEL_ID ('claude-haiku-9-9')"),
    ("bedrock", {"WIKI_MODEL_ID": "us.anthropic.claude-haiku-9-9-v1:0"}, "WIKI_MODEL_ID"),
    ("bedrock", {"AWS_BEARER_TOKEN_BEDROCK": "not-a-bedrock-key"}, "AWS_BEARER_TOKEN_BEDROCK"),
])
async def test_a_rejected_credential_or_model_fails_the_compile_in_one_sentence(
        client, engine, sim, provider, setting, expected) -> None:
    await retain_trip(engine, 4)
    async with model_worker(client, engine, provider, **setting) as settings:
        message = await failed_compile(client, settings)

    assert expected in message
    assert len(sim.calls) == 1  # rejected for good: neither Temporal nor the SDK retried it
    run = await only_run(engine)
    assert (run["status"], run["error"]) == ("failed", message)
    assert await cursor_record(engine) is None


async def test_a_spend_limit_fails_the_compile_at_once_in_one_sentence(client, engine, sim) -> None:
    await retain_trip(engine, 4)
    sim.fail_next("spend_limit", "planner")
    async with model_worker(client, engine, "anthropic") as settings:
        message = await failed_compile(client, settings)

    assert "spend limit" in message
    assert len(sim.calls) == 1


def test_bedrock_without_a_region_or_credentials_stops_start_up_naming_what_is_missing(
        monkeypatch, tmp_path) -> None:
    with pytest.raises(ValueError, match="AWS_REGION"):
        settings_for(WIKI_LLM="bedrock")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_SESSION_TOKEN",
                 "AWS_BEARER_TOKEN_BEDROCK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(ConfigError, match="no AWS credentials.*AWS_BEARER_TOKEN_BEDROCK"):
        build_model_client(settings_for(WIKI_LLM="bedrock", AWS_REGION="eu-west-1"))


def test_a_model_id_of_the_wrong_provider_stops_start_up_naming_the_setting() -> None:
    with pytest.raises(ValueError, match="WIKI_MODEL_ID: 'claude-haiku-4-5' is not a Bedrock model id"):
        settings_for(WIKI_LLM="bedrock", AWS_REGION="us-east-1", WIKI_MODEL_ID="claude-haiku-4-5")
    assert settings_for(WIKI_LLM="bedrock", AWS_REGION="eu-central-1").model_id == (
        "eu.anthropic.claude-haiku-4-5-20251001-v1:0")


# ------------------------------------------------------------------ what the product does with any plan


async def test_ids_the_scope_does_not_own_are_dropped_and_counted_never_written(client, engine, sim) -> None:
    async with model_worker(client, engine, "anthropic") as settings:
        other_ids = await store_memories(engine, "other", OWNER, [MemoryIn(content="Lisbon again.")])
        foreign_memory = str(other_ids.inserted[0])
        ids = await retain_trip(engine, 4)

        def hostile_plan(user: str) -> dict[str, Any]:
            refs = [f"m{n}" for n in range(1, len(shown(user).memories) + 1)]
            hijack = [{"slug": "overview", "proposed_body_md": "Hijacked.", "source_refs": refs}]
            return {"pageUpdates": [{"pageId": "814e6b70", "sections": hijack}, {"pageId": "p1", "sections": hijack},
                                    {"pageId": str(uuid.uuid4()), "sections": hijack}],
                    "newPages": [{"type": "entity", "slug": "porto", "title": "Porto", "sections": [
                        {"slug": "overview", "heading": "Overview", "body_md": "Walked through [[Lisbon]].",
                         "source_refs": [*refs, foreign_memory]}]}],
                    "unresolvedMentions": [], "promotions": [],
                    "pageLinks": [{"fromType": "place", "fromSlug": "porto", "toType": "entity", "toSlug": "porto"},
                                  {"fromType": "entity", "fromSlug": "porto", "toType": "entity",
                                   "toSlug": "atlantis"}]}

        sim.answer_next("planner", hostile_plan)
        await compile_scope(client, settings, TENANT, OWNER)

    snapshot = await wiki_snapshot(engine, TENANT, OWNER)
    assert [page[2] for page in snapshot["pages"]] == ["porto"]
    assert [section[4] for section in snapshot["sections"]] == ["Walked through Lisbon."]  # no wikilink survives
    assert {source[2] for source in snapshot["sources"]} == set(ids)  # the other scope's memory is not cited
    run = await only_run(engine)
    assert run["status"] == "succeeded"
    # At least the two unknown page ids and the other scope's memory (links dropped are counted too).
    assert run["metrics"]["dropped_invalid_ids"] >= 3
