"""The compile workflow through the real anthropic SDK; only the Messages API's HTTP transport is faked.

The fake answers planner calls (they carry the forced `submit_answer` tool) with a `tool_use` block
whose input is a plan built from the prompt the SDK actually sent (memory ids appear as `id=<uuid>`),
and section-writer calls with a `text` block. Each call kind has a queue of scripted replies (errors,
truncations, hostile plans) consumed before its default reply, so a test states only what differs.
Temporal, Postgres, the activities and the SDK's request/response handling are all real.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx2
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError

from domain.memory import MemoryIn
from domain.pricing import TokenUsage, cost_usd
from planners.claude_client import STRUCTURED_REPLY_TOOL, ModelClient
from runtime.settings import Settings
from runtime.temporal_client import signal_compile
from store.memories import retain
from tests.compile.helpers import compile_scope, ledger, running_worker, wiki_snapshot
from tests.compile.helpers import test_settings as settings_for
from workflows.compile import LLM_RETRY

TENANT, OWNER = "t-model", "alice"
MODEL = "claude-haiku-4-5"  # the settings default, priced by domain.pricing
PLANNER_USAGE = {"input_tokens": 900, "output_tokens": 300, "cache_creation_input_tokens": 1500,
                 "cache_read_input_tokens": 4000}
WRITER_USAGE = {"input_tokens": 400, "output_tokens": 120, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 700}
AGGREGATION_USAGE = {"input_tokens": 600, "output_tokens": 80, "cache_creation_input_tokens": 0,
                     "cache_read_input_tokens": 1200}
WRITER_BODY = "Lisbon, as the section writer put it after [[Alfama|the old quarter]]."

_MEMORY_LINE = re.compile(r"^- id=([0-9a-f-]{36}) when=\S+.*\n  text: (.*)$", re.MULTILINE)
_PAGE_LINE = re.compile(r"^- id=([0-9a-f-]{36}) type=(\w+) slug=(\S+) title=", re.MULTILINE)


# ------------------------------------------------------------------------------------ the fake API


@dataclass
class Prompt:
    """What one request asked, read back from the JSON the SDK sent."""

    kind: str  # "planner", "aggregation" or "judge" (each its own forced tool schema), "writer" (plain text)
    text: str

    @property
    def memory_ids(self) -> list[str]:
        return [match.group(1) for match in _MEMORY_LINE.finditer(self.text)]

    @property
    def memory_texts(self) -> list[str]:
        return [match.group(2) for match in _MEMORY_LINE.finditer(self.text)]

    @property
    def page_ids_by_slug(self) -> dict[str, str]:
        return {match.group(3): match.group(1) for match in _PAGE_LINE.finditer(self.text)}


Reply = Callable[[Prompt], httpx2.Response]


def message(content: list[dict[str, Any]], stop_reason: str, usage: dict[str, int]) -> httpx2.Response:
    """A 200 reply in the shape of the Messages API's Message object."""
    return httpx2.Response(200, json={
        "id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant", "model": MODEL,
        "content": content, "stop_reason": stop_reason, "stop_sequence": None, "usage": usage,
    })


def plan_reply(plan_for: Callable[[Prompt], dict[str, Any]], stop_reason: str = "tool_use",
               usage: dict[str, int] = PLANNER_USAGE) -> Reply:
    def reply(prompt: Prompt) -> httpx2.Response:
        block = {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:24]}", "name": STRUCTURED_REPLY_TOOL,
                 "input": plan_for(prompt)}
        return message([block], stop_reason, usage)
    return reply


def text_reply(body: str) -> Reply:
    return lambda prompt: message([{"type": "text", "text": body}], "end_turn", WRITER_USAGE)


def api_error(status: int, kind: str, headers: dict[str, str] | None = None, message: str = "") -> Reply:
    body = {"type": "error", "error": {"type": kind, "message": message or f"scripted {kind}"}}
    return lambda prompt: httpx2.Response(status, json=body, headers=headers)


def empty_plan(**arrays: list[Any]) -> dict[str, Any]:
    return {"pageUpdates": [], "newPages": [], "unresolvedMentions": [], "promotions": [], "pageLinks": [],
            **arrays}


def lisbon_plan(prompt: Prompt) -> dict[str, Any]:
    """The default plan: create the Lisbon page, or update it once it exists (which runs the writer)."""
    ids = prompt.memory_ids
    body = " ".join(prompt.memory_texts)
    lisbon_id = prompt.page_ids_by_slug.get("lisbon")
    if lisbon_id is not None:
        return empty_plan(pageUpdates=[{"pageId": lisbon_id, "sections": [
            {"slug": "overview", "proposed_body_md": body, "source_refs": ids, "rationale": "new visits"}]}])
    return empty_plan(
        newPages=[{"type": "entity", "slug": "lisbon", "title": "Lisbon", "summary": "A city in Portugal.",
                   "source_refs": ids,
                   "sections": [{"slug": "overview", "heading": "Overview", "body_md": body, "source_refs": ids}]}],
        unresolvedMentions=[{"alias": "Alfama", "suggestedType": "topic", "context": "walked up to Alfama",
                             "source_ref": ids[0]}],
    )


def judge_apart(prompt: Prompt) -> dict[str, Any]:
    """The merge judge, when a test does not script it: every pair is two things."""
    pairs = re.findall(r"^### Pair (p\d+)$", prompt.text, re.MULTILINE)
    return {"decisions": [{"pair": pair, "same": False, "reason": "not scripted"} for pair in pairs]}


def no_aggregation(prompt: Prompt) -> dict[str, Any]:
    """The aggregation planner (after the leaf batches) finds no hub or rollup worth writing."""
    return {"parentSectionUpdates": [], "sectionPromotions": [], "newPages": [], "pageLinks": []}


def call_kind(body: dict[str, Any]) -> str:
    if "tools" not in body:
        return "writer"
    schema = body["tools"][0]["input_schema"]
    if "decisions" in schema["properties"]:
        return "judge"
    return "planner" if "pageUpdates" in schema["properties"] else "aggregation"


@dataclass
class Call:
    kind: str
    at: float  # time.monotonic() when the request arrived
    memory_ids: list[str]
    path: str
    authorization: str | None
    status: int = 0  # of the reply, once answered


@dataclass
class FakeMessagesApi:
    """POST /v1/messages: scripted replies per call kind first, then the default reply of that kind."""

    default_planner: Reply = field(default_factory=lambda: plan_reply(lisbon_plan))
    default_writer: Reply = field(default_factory=lambda: text_reply(WRITER_BODY))
    default_aggregation: Reply = field(default_factory=lambda: plan_reply(no_aggregation, usage=AGGREGATION_USAGE))
    default_judge: Reply = field(default_factory=lambda: plan_reply(judge_apart, usage=AGGREGATION_USAGE))
    planner: deque[Reply] = field(default_factory=deque)
    judge: deque[Reply] = field(default_factory=deque)
    writer: deque[Reply] = field(default_factory=deque)
    aggregation: deque[Reply] = field(default_factory=deque)
    calls: list[Call] = field(default_factory=list)

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        try:
            return self._answer(request)
        except Exception as error:  # noqa: BLE001 - a bug in a test's script must fail the compile, fast
            # Raised here it would reach the SDK as a connection error, which Temporal retries for an hour.
            return api_error(400, "invalid_request_error", message=f"fake API: {error!r}")(None)

    def _answer(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        prompt = Prompt(kind=call_kind(body), text="\n".join(block["text"] for block in body["messages"][0]["content"]))
        self.calls.append(Call(prompt.kind, time.monotonic(), prompt.memory_ids, request.url.path,
                               request.headers.get("authorization")))
        queue: deque[Reply] = getattr(self, prompt.kind)
        response = (queue.popleft() if queue else getattr(self, f"default_{prompt.kind}"))(prompt)
        self.calls[-1].status = response.status_code
        return response

    def of_kind(self, kind: str) -> list[Call]:
        return [call for call in self.calls if call.kind == kind]


# ------------------------------------------------------------------------------------ harness


@asynccontextmanager
async def model_worker(client: Client, engine: AsyncEngine, api: FakeMessagesApi,
                       **env: Any) -> AsyncIterator[Settings]:
    settings = settings_for(WIKI_LLM="anthropic", ANTHROPIC_API_KEY="test-key", **env)
    model_client = ModelClient(provider="anthropic", api_key="test-key",
                               http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(api)))
    try:
        async with running_worker(client, engine, settings, model_client=model_client):
            yield settings
    finally:
        await model_client.aclose()


async def retain_days(engine: AsyncEngine, count: int, tenant: str = TENANT) -> list[str]:
    """`count` memories of a trip, in the order a compile reads them."""
    start = datetime(2026, 5, 1, 9, tzinfo=UTC)
    memories = [MemoryIn(content=f"Day {day}: walked through Lisbon and ate grilled sardines at stall {day}.",
                         occurred_at=start + timedelta(days=day)) for day in range(1, count + 1)]
    result = await retain(engine, tenant, OWNER, memories)
    return [str(memory_id) for memory_id in result.inserted]


async def sources_by_section(engine: AsyncEngine, tenant: str = TENANT) -> dict[tuple[str, str], set[str]]:
    """(page slug, section slug) -> cited memory ids, with an empty set for a section citing none."""
    async with engine.connect() as conn:
        rows = await conn.execute(text("""
            SELECT p.slug, s.section_slug, ss.source_ref FROM wiki_page_sections s
            JOIN wiki_pages p ON p.id = s.page_id
            LEFT JOIN wiki_section_sources ss ON ss.section_id = s.id
            WHERE p.tenant_id = :t AND p.owner_id = :o
        """), {"t": tenant, "o": OWNER})
        sources: dict[tuple[str, str], set[str]] = {}
        for page, section, ref in rows:
            refs = sources.setdefault((page, section), set())
            if ref is not None:
                refs.add(ref)
        return sources


async def section_bodies(engine: AsyncEngine) -> dict[tuple[str, str], str]:
    async with engine.connect() as conn:
        rows = await conn.execute(text("""
            SELECT p.slug, s.section_slug, s.body_md FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id
            WHERE p.tenant_id = :t AND p.owner_id = :o
        """), {"t": TENANT, "o": OWNER})
        return {(page, section): body for page, section, body in rows}


async def cursor_record(engine: AsyncEngine) -> str | None:
    async with engine.connect() as conn:
        value = (await conn.execute(text(
            "SELECT last_record_id FROM wiki_compile_cursors WHERE tenant_id = :t AND owner_id = :o"
        ), {"t": TENANT, "o": OWNER})).scalar_one()
    return str(value) if value is not None else None


async def only_run(engine: AsyncEngine, tenant: str = TENANT) -> dict[str, Any]:
    rows = await ledger(engine, tenant, OWNER)
    assert len(rows) == 1, rows
    return rows[0]


def expected_cost(api: FakeMessagesApi) -> float:
    """What the calls the fake answered cost at the model's list prices: every reply is paid for,
    truncated or unusable ones too; error responses are not."""
    usage = {"planner": PLANNER_USAGE, "writer": WRITER_USAGE, "aggregation": AGGREGATION_USAGE}
    return sum(cost_usd(MODEL, TokenUsage(**usage[call.kind])) for call in api.calls if call.status == 200)


# ------------------------------------------------------------------------------------ scenarios


async def test_plans_from_the_model_become_pages_and_every_call_is_counted_and_priced(client, engine):
    ids = await retain_days(engine, 6)
    api = FakeMessagesApi()
    async with model_worker(client, engine, api, WIKI_RECORD_PAGE_SIZE=3) as settings:
        await compile_scope(client, settings, TENANT, OWNER)

    # Batch 1 creates Lisbon from the plan; batch 2 updates it, which goes through the section writer.
    assert [call.memory_ids for call in api.of_kind("planner")] == [ids[:3], ids[3:]]
    assert len(api.of_kind("writer")) == 1
    assert {(call.path, call.authorization) for call in api.calls} == {("/v1/messages", "Bearer test-key")}
    snapshot = await wiki_snapshot(engine, TENANT, OWNER)
    assert [(page[1], page[2], page[3]) for page in snapshot["pages"]] == [("entity", "lisbon", "Lisbon")]
    assert await section_bodies(engine) == {
        ("lisbon", "overview"): "Lisbon, as the section writer put it after the old quarter."}
    assert await sources_by_section(engine) == {("lisbon", "overview"): set(ids)}
    assert [mention[1] for mention in snapshot["mentions"]] == ["Alfama"]
    run = await only_run(engine)
    metrics = run["metrics"]
    assert run["status"] == "succeeded"
    assert (metrics["planner_calls"], metrics["section_writer_calls"]) == (2, 1)
    assert (metrics["pages_created"], metrics["sections_rewritten"], metrics["records_read"]) == (1, 1, 6)
    assert metrics["input_tokens"] == 2 * PLANNER_USAGE["input_tokens"] + WRITER_USAGE["input_tokens"]
    assert metrics["output_tokens"] == 2 * PLANNER_USAGE["output_tokens"] + WRITER_USAGE["output_tokens"]
    assert metrics["cache_creation_input_tokens"] == 2 * PLANNER_USAGE["cache_creation_input_tokens"]
    assert metrics["cache_read_tokens"] == (2 * PLANNER_USAGE["cache_read_input_tokens"]
                                            + WRITER_USAGE["cache_read_input_tokens"])
    # The aggregation pass after the leaf batches is one more planner call, priced in the same total.
    assert len(api.of_kind("aggregation")) == metrics["aggregation_planner_calls"] == 1
    assert "aggregation_error" not in metrics
    assert metrics["aggregation_output_tokens"] == AGGREGATION_USAGE["output_tokens"]
    assert metrics["cost_usd"] > 0
    assert metrics["cost_usd"] == pytest.approx(expected_cost(api), abs=1e-6)
    assert await cursor_record(engine) == ids[-1]


async def plan_activity_started_events(handle) -> list[tuple[Any, Any]]:
    """(scheduled event, started event) of every llm.plan_batch activity in the workflow's history."""
    history = await handle.fetch_history()
    scheduled = {}
    pairs = []
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            if event.activity_task_scheduled_event_attributes.activity_type.name == "llm.plan_batch":
                scheduled[event.event_id] = event
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            origin = scheduled.get(event.activity_task_started_event_attributes.scheduled_event_id)
            if origin is not None:
                pairs.append((origin, event))
    return pairs


async def test_a_throttled_planner_call_waits_the_retry_after_then_succeeds(client, engine):
    # Longer than the retry policy's first backoff, so only obeying the header explains the wait.
    retry_after = LLM_RETRY.initial_interval + timedelta(seconds=1)
    seconds = int(retry_after.total_seconds())
    ids = await retain_days(engine, 6)
    api = FakeMessagesApi(planner=deque([api_error(429, "rate_limit_error", {"retry-after": str(seconds)})]))
    async with model_worker(client, engine, api) as settings:
        handle = await signal_compile(client, TENANT, OWNER, trigger="admin", settings=settings)
        await handle.result()

    first, second = api.of_kind("planner")  # one HTTP request per attempt: the SDK itself never retries
    assert second.at - first.at >= retry_after.total_seconds()
    [(scheduled, started)] = await plan_activity_started_events(handle)
    attributes = started.activity_task_started_event_attributes
    assert attributes.attempt == 2
    assert f"(429 rate_limit_error); retrying after the requested {seconds} s" in attributes.last_failure.message
    assert started.event_time.ToDatetime() - scheduled.event_time.ToDatetime() >= retry_after
    run = await only_run(engine)
    assert (run["status"], run["metrics"]["planner_calls"], run["metrics"]["pages_created"]) == ("succeeded", 1, 1)
    assert await cursor_record(engine) == ids[-1]


async def test_an_overloaded_provider_is_retried_with_backoff(client, engine):
    ids = await retain_days(engine, 6)
    api = FakeMessagesApi(planner=deque([api_error(529, "overloaded_error")]))
    async with model_worker(client, engine, api) as settings:
        handle = await signal_compile(client, TENANT, OWNER, trigger="admin", settings=settings)
        await handle.result()

    first, second = api.of_kind("planner")
    assert second.at - first.at >= LLM_RETRY.initial_interval.total_seconds()  # no Retry-After: backoff
    [(_, started)] = await plan_activity_started_events(handle)
    assert started.activity_task_started_event_attributes.attempt == 2
    assert "529 overloaded_error" in started.activity_task_started_event_attributes.last_failure.message
    run = await only_run(engine)
    assert run["status"] == "succeeded"
    assert await sources_by_section(engine) == {("lisbon", "overview"): set(ids)}
    assert await cursor_record(engine) == ids[-1]


async def test_a_truncated_plan_splits_the_batch_and_plans_each_half(client, engine):
    ids = await retain_days(engine, 6)
    api = FakeMessagesApi(planner=deque([plan_reply(lisbon_plan, stop_reason="max_tokens")]))
    async with model_worker(client, engine, api) as settings:
        await compile_scope(client, settings, TENANT, OWNER)

    assert [call.memory_ids for call in api.of_kind("planner")] == [ids, ids[:3], ids[3:]]
    metrics = (await only_run(engine))["metrics"]
    assert (metrics["truncations"], metrics["batch_splits"]) == (1, 1)
    assert (metrics["planner_calls"], metrics["records_read"], metrics["skipped_memories"]) == (2, 6, [])
    # The truncated call was paid for too.
    assert metrics["cost_usd"] == pytest.approx(expected_cost(api), abs=1e-6)
    assert await sources_by_section(engine) == {("lisbon", "overview"): set(ids)}
    assert await cursor_record(engine) == ids[-1]


async def test_a_memory_whose_plan_stays_invalid_is_skipped_and_the_rest_compiles(client, engine):
    ids = await retain_days(engine, 6)
    poison = ids[0]

    def plan_or_garbage(prompt: Prompt) -> dict[str, Any]:
        if poison in prompt.memory_ids:
            return {"pageUpdates": [{"pageId": 5}], "newPages": "none"}  # missing arrays, wrong types
        return lisbon_plan(prompt)

    api = FakeMessagesApi(default_planner=plan_reply(plan_or_garbage))
    async with model_worker(client, engine, api) as settings:
        await compile_scope(client, settings, TENANT, OWNER)

    # Invalid twice -> split; the half with the poison again; the poison alone twice -> skipped.
    assert [call.memory_ids for call in api.of_kind("planner")] == [
        ids, ids, ids[:3], ids[:3], [poison], [poison], ids[1:3], ids[3:]]
    metrics = (await only_run(engine))["metrics"]
    assert metrics["skipped_memories"] == [poison]
    assert (metrics["invalid_plans"], metrics["llm_retries"], metrics["batch_splits"]) == (6, 3, 2)
    assert (metrics["planner_calls"], metrics["records_read"]) == (2, 6)
    assert metrics["cost_usd"] == pytest.approx(expected_cost(api), abs=1e-6)  # the unusable replies too
    assert await sources_by_section(engine) == {("lisbon", "overview"): set(ids[1:])}
    assert await cursor_record(engine) == ids[-1]


async def compile_other_tenant(client: Client, engine: AsyncEngine, api: FakeMessagesApi,
                               settings: Settings) -> tuple[str, str]:
    """Tenant "other" gets a Lisbon page and an open Alfama mention; returns their ids."""
    await retain_days(engine, 2, tenant="other")
    await compile_scope(client, settings, "other", OWNER)
    async with engine.connect() as conn:
        page_id = (await conn.execute(text(
            "SELECT id FROM wiki_pages WHERE tenant_id = 'other' AND slug = 'lisbon'"))).scalar_one()
        mention_id = (await conn.execute(text(
            "SELECT id FROM wiki_unresolved_mentions WHERE tenant_id = 'other' AND status = 'open'"))).scalar_one()
    return str(page_id), str(mention_id)


async def test_ids_the_scope_does_not_own_are_dropped_and_counted_never_written(client, engine):
    api = FakeMessagesApi()
    async with model_worker(client, engine, api) as settings:
        foreign_page, foreign_mention = await compile_other_tenant(client, engine, api, settings)
        other_before = await wiki_snapshot(engine, "other", OWNER)
        ids = await retain_days(engine, 6)

        def hostile_plan(prompt: Prompt) -> dict[str, Any]:
            refs = prompt.memory_ids
            hijack = [{"slug": "overview", "proposed_body_md": "Hijacked.", "source_refs": refs}]
            return empty_plan(
                pageUpdates=[{"pageId": "814e6b70", "sections": hijack},
                             {"pageId": str(uuid.uuid4()), "sections": hijack},
                             {"pageId": foreign_page, "sections": hijack}],
                newPages=[{"type": "entity", "slug": "porto", "title": "Porto", "sections": [
                    {"slug": "overview", "heading": "Overview", "body_md": "A day trip.", "source_refs": refs}]}],
                promotions=[{"mentionId": foreign_mention, "reason": "seen often", "type": "topic",
                             "title": "Alfama", "sections": [{"slug": "summary", "body_md": "Hijacked.",
                                                              "source_refs": refs}]}],
                pageLinks=[{"fromType": "place", "fromSlug": "porto", "toType": "entity", "toSlug": "porto"},
                           {"fromType": "entity", "fromSlug": "  ", "toType": "entity", "toSlug": "porto"},
                           {"fromType": "entity", "fromSlug": "porto", "toType": "entity", "toSlug": "atlantis"}],
            )

        api.planner.append(plan_reply(hostile_plan))
        await compile_scope(client, settings, TENANT, OWNER)

    assert await wiki_snapshot(engine, "other", OWNER) == other_before
    snapshot = await wiki_snapshot(engine, TENANT, OWNER)
    assert [page[2] for page in snapshot["pages"]] == ["porto"]
    assert (snapshot["links"], snapshot["mentions"]) == ([], [])
    run = await only_run(engine)
    assert run["status"] == "succeeded"
    # 3 page updates, 1 promotion, the link to an unknown slug, and the 2 links the plan contract
    # drops (bad page type, blank slug): dropped, logged and counted, never fatal.
    assert run["metrics"]["dropped_invalid_ids"] == 7
    assert await cursor_record(engine) == ids[-1]


async def test_wikilinks_are_stripped_and_bold_titles_of_known_pages_become_links(client, engine):
    await retain_days(engine, 6)

    def linked_prose(prompt: Prompt) -> dict[str, Any]:
        refs = prompt.memory_ids
        return empty_plan(newPages=[
            {"type": "entity", "slug": "lisbon", "title": "Lisbon", "sections": [
                {"slug": "overview", "heading": "Overview", "source_refs": refs,
                 "body_md": "Walked all over [[Lisbon]] and ate at [[Taberna|the tavern]]."}]},
            {"type": "entity", "slug": "taberna", "title": "Taberna", "sections": [
                {"slug": "overview", "heading": "Overview", "source_refs": refs,
                 "body_md": "The best bacalhau in **Lisbon**, near **Nowhere Known**."}]},
        ])

    api = FakeMessagesApi(planner=deque([plan_reply(linked_prose)]))
    async with model_worker(client, engine, api) as settings:
        await compile_scope(client, settings, TENANT, OWNER)

    bodies = await section_bodies(engine)
    assert bodies[("lisbon", "overview")] == "Walked all over Lisbon and ate at the tavern."
    assert bodies[("taberna", "overview")] == (
        "The best bacalhau in [**Lisbon**](/wiki/entity/lisbon), near **Nowhere Known**.")
    pages = (await wiki_snapshot(engine, TENANT, OWNER))["pages"]
    assert all("[[" not in page[5] for page in pages)


async def test_provenance_comes_only_from_citations_inside_the_batch(client, engine):
    ids = await retain_days(engine, 6)
    outside = ids[4]  # a memory of the same scope, but of the next batch

    def citing_plan(prompt: Prompt) -> dict[str, Any]:
        first = prompt.memory_ids[0]
        return empty_plan(newPages=[{"type": "entity", "slug": "lisbon", "title": "Lisbon", "sections": [
            {"slug": "overview", "heading": "Overview", "body_md": "A hilly city.", "source_refs": []},
            {"slug": "notes", "heading": "Notes", "body_md": "Sardines everywhere.",
             "source_refs": [first, outside, str(uuid.uuid4())]},
        ]}])

    api = FakeMessagesApi(planner=deque([plan_reply(citing_plan)]),
                          default_planner=plan_reply(lambda prompt: empty_plan()))
    async with model_worker(client, engine, api, WIKI_RECORD_PAGE_SIZE=3) as settings:
        await compile_scope(client, settings, TENANT, OWNER)

    assert await sources_by_section(engine) == {("lisbon", "overview"): set(), ("lisbon", "notes"): {ids[0]}}
    assert await cursor_record(engine) == ids[-1]


async def test_an_invalid_api_key_fails_the_compile_with_an_actionable_message(client, engine):
    await retain_days(engine, 6)
    api = FakeMessagesApi(planner=deque([api_error(401, "authentication_error")]))
    async with model_worker(client, engine, api) as settings:
        handle = await signal_compile(client, TENANT, OWNER, trigger="admin", settings=settings)
        with pytest.raises(WorkflowFailureError) as failed:
            await handle.result()

    cause = failed.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "CompileFailed"
    assert "ANTHROPIC_API_KEY" in cause.message and "\n" not in cause.message
    assert len(api.calls) == 1  # rejected for good: neither Temporal nor the SDK retried it
    run = await only_run(engine)
    assert (run["status"], run["error"]) == ("failed", cause.message)
    assert run["metrics"]["error"] == cause.message
    assert await cursor_record(engine) is None
    assert (await wiki_snapshot(engine, TENANT, OWNER))["pages"] == []
