"""The Claude simulator itself: its brain reads a request by the contract the prompt publishes (and is
confused by one that breaks it), lies in six kinds, judges by reading; its cache and rate limits
follow the documented semantics, and it refuses what the real services refuse."""

from __future__ import annotations

import ast
import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from uuid import UUID

import httpx2
import pytest
from botocore.eventstream import EventStreamBuffer

from claude_sim import ClaudeSimulator, Limits, SimConfig, brain, judge
from claude_sim.accounting import PromptCache, RateLimiter
from claude_sim.framing import bedrock_chunk, bedrock_exception
from claude_sim.leaf_planning import plan
from claude_sim.leaf_reading import read_leaf
from claude_sim.lies import KINDS, Liar, Lie
from domain.context import CandidatePage, CandidateSection, MemoryRecord, OpenMention, PlannerContext
from domain.errors import PlanInvalid
from domain.plan import Plan
from domain.pricing import TokenUsage
from planners.claude_client import ModelReply
from planners.claude_planner import PlanCall, plan_reply
from planners.compact_plan import PLANNER_REPLY_SCHEMA, quote_line, quote_text
from planners.judge_prompt import JUDGE_REPLY_SCHEMA, JUDGE_SYSTEM
from planners.leaf_prompt import build_planner_prompt, planner_view
from tests.compile.helpers import sample_memories

ROOT = Path(__file__).resolve().parent.parent
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


def test_the_brain_reads_what_the_prompt_shows_by_its_published_contract() -> None:
    context = a_context()
    prompt = build_planner_prompt(context)
    read = read_leaf(prompt.system, prompt.user, PLANNER_REPLY_SCHEMA)

    # The prompt shows handles, never ids; the brain reads the values the view holds, by handle.
    assert not any(str(m.id) in prompt.user for m in context.memories)
    handles = prompt.handles
    view = planner_view(context)
    assert [(m.handle, m.text, m.happened[:19]) for m in read.memories] == [
        (handles.memory(m.id), m.content, m.created_at.isoformat()[:19]) for m in view.memories]
    assert [m.metadata for m in read.memories] == [m.metadata for m in view.memories]
    [page] = read.pages
    shown_page = view.candidate_pages[0]
    assert (page.handle, page.type, page.slug, page.title, page.summary, page.aliases) == (
        handles.page(shown_page.id), shown_page.type, shown_page.slug, shown_page.title, shown_page.summary,
        shown_page.aliases)
    assert [(s.slug, s.excerpt) for s in page.sections] == [(s.slug, s.body_md) for s in shown_page.sections]
    assert [(m.handle, m.alias, m.count, [(s.handle, s.quote) for s in m.sightings]) for m in read.mentions] == [
        (handles.mention(m.id), m.alias, m.mention_count,
         [(handles.memory(c["source_ref"]), c["quote"]) for c in m.sample_contexts]) for m in view.open_mentions]
    assert read.promotion_candidates == [handles.mention(i) for i in view.promotion_candidate_ids]
    # What the system prompt offers, read from it: the page types with their default sections, the
    # shortcuts and the thresholds.
    conventions = read.conventions
    assert set(conventions.page_types) == {"entity", "topic", "decision"}
    assert conventions.heading("entity", "visits") == "Visits & Interactions"
    assert conventions.quotes and conventions.led_quotes and conventions.arrays and conventions.supersede
    assert conventions.derivations == {"count", "span", "visits", "visited", "address"}
    assert (conventions.new_page_min_records, conventions.promotion_min_sightings) == (2, 3)


def _plan_request(prompt, schema=None) -> dict:
    return {"system": prompt.system, "messages": [{"role": "user", "content": prompt.user}],
            "tools": [{"name": "submit_plan", "input_schema": schema or PLANNER_REPLY_SCHEMA}],
            "tool_choice": {"type": "tool", "name": "submit_plan"}}


def test_a_prompt_that_breaks_its_own_contract_gets_a_reply_the_compiler_cannot_use() -> None:
    prompt = build_planner_prompt(a_context())
    fine = brain.answer(**_plan_request(prompt))
    assert fine.kind == "planner" and not fine.confused and fine.answer["new_pages"]
    broken = {
        "a part missing": prompt.model_copy(update={"user": prompt.user.replace(
            "## Open unresolved mentions in this scope", "## Mentions")}),
        "a handle never defined": prompt.model_copy(update={"user": prompt.user.replace(
            "- m3 happened=", '- m3 shared=["s9"] happened=', 1)}),
        "no page types": prompt.model_copy(update={"system": prompt.system.replace("## Page types", "## Kinds")}),
        "an output shape the tool does not take": prompt,
    }
    for why, changed in broken.items():
        schema = {"type": "object", "properties": {"pageUpdates": {"type": "array"}}} if why.startswith("an output") \
            else None
        reply = brain.answer(**_plan_request(changed, schema))
        assert reply.confused and reply.answer == {}, why
        call = PlanCall(system=prompt.system, user=prompt.user, max_tokens=1000, handles=prompt.handles,
                        input_chars=prompt.chars)
        with pytest.raises(PlanInvalid):
            plan_reply(call, ModelReply(text=json.dumps(reply.answer), stop_reason="tool_use", usage=TokenUsage(),
                                        model="m"), "m")


def test_the_simulator_imports_no_code_of_the_product() -> None:
    """It plays the model: what it knows of a call is what the request carries, never the compiler's code."""
    project = {path.name for path in ROOT.iterdir() if path.is_dir() and (path / "__init__.py").exists()}
    project |= {path.stem for path in ROOT.glob("*.py")}
    offending = []
    for source in sorted((ROOT / "claude_sim").glob("*.py")):
        for node in ast.walk(ast.parse(source.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            offending += [f"{source.name}: {name}" for name in names
                          if name.split(".")[0] in project - {"claude_sim"}]
    assert offending == []


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


def test_the_lying_mode_tells_all_six_kinds_in_turn_reproducibly_and_records_each() -> None:
    prompt = build_planner_prompt(a_context())
    request = read_leaf(prompt.system, prompt.user, PLANNER_REPLY_SCHEMA)
    memories = {m.handle: (m.day, m.text) for m in request.memories}

    def told(share: float, seed: int) -> list[Lie]:
        liar = Liar(share, seed)
        liar.lie(plan(request), memories, prompt.user[:2000])
        return liar.told

    assert told(0.0, 1) == []
    everything = told(1.0, 1)
    kinds = Counter(lie.kind for lie in everything)
    assert set(kinds) == set(KINDS) and max(kinds.values()) - min(kinds.values()) <= 2
    assert told(1.0, 1) == everything and told(1.0, 2) != everything
    assert all(lie.line != lie.original and lie.refs for lie in everything)
    some = told(0.3, 5)
    assert 0 < len(some) < len(everything)


# Lies written by hand, in shapes neither the lying mode nor the judge's rules were written from.
MEMORY = "Caroline went to an LGBTQ support group with Melanie on Tuesday and loved the three talks."
OTHER = "Melanie signed up for a pottery class in May."
HAND_LIES = {
    "negation": ["Caroline never went to an LGBTQ support group.", "Caroline hated the three talks at the group."],
    "roles": ["Melanie went to an LGBTQ support group with Caroline on Tuesday.",
              "Melanie took Caroline to an LGBTQ support group."],
    "number": ["Caroline loved the five talks at the LGBTQ support group.", "- 2026-02-30: Caroline went to a group."],
    "invented": ["Caroline went to an LGBTQ support group with Jennifer.",
                 "Caroline went to an LGBTQ support group in Chicago."],
    "merged": ["Caroline signed up for a pottery class in May."],
    "generalisation": ["Caroline goes to an LGBTQ support group every Tuesday.",
                       "Caroline always loved the talks at the LGBTQ support group.",
                       "Caroline went to an LGBTQ support group with all her friends."],
}


@pytest.mark.parametrize("kind", sorted(HAND_LIES))
def test_the_judge_reads_the_line_and_its_memories_and_blocks_each_kind_of_lie(kind) -> None:
    for line in HAND_LIES[kind]:
        finding = judge.read(line, [MEMORY, OTHER], "Caroline", days=["2026-02-03", "2026-05-01"])
        assert not finding.supported, (kind, line)


def test_the_judge_accepts_what_one_memory_says_in_other_words_and_rejects_what_none_says() -> None:
    for line in ("Caroline went to an LGBTQ support group with Melanie on Tuesday.",
                 "- 2026-02-03: Caroline went to an LGBTQ support group with Melanie.",
                 "**Caroline**: went to an LGBTQ support group and loved the three talks.",
                 "Melanie signed up for a pottery class."):
        assert judge.read(line, [MEMORY, OTHER], "Caroline", days=["2026-02-03", "2026-05-01"]).supported, line
    assert not judge.read("Caroline went to a support group.", [], "Caroline").supported


def test_the_merge_judge_weighs_the_evidence_it_is_shown() -> None:
    def pair(proposed: str, existing: str, evidence: str) -> str:
        return (f'### Pair p1\nflagged as: qualifier\nproposed page: "{proposed}" (entity)\n'
                f'existing page: "{existing}" (entity)\n  evidence: {evidence}\nmemories both already cite: 0\n\n'
                'Answer {"decisions": [{"pair": "p1", "same": false, "reason": "..."}]} with every pair id.')

    def same(user: str) -> bool:
        return brain.answer(JUDGE_SYSTEM, [{"role": "user", "content": user}],
                            [{"name": "judge", "input_schema": JUDGE_REPLY_SCHEMA}],
                            {"type": "tool", "name": "judge"}).answer["decisions"][0]["same"]

    assert same(pair("Lisbon, Portugal", "Lisbon", "Sardines by the river in Lisbon, Portugal."))
    assert not same(pair("Paris, Texas", "Paris", "Croissants near the Seine, France."))
    assert not same(pair("The Driskill Bar", "The Driskill", "A night at The Driskill hotel, Austin."))


def test_on_generated_batches_the_judge_blocks_the_lying_modes_lies_and_keeps_the_honest_lines() -> None:
    """The lying mode and the judge share no code: the judge must catch what the liar writes, of each
    kind, and accept the lines an honest plan writes, on batches composed at random."""
    blocked: Counter = Counter()
    told: Counter = Counter()
    honest = honest_rejected = 0
    for seed in range(4):
        when = datetime(2026, 5, 2, tzinfo=UTC)
        memories = [MemoryRecord(id=UUID(int=n + 1), content=m.content, metadata=m.metadata,
                                 created_at=m.occurred_at or when, updated_at=when)
                    for n, m in enumerate(sample_memories(30, seed=seed))]
        prompt = build_planner_prompt(PlannerContext(tenant_id="t", owner_id="o", memories=memories,
                                                     candidate_pages=[], open_mentions=[]))
        request = read_leaf(prompt.system, prompt.user, PLANNER_REPLY_SCHEMA)
        by_handle = {m.handle: m for m in request.memories}
        liar = Liar(0.3, seed)
        answer = liar.lie(plan(request), {m.handle: (m.day, m.text) for m in request.memories}, str(seed))
        lies = {lie.line: lie for lie in liar.told}
        for page in answer["new_pages"]:
            for section in page["sections"]:
                for line in section["lines"]:
                    if line.startswith(("=", "@")):
                        continue  # derived, or a memory's own line, which the compiler writes out
                    cited = [by_handle[h] for h in section.get("refs", []) if h in by_handle]
                    finding = judge.read(line, [m.text for m in cited], page["title"], [m.day for m in cited])
                    if line in lies:
                        told[lies[line].kind] += 1
                        blocked[lies[line].kind] += 0 if finding.supported else 1
                    else:
                        honest += 1
                        honest_rejected += 0 if finding.supported else 1
    assert set(told) == set(KINDS)
    assert all(blocked[kind] >= 0.95 * told[kind] for kind in KINDS), (blocked, told)
    assert honest and honest_rejected <= 0.01 * honest
