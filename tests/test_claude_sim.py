"""The Claude simulator itself: its brain reads our prompts back exactly, its cache and rate limits
follow the documented semantics, and it refuses what the real services refuse."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from uuid import UUID

import httpx2
import pytest
from botocore.eventstream import EventStreamBuffer

from claude_sim import ClaudeSimulator, Limits, SimConfig
from claude_sim.accounting import PromptCache, RateLimiter
from claude_sim.brain import handle_uuid, parse_leaf_prompt
from claude_sim.framing import bedrock_chunk, bedrock_exception
from domain.context import CandidatePage, CandidateSection, MemoryRecord, OpenMention, PlannerContext
from domain.errors import PlanInvalid
from domain.plan import Plan
from domain.pricing import TokenUsage
from planners.claude_client import ModelReply
from planners.claude_planner import PlanCall, plan_reply
from planners.compact_plan import quote_line, quote_text
from planners.leaf_prompt import build_planner_prompt, planner_view
from tests.compile.helpers import sample_memories

API_KEY = "sim-anthropic-key"
HEADERS = {"authorization": f"Bearer {API_KEY}", "anthropic-version": "2023-06-01"}


def a_context() -> PlannerContext:
    when = datetime(2026, 5, 2, 9, 30, 12, 345678, tzinfo=UTC)
    memories = [MemoryRecord(id=UUID(int=index + 1), content=memory.content + ' "quoted"\nsecond line',
                             metadata=memory.metadata, created_at=memory.occurred_at or when, updated_at=when)
                for index, memory in enumerate(sample_memories(12))]
    pages = [CandidatePage(id=UUID(int=100), type="entity", slug="franklin-bbq", title='Franklin "BBQ"',
                           summary="s" * 250, aliases=[f"a{n}" for n in range(20)],
                           sections=[CandidateSection(slug="notes", heading="Notes", body_md="- line\n" * 40)])]
    mentions = [OpenMention(id=UUID(int=200), alias="Chef João", alias_normalized="chef joao", mention_count=3,
                            suggested_type="entity", last_seen_at=when,
                            sample_contexts=[{"quote": "q" * 400, "source_ref": str(UUID(int=1)), "seen_at": "x"}]),
                OpenMention(id=UUID(int=201), alias="Odd", alias_normalized="not-the-normal-form", mention_count=1,
                            last_seen_at=when)]
    return PlannerContext(tenant_id="t", owner_id="o", memories=memories, candidate_pages=pages,
                          open_mentions=mentions, promotion_candidate_ids=[UUID(int=200)])


def test_the_brain_reads_back_exactly_the_view_the_prompt_shows() -> None:
    context = a_context()
    prompt = build_planner_prompt(context)
    parsed = parse_leaf_prompt(prompt.user)

    # The prompt shows handles, never ids: the brain stands a UUID made from each handle in for the id.
    assert not any(str(m.id) in prompt.user for m in context.memories)
    handles = prompt.handles
    view = planner_view(context)
    stand_in = {**{v: handle_uuid(k) for k, v in handles.memories.items()},
                **{v: handle_uuid(k) for k, v in handles.pages.items()},
                **{v: handle_uuid(k) for k, v in handles.mentions.items()}}
    view.memories = [m.model_copy(update={"id": stand_in[str(m.id)]}) for m in view.memories]
    view.candidate_pages = [p.model_copy(update={"id": stand_in[str(p.id)]}) for p in view.candidate_pages]
    view.open_mentions = [m.model_copy(update={"id": stand_in[str(m.id)], "sample_contexts": [
        {**c, "source_ref": str(stand_in[c["source_ref"]])} for c in m.sample_contexts]}) for m in view.open_mentions]
    assert parsed.memories == view.memories
    assert parsed.candidate_pages == view.candidate_pages
    assert parsed.open_mentions == view.open_mentions
    assert parsed.promotion_candidate_ids == [stand_in[str(i)] for i in view.promotion_candidate_ids]


def test_a_reply_in_handles_maps_back_to_ids_and_a_miscopied_handle_is_counted_not_dropped() -> None:
    prompt = build_planner_prompt(a_context())
    plan = Plan.model_validate({
        "pageUpdates": [{"pageId": "p1", "sections": [{"slug": "notes", "source_refs": ["m2", "m0", "M3"]}]},
                        {"pageId": "p9", "sections": []}],
        "newPages": [{"type": "entity", "slug": "x", "title": "X", "source_refs": ["m12"],
                      "sections": [{"slug": "overview", "source_refs": ["m1", "m13"]}]}],
        "unresolvedMentions": [{"alias": "Y", "source_ref": "m4"}],
        "promotions": [{"mentionId": "u1", "type": "entity", "title": "Chef", "sections": []},
                       {"mentionId": "u7", "type": "entity", "title": "Nobody", "sections": []}]})

    resolved, unknown = prompt.handles.resolve(plan)

    assert unknown == 4  # m0, p9, m13 (12 memories only) and u7: left as written, for resolution to count
    assert resolved.pageUpdates[0].pageId == str(UUID(int=100))
    assert resolved.pageUpdates[0].sections[0].source_refs == [str(UUID(int=2)), "m0", str(UUID(int=3))]
    assert resolved.pageUpdates[1].pageId == "p9"
    assert resolved.newPages[0].sections[0].source_refs == [str(UUID(int=1)), "m13"]
    assert resolved.unresolvedMentions[0].source_ref == str(UUID(int=4))
    assert [p.mentionId for p in resolved.promotions] == [str(UUID(int=200)), "u7"]


def test_a_compact_reply_expands_quotes_and_defaults_and_counts_what_it_cannot_read() -> None:
    context = a_context()
    prompt = build_planner_prompt(context)
    call = PlanCall(system=prompt.system, user=prompt.user, max_tokens=1000, handles=prompt.handles,
                    input_chars=prompt.chars)
    page = context.candidate_pages[0]
    reply = {
        "updates": [{"page": "p1", "sections": [{"slug": "notes", "lines": ["- 2 new memories.", "@m2", "@m0"],
                                                 "refs": ["m3"]}]}],
        "new_pages": [{"type": "entity", "title": "Blue Door Café",
                       "sections": [{"slug": "overview", "lines": ["A cafe.", "@home"], "refs": ["m1"]},
                                    {"slug": "notes", "lines": ["@m4"]}]}],
        "held": [{"name": "Y", "type": "entity", "ref": "m5"}],
        "promotions": [],
        "links": [["p1", "entity/blue-door-cafe", "where"], ["p7", "p1"], ["p1"]],
    }
    text = json.dumps(reply)
    plan = plan_reply(call, ModelReply(text=text, stop_reason="tool_use", usage=TokenUsage(), model="m"), "m").plan
    shown = {str(m.id): m for m in planner_view(context).memories}

    update = plan.pageUpdates[0].sections[0]
    # "@m2" is m2's dated first sentence; the miscopied "@m0" is no line but stays a citation as written.
    assert update.proposed_body_md == "- 2 new memories.\n" + quote_line(shown[str(UUID(int=2))])
    assert update.source_refs == [str(UUID(int=2)), "m0", str(UUID(int=3))]
    new = plan.newPages[0]
    assert (new.slug, [s.heading for s in new.sections]) == ("blue-door-cafe", ["Overview", "Notes"])
    assert new.source_refs == [str(UUID(int=1)), str(UUID(int=4))]  # its sections' citations
    assert new.sections[0].body_md == "A cafe.\n@home"  # not a handle: prose
    assert plan.unresolvedMentions[0].context == quote_text(shown[str(UUID(int=5))])
    link = plan.pageLinks[0]
    assert (link.fromType, link.fromSlug, link.toSlug, link.context) == (page.type, page.slug, "blue-door-cafe", "where")
    # p7 was never shown (counted with the miscopied handles), a one-ended link is malformed: both dropped.
    assert len(plan.pageLinks) == 1 and plan.dropped_links == 2
    assert plan_reply(call, ModelReply(text=text, stop_reason="tool_use", usage=TokenUsage(), model="m"),
                      "m").unknown_handles == 2  # m0 and p7


def test_a_reply_that_is_not_the_contract_fails_in_one_clear_error() -> None:
    prompt = build_planner_prompt(a_context())
    call = PlanCall(system=prompt.system, user=prompt.user, max_tokens=1000, handles=prompt.handles,
                    input_chars=prompt.chars)
    for text, expected in [("not json", "not JSON"), (json.dumps({"updates": "no", "new_pages": []}), "updates"),
                           (json.dumps({"new_pages": [{"type": "place", "title": "X", "sections": []}],
                                        "updates": [], "held": [], "promotions": []}), "type")]:
        with pytest.raises(PlanInvalid, match=expected):
            plan_reply(call, ModelReply(text=text, stop_reason="tool_use", usage=TokenUsage(), model="m"), "m")


def test_a_breakpoint_caches_only_a_prefix_reaching_the_minimum_and_only_the_exact_prefix() -> None:
    now = [0.0]
    cache = PromptCache(clock=lambda: now[0])

    def body(system: str, user: str) -> dict:
        return {"system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
                "messages": [{"role": "user", "content": [{"type": "text", "text": user}]}]}

    long, short = "x" * 4 * 5000, "x" * 4 * 1000  # 5,000 and 1,000 tokens
    assert cache.account("k", body(short, "u"), 4096).cache_creation_input_tokens == 0  # too short: never cached
    first = cache.account("k", body(long, "one"), 4096)
    assert (first.cache_creation_input_tokens, first.cache_read_input_tokens) == (5000, 0)
    second = cache.account("k", body(long, "two"), 4096)
    assert (second.cache_creation_input_tokens, second.cache_read_input_tokens, second.input_tokens) == (0, 5000, 2)
    changed = cache.account("k", body(long + "y", "two"), 4096)  # one character more: a different prefix
    assert changed.cache_read_input_tokens == 0 and changed.cache_creation_input_tokens > 0
    now[0] = 299.0  # a read refreshes the 5-minute lifetime ...
    assert cache.account("k", body(long, "three"), 4096).cache_read_input_tokens == 5000
    now[0] = 299.0 + 301.0  # ... and it expires 5 minutes after the last use
    assert cache.account("k", body(long, "four"), 4096).cache_read_input_tokens == 0


def test_the_rate_limiter_refuses_past_its_allowance_and_says_when_to_come_back() -> None:
    now = [0.0]
    limiter = RateLimiter(Limits(requests_per_minute=2, input_tokens_per_minute=600), clock=lambda: now[0])
    assert limiter.admit(100) is None and limiter.admit(100) is None
    wait = limiter.admit(100)
    assert wait == pytest.approx(30.0)  # one request refills in 60 s / 2
    headers = limiter.headers()
    assert headers["anthropic-ratelimit-requests-remaining"] == "0"
    assert headers["anthropic-ratelimit-input-tokens-remaining"] == "400"
    now[0] = 30.0
    assert limiter.admit(100) is None


async def test_requests_over_the_limit_get_429_with_retry_after_and_rate_limit_headers() -> None:
    async with ClaudeSimulator(SimConfig(limits=Limits(requests_per_minute=1))) as sim, httpx2.AsyncClient() as http:
        body = {"model": "claude-haiku-4-5", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
        ok = await http.post(f"{sim.base_url}/v1/messages", json=body, headers=HEADERS)
        throttled = await http.post(f"{sim.base_url}/v1/messages", json=body, headers=HEADERS)

    assert ok.status_code == 200 and "anthropic-ratelimit-requests-limit" in ok.headers
    assert throttled.status_code == 429 and throttled.json()["error"]["type"] == "rate_limit_error"
    assert int(throttled.headers["retry-after"]) == 60


async def test_a_lasting_fault_fails_every_matching_call_after_the_faults_queued_before_it() -> None:
    planner_tool = {"name": "submit_answer", "input_schema": {"type": "object", "properties": {"pageUpdates": {}}}}
    planner = {"model": "claude-haiku-4-5", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
               "tools": [planner_tool], "tool_choice": {"type": "tool", "name": "submit_answer"}}
    other = {"model": "claude-haiku-4-5", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    async with ClaudeSimulator() as sim, httpx2.AsyncClient() as http:
        sim.fail_next("server_error", "planner")
        sim.fail_always("rate_limit", "planner", retry_after=3)
        statuses = [(await http.post(f"{sim.base_url}/v1/messages", json=body, headers=HEADERS)).status_code
                    for body in (planner, planner, other, planner)]
        retry_after = (await http.post(f"{sim.base_url}/v1/messages", json=planner, headers=HEADERS)).headers

    assert statuses == [500, 429, 200, 429]
    assert retry_after["retry-after"] == "3"
    assert [c.fault for c in sim.of_kind("planner")] == ["server_error", "rate_limit", "rate_limit", "rate_limit"]


@pytest.mark.parametrize(("change", "message"), [
    ({"max_tokens": 0}, "max_tokens"),
    ({"messages": []}, "at least one message"),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": ""}]}]}, "non-empty"),
    ({"tools": [{"name": "t", "input_schema": {"type": "object"}}], "tool_choice": {"type": "tool", "name": "u"}},
     "no tool named"),
    ({"system": [{"type": "text", "text": f"s{n}", "cache_control": {"type": "ephemeral"}} for n in range(5)]},
     "maximum of 4 blocks with cache_control"),
    ({"temperature_typo": 1}, "Extra inputs"),
])
async def test_invalid_api_requests_are_refused_as_the_api_documents(change, message) -> None:
    body = {"model": "claude-haiku-4-5", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}], **change}
    async with ClaudeSimulator() as sim, httpx2.AsyncClient() as http:
        response = await http.post(f"{sim.base_url}/v1/messages", json=body, headers=HEADERS)
        missing_version = await http.post(f"{sim.base_url}/v1/messages", json=body,
                                          headers={"authorization": f"Bearer {API_KEY}"})

    assert response.status_code == 400 and message in response.json()["error"]["message"]
    assert missing_version.status_code == 400 and "anthropic-version" in missing_version.json()["error"]["message"]


async def test_bedrock_refuses_a_missing_signature_a_wrong_key_and_an_api_model_id() -> None:
    body = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    async with ClaudeSimulator() as sim, httpx2.AsyncClient() as http:
        url = f"{sim.base_url}/model/us.anthropic.claude-haiku-4-5-20251001-v1:0/invoke"
        unsigned = await http.post(url, json=body)
        anthropic_key = await http.post(url, json=body, headers={"authorization": f"Bearer {API_KEY}"})
        api_model = await http.post(f"{sim.base_url}/model/claude-haiku-4-5/invoke", json=body,
                                    headers={"authorization": "Bearer sim-bedrock-key"})
        with_model = await http.post(url, json={**body, "model": "x"}, headers={"authorization": "Bearer sim-bedrock-key"})
        fine = await http.post(url, json=body, headers={"authorization": "Bearer sim-bedrock-key"})

    assert unsigned.status_code == anthropic_key.status_code == 403
    assert anthropic_key.headers["x-amzn-errortype"].startswith("UnrecognizedClientException")
    assert api_model.status_code == 400 and "model identifier is invalid" in api_model.json()["message"]
    assert with_model.status_code == 400 and "extraneous key [model]" in with_model.json()["message"]
    assert fine.status_code == 200 and fine.json()["type"] == "message"


def test_bedrock_event_stream_frames_decode_with_botocore() -> None:
    buffer = EventStreamBuffer()
    buffer.add_data(bedrock_chunk({"type": "message_stop"}) + bedrock_exception("throttlingException", "slow down"))
    chunk, exception = list(buffer)

    assert chunk.headers[":event-type"] == "chunk"
    assert json.loads(chunk.payload)["bytes"]
    assert (exception.headers[":message-type"], exception.headers[":exception-type"]) == ("exception",
                                                                                        "throttlingException")


def test_the_lying_fault_rewrites_its_share_of_lines_reproducibly() -> None:
    from claude_sim.lies import lie

    def answer() -> dict:
        return {"updates": [{"page": "p1", "sections": [{"slug": "notes", "lines": [f"- Line {n}." for n in range(200)]}]}],
                "new_pages": [{"type": "entity", "title": "Uchi", "sections": [{"slug": "visits", "lines": ["@m1"]}]}],
                "held": [], "promotions": []}

    none: list[str] = []
    assert lie(answer(), 0.0, "prompt", {"m1": "- 2026-01-05: Dinner at Uchi."}, none) == answer() and none == []
    injected: list[str] = []
    lied = lie(answer(), 0.1, "prompt", {"m1": "- 2026-01-05: Dinner at Uchi."}, injected)
    again: list[str] = []
    lie(answer(), 0.1, "prompt", {"m1": "- 2026-01-05: Dinner at Uchi."}, again)
    assert injected == again and 5 <= len(injected) <= 40
    lines = lied["updates"][0]["sections"][0]["lines"]
    assert sum(1 for line in lines if line in injected) == len([i for i in injected if i.startswith("- Line")])
    everything: list[str] = []
    all_lied = lie(answer(), 1.0, "prompt", {"m1": "- 2026-01-05: Dinner at Uchi."}, everything)
    quote = all_lied["new_pages"][0]["sections"][0]
    assert quote["lines"][0].startswith("- 2026-01-05: Dinner at Uchi") and quote["refs"] == ["m1"]
