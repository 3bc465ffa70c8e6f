"""The compile through the real anthropic SDK, over loopback HTTP, to the Claude simulator, for
WIKI_LLM=anthropic and WIKI_LLM=bedrock.

The worker is built by the composition root from settings, as in production; the SDK finds the
simulator through ANTHROPIC_BASE_URL / ANTHROPIC_BEDROCK_BASE_URL. Temporal and Postgres are real.
The simulator's brain answers as the scripted planner would (claude_sim/brain.py), so the wiki it
leads to can be compared with a WIKI_LLM=scripted compile of the same memories; tests that need a
particular plan script the simulator's next answer. Every test also checks that the ledger's cost
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
from claude_sim.brain import leaf_plan, parse_leaf_prompt
from domain.memory import MemoryIn
from domain.pricing import TokenUsage, cost_usd
from runtime.settings import ConfigError, Settings
from runtime.temporal_client import signal_compile
from store.memories import store_memories
from tests.compile.helpers import compile_scope, ledger, running_worker, sample_memories, wiki_snapshot
from tests.compile.helpers import test_settings as settings_for
from tests.conftest import SIM_ACCESS_KEY
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


async def held_sightings_of_promoted_mentions(engine: AsyncEngine) -> set[str]:
    async with engine.connect() as conn:
        rows = await conn.execute(text(
            "SELECT c->>'source_ref' FROM wiki_unresolved_mentions m, jsonb_array_elements(m.sample_contexts) c "
            "WHERE m.tenant_id = :t AND m.owner_id = :o AND m.status = 'promoted'"), {"t": TENANT, "o": OWNER})
        return {row[0] for row in rows if row[0]}


async def cursor_record(engine: AsyncEngine) -> str | None:
    async with engine.connect() as conn:
        value = (await conn.execute(text(
            "SELECT last_record_id FROM wiki_compile_cursors WHERE tenant_id = :t AND owner_id = :o"
        ), {"t": TENANT, "o": OWNER})).scalar_one()
    return str(value) if value is not None else None


# ------------------------------------------------------------------ the real path writes the same wiki


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_the_wiki_equals_the_scripted_runs_and_the_ledger_is_what_was_billed(
        client, engine, second_engine, sim, provider) -> None:
    memories = sample_memories(90)
    for database in (engine, second_engine):
        await store_memories(database, TENANT, OWNER, memories)
    scripted = settings_for(WIKI_AGGREGATION_PASS_ENABLED=False, WIKI_RECORD_PAGE_SIZE=30)
    async with running_worker(client, engine, scripted):
        await compile_scope(client, scripted, TENANT, OWNER)
    async with model_worker(client, second_engine, provider, WIKI_RECORD_PAGE_SIZE=30) as settings:
        await compile_scope(client, settings, TENANT, OWNER)

    expected, compiled = await wiki_snapshot(engine, TENANT, OWNER), await wiki_snapshot(second_engine, TENANT, OWNER)
    assert len(expected["pages"]) > 5 and expected["sources"] and expected["mentions"]
    # The cursor's timestamp is each database's retain time; the record it points at must match.
    assert [row[1] for row in compiled.pop("cursor")] == [row[1] for row in expected.pop("cursor")]
    # Section bodies are the writers' and the two writers differ by design: the scripted writer
    # rebuilds a section from every memory it cites (counts, date span, latest lines), the model path's
    # appends new lines in code and has the writer edit the stored body, condensing past its budget
    # (planners/section_edits.py). So bodies (and the page markdown made of them) are compared only
    # where they are not the writers'; which sections exist, their headings, positions and every
    # citation (`sources`, compared with the rest) must be the same.
    body_differs = [o[4] != t[4] for o, t in zip(compiled["sections"], expected["sections"], strict=True)]
    for ours, theirs in zip(compiled["sections"], expected["sections"], strict=True):
        assert ours[:4] == theirs[:4] and ours[5] == theirs[5] and ours[4].strip()
    compiled["sections"] = [(*o[:4], None, o[5]) for o in compiled["sections"]]
    expected["sections"] = [(*t[:4], None, t[5]) for t in expected["sections"]]
    compiled["pages"] = [(*o[:5], None, *o[6:]) for o in compiled["pages"]]
    expected["pages"] = [(*t[:5], None, *t[6:]) for t in expected["pages"]]
    condensed = sum(1 for o in body_differs if o)
    missing = set(expected["sources"]) - set(compiled["sources"])
    extra = set(compiled["sources"]) - set(expected["sources"])
    assert not extra, f"the model path cites {len(extra)} memories the scripted run does not"
    # The one citation the simulator's brain cannot repeat: the scripted planner writes a promoted page
    # from the records its mention held, which the prompt shows only as the sightings' handles and
    # quotes, so the brain (the scripted planner on what the prompt shows) cites fewer of them. Any
    # other missing citation fails.
    held = await held_sightings_of_promoted_mentions(engine)
    assert {ref for _, _, ref in missing} <= held, "citations missing beyond promoted mentions' held sightings"
    compiled["sources"] = expected["sources"]
    assert compiled == expected
    planner_calls = sim.of_kind("planner")
    # Updates that only add lines are appended without the writer: fewer writer calls than sections
    # whose bodies the two paths wrote differently.
    assert len(planner_calls) == 3 and condensed > 0 and len(sim.of_kind("writer")) < len(compiled["sections"])
    assert {c.status for c in sim.calls} == {200}
    if provider == "bedrock":
        assert {(c.platform, c.auth, c.identity) for c in sim.calls} == {("bedrock", "sigv4", ACCESS_KEY)}
        assert all(c.body["anthropic_version"] == "bedrock-2023-05-31" for c in sim.calls)
    else:
        assert {(c.platform, c.auth, c.identity) for c in sim.calls} == {("anthropic", "bearer", API_KEY)}
    # max_tokens sized to the batch; no cache breakpoint on Haiku 4.5, whose minimum the prefix misses.
    assert {c.max_tokens for c in planner_calls} == {1_024 + 30 * 320}
    assert all(c.breakpoints == 0 for c in sim.calls)
    assert {run["status"] for run in await ledger(second_engine, TENANT, OWNER)} <= {"continued", "succeeded"}
    await assert_ledger_is_what_was_billed(second_engine, sim)


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
            refs = [f"m{n}" for n in range(1, len(parse_leaf_prompt(user).memories) + 1)]
            hijack = [{"slug": "overview", "proposed_body_md": "Hijacked.", "source_refs": refs}]
            return {"pageUpdates": [{"pageId": "814e6b70", "sections": hijack}, {"pageId": "p1", "sections": hijack},
                                    {"pageId": str(uuid.uuid4()), "sections": hijack}],
                    "newPages": [{"type": "entity", "slug": "porto", "title": "Porto", "sections": [
                        {"slug": "overview", "heading": "Overview", "body_md": "A day trip [[Porto]].",
                         "source_refs": [*refs, foreign_memory]}]}],
                    "unresolvedMentions": [], "promotions": [],
                    "pageLinks": [{"fromType": "place", "fromSlug": "porto", "toType": "entity", "toSlug": "porto"},
                                  {"fromType": "entity", "fromSlug": "porto", "toType": "entity",
                                   "toSlug": "atlantis"}]}

        sim.answer_next("planner", hostile_plan)
        await compile_scope(client, settings, TENANT, OWNER)

    snapshot = await wiki_snapshot(engine, TENANT, OWNER)
    assert [page[2] for page in snapshot["pages"]] == ["porto"]
    assert [section[4] for section in snapshot["sections"]] == ["A day trip Porto."]  # no wikilink survives
    assert {source[2] for source in snapshot["sources"]} == set(ids)  # the other scope's memory is not cited
    run = await only_run(engine)
    assert run["status"] == "succeeded"
    # At least the two unknown page ids and the other scope's memory (links dropped are counted too).
    assert run["metrics"]["dropped_invalid_ids"] >= 3
