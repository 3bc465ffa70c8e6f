"""The OpenAI-compatible gateway through the real `openai` SDK, over loopback HTTP, against the fake
of a local server (openai_sim/): structured-output modes, the one repair, errors by name, usage.

The client is aimed at the fake only by its base URL, as a deployment aims it at Ollama or vLLM.
"""

from __future__ import annotations

import json
import socket
from datetime import timedelta

import pytest

from activities.common import as_application_error
from app.worker import build_model_client
from domain.errors import (
    LLM_INTERRUPTED,
    LLM_REJECTED,
    LLM_THROTTLED,
    LLM_TRUNCATED,
    LLM_UNAVAILABLE,
    PLAN_INVALID,
    StepFailed,
)
from domain.forget import RederiveLine, RederiveMemory, RederiveTask
from domain.merge_questions import MergeQuestion, MergeSide
from domain.pricing import TokenUsage, flat_price, priced
from domain.resolution import Rung
from openai_sim import PROFILES, OpenAISimulator, SimConfig
from planners.judge_prompt import JUDGE_REPLY_SCHEMA, JUDGE_SYSTEM, build_judge_prompt
from planners.openai_client import OpenAICompatibleClient
from planners.rederive import ClaudeRederiver
from planners.structured_output import SCHEMA_MARKER
from runtime.settings import ConfigError, load_settings
from runtime.temporal_client import compile_options

MODEL = "qwen2.5:14b"
# A merge judge's question as the product writes it (planners/judge_prompt.py): the simulator answers
# the contract the prompt states, so the question must be the product's own.
JUDGE_USER = build_judge_prompt([MergeQuestion(
    key="k1", rung=Rung.SUBSET, detail="",
    proposal=MergeSide(title="Casa Sol", type="entity"),
    candidate=MergeSide(title="Casa del Sol", type="entity"), shared_sources=0)]).batch_user


def gateway(simulator: OpenAISimulator, **options) -> OpenAICompatibleClient:
    options.setdefault("server", simulator.config.profile.name if simulator.config.profile.name in (
        "ollama", "vllm", "lm-studio", "llama-cpp") else "other")
    options.setdefault("structured_output", "json_schema")
    # Generous timeouts (a loaded test machine is slow to answer); the tests of timeouts set short ones.
    options.setdefault("stall_timeout_seconds", 10.0)
    options.setdefault("first_token_seconds", 10.0)
    return OpenAICompatibleClient(base_url=simulator.base_url, **options)


async def judge(client: OpenAICompatibleClient, model: str = MODEL):
    try:
        return await client.complete(model=model, system=JUDGE_SYSTEM, user=JUDGE_USER, max_tokens=800,
                                     json_schema=JUDGE_REPLY_SCHEMA)
    finally:
        await client.aclose()


async def failure(client: OpenAICompatibleClient, **call) -> StepFailed:
    with pytest.raises(StepFailed) as raised:
        await judge(client, **call)
    return raised.value


def decisions(text: str) -> list[dict]:
    return json.loads(text)["decisions"]


@pytest.mark.parametrize(("mode", "server"), [("json_schema", "vllm"), ("tools", "vllm"), ("json", "vllm"),
                                              ("tools", "ollama")])
async def test_each_structured_output_mode_asks_as_the_protocol_says_and_reads_the_same_answer(mode, server) -> None:
    async with OpenAISimulator(SimConfig(profile=PROFILES[server])) as simulator:
        reply = await judge(gateway(simulator, structured_output=mode))
        body = simulator.calls[-1].body
    assert decisions(reply.text) == [{"pair": "p1", "same": False,
                                      "reason": "one name inside the other: a part, not the same thing"}]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert ("response_format" in body) == (mode == "json_schema")
    assert ("tools" in body) == (mode == "tools")
    # Ollama ignores tool_choice: it is not sent there, and its model answered in text, which was read.
    assert ("tool_choice" in body) == (mode == "tools" and server != "ollama")
    assert (SCHEMA_MARKER in body["messages"][0]["content"]) == (mode == "json")
    assert simulator.invalid_requests() == []


async def test_usage_is_the_servers_and_costs_nothing_unless_a_price_is_set(openai_sim) -> None:
    reply = await judge(gateway(openai_sim))
    call = openai_sim.calls[-1]
    assert reply.usage == TokenUsage(input_tokens=call.prompt_tokens, output_tokens=call.completion_tokens)
    assert priced(MODEL, reply.usage, price=gateway(openai_sim).price).cost_usd == 0
    price = flat_price(0.2, 0.6)
    expected = round((call.prompt_tokens * 0.2 + call.completion_tokens * 0.6) / 1_000_000, 6)
    assert priced(MODEL, reply.usage, price=price).cost_usd == expected


@pytest.mark.parametrize(("server", "expected"), [("no-json-schema", "tools"), ("plain", "json")])
async def test_on_auto_a_server_refusing_json_schema_is_asked_one_step_down_and_the_mode_is_kept(
        server, expected) -> None:
    async with OpenAISimulator(SimConfig(profile=PROFILES[server])) as simulator:
        client = gateway(simulator, server="other")
        first = await client.complete(model=MODEL, system=JUDGE_SYSTEM, user=JUDGE_USER, max_tokens=800,
                                      json_schema=JUDGE_REPLY_SCHEMA)
        refused = len(simulator.of_kind("unsupported"))
        await judge(client)  # the second call goes straight to the mode that worked
    assert decisions(first.text)[0]["pair"] == "p1"
    assert client.structured_output == expected
    assert client.describe()["structured_output"] == f"{expected} (the server refused json_schema)"
    assert len(simulator.of_kind("unsupported")) == refused == (1 if expected == "tools" else 2)
    assert [c.mode for c in simulator.of_kind("judge")] == [expected, expected]


async def test_a_mode_set_by_hand_that_the_server_refuses_fails_naming_the_setting() -> None:
    async with OpenAISimulator(SimConfig(profile=PROFILES["no-json-schema"])) as simulator:
        error = await failure(gateway(simulator, server="other", adaptive=False))
    assert error.kind == LLM_REJECTED and "WIKI_LLM_STRUCTURED_OUTPUT" in error.message


async def test_unusable_json_is_repaired_once_with_both_calls_counted(openai_sim) -> None:
    openai_sim.fail_next("malformed", "judge")
    reply = await judge(gateway(openai_sim))
    first, second = openai_sim.of_kind("judge")
    assert decisions(reply.text)[0]["pair"] == "p1"
    assert second.repair and second.body["messages"][-2]["role"] == "assistant"
    assert "cannot be used" in second.body["messages"][-1]["content"]
    assert reply.usage.output_tokens == first.completion_tokens + second.completion_tokens


async def test_json_unusable_after_its_one_repair_is_an_invalid_plan_carrying_both_calls_tokens(openai_sim) -> None:
    openai_sim.fail_next("malformed", "judge", times=2)
    error = await failure(gateway(openai_sim))
    calls = openai_sim.of_kind("judge")
    assert error.kind == PLAN_INVALID and len(calls) == 2
    assert error.spent.output_tokens == sum(c.completion_tokens for c in calls)


async def test_a_rate_limit_is_throttling_after_the_servers_retry_after(openai_sim) -> None:
    openai_sim.fail_next("rate_limit", retry_after=7)
    error = await failure(gateway(openai_sim))
    assert error.kind == LLM_THROTTLED and error.retry_after == timedelta(seconds=7) and error.benign
    assert as_application_error(error).next_retry_delay == timedelta(seconds=7)


@pytest.mark.parametrize(("fault", "kind"), [("overloaded", LLM_THROTTLED), ("server_error", LLM_UNAVAILABLE),
                                             ("drop_before", LLM_UNAVAILABLE)])
async def test_busy_failing_and_dropping_servers_are_retryable(openai_sim, fault, kind) -> None:
    openai_sim.fail_next(fault)
    error = await failure(gateway(openai_sim))
    assert error.kind == kind and error.retryable


@pytest.mark.parametrize("fault", ["hang", "stall", "drop", "error_event"])
async def test_a_call_cut_short_is_an_interruption(openai_sim, fault) -> None:
    openai_sim.config.hang_seconds = 30
    openai_sim.fail_next(fault)
    # No first chunk within a second (hang), or nothing for a second after the first (stall).
    short = {"hang": {"first_token_seconds": 1.0}, "stall": {"stall_timeout_seconds": 1.0}}.get(fault, {})
    error = await failure(gateway(openai_sim, **short))
    assert error.kind == LLM_INTERRUPTED and not error.retryable
    if fault in ("stall", "drop", "error_event"):  # it had started: the prompt was read, and is counted
        assert error.spent.input_tokens > 0


async def test_a_prompt_over_the_context_window_is_split_as_a_truncation(openai_sim) -> None:
    openai_sim.fail_next("context_length")
    error = await failure(gateway(openai_sim))
    assert error.kind == LLM_TRUNCATED and "context window" in error.message


async def test_a_reply_cut_off_at_max_tokens_is_a_truncation_with_its_usage(openai_sim) -> None:
    openai_sim.fail_next("truncate")
    error = await failure(gateway(openai_sim))
    assert error.kind == LLM_TRUNCATED and error.spent.output_tokens == openai_sim.calls[-1].completion_tokens


async def test_a_refusal_is_an_invalid_plan(openai_sim) -> None:
    openai_sim.fail_next("refusal")
    error = await failure(gateway(openai_sim))
    assert error.kind == PLAN_INVALID and "declined" in error.message


async def test_a_prompt_the_server_cut_silently_fails_naming_the_context_settings(openai_sim) -> None:
    openai_sim.fail_next("silent_cut")
    client = gateway(openai_sim)
    with pytest.raises(StepFailed) as raised:
        await client.complete(model=MODEL, system=JUDGE_SYSTEM, user=JUDGE_USER * 200, max_tokens=800,
                              json_schema=JUDGE_REPLY_SCHEMA)
    await client.aclose()
    assert raised.value.kind == LLM_REJECTED
    assert "OLLAMA_CONTEXT_LENGTH" in raised.value.message and "WIKI_RECORD_PAGE_SIZE" in raised.value.message


async def test_a_server_that_is_down_is_one_line_saying_so_and_retryable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    error = await failure(OpenAICompatibleClient(base_url=f"http://127.0.0.1:{port}/v1"))
    assert error.kind == LLM_UNAVAILABLE and error.retryable
    assert "is not reachable" in error.message and "\n" not in error.message


async def test_a_wrong_key_and_an_unknown_model_fail_at_once_naming_the_setting() -> None:
    async with OpenAISimulator(SimConfig(api_keys={"right"})) as simulator:
        bad_key = await failure(gateway(simulator, api_key="wrong"))
        unknown = await failure(gateway(simulator, api_key="right"), model="no-such-model")
    assert bad_key.kind == LLM_REJECTED and "WIKI_OPENAI_API_KEY" in bad_key.message
    assert unknown.kind == LLM_REJECTED and "WIKI_MODEL_ID" in unknown.message


async def test_an_unstructured_call_sends_no_schema_and_returns_the_text(openai_sim) -> None:
    client = gateway(openai_sim)
    reply = await client.complete(model=MODEL, system="You write.", user="Say something.", max_tokens=100)
    await client.aclose()
    body = openai_sim.calls[-1].body
    assert reply.text and not {"response_format", "tools"} & body.keys()
    assert body["messages"][0] == {"role": "system", "content": "You write."}


# ------------------------------------------------------------------ settings


def local_env(monkeypatch, **env: str) -> None:
    for name in ("WIKI_OPENAI_BASE_URL", "WIKI_OPENAI_SERVER", "WIKI_MODEL_ID", "WIKI_LLM_STRUCTURED_OUTPUT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("WIKI_LLM", "openai-compatible")
    for name, value in env.items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize(("env", "variable"), [
    ({"WIKI_OPENAI_SERVER": "ollama"}, "WIKI_MODEL_ID: must be set"),
    ({"WIKI_MODEL_ID": "two words"}, "WIKI_MODEL_ID"),
    ({"WIKI_MODEL_ID": MODEL}, "WIKI_OPENAI_BASE_URL must be set when WIKI_OPENAI_SERVER=other"),
    ({"WIKI_MODEL_ID": MODEL, "WIKI_OPENAI_BASE_URL": "localhost:11434/v1"}, "WIKI_OPENAI_BASE_URL: must be an http"),
    ({"WIKI_MODEL_ID": MODEL, "WIKI_OPENAI_SERVER": "tgi"}, "WIKI_OPENAI_SERVER"),
    ({"WIKI_MODEL_ID": MODEL, "WIKI_OPENAI_SERVER": "ollama", "WIKI_LLM_STRUCTURED_OUTPUT": "grammar"},
     "WIKI_LLM_STRUCTURED_OUTPUT"),
    ({"WIKI_MODEL_ID": MODEL, "WIKI_OPENAI_SERVER": "ollama", "WIKI_LLM_PRICE_INPUT_PER_MTOK": "-1"},
     "WIKI_LLM_PRICE_INPUT_PER_MTOK"),
])
def test_bad_local_model_settings_name_the_variable(monkeypatch, env, variable) -> None:
    local_env(monkeypatch, **env)
    with pytest.raises(ConfigError, match=variable):
        load_settings()


@pytest.mark.parametrize(("server", "url", "mode"), [("ollama", "http://127.0.0.1:11434/v1", "json_schema"),
                                                     ("vllm", "http://127.0.0.1:8000/v1", "json_schema"),
                                                     ("lm-studio", "http://127.0.0.1:1234/v1", "json_schema"),
                                                     ("llama-cpp", "http://127.0.0.1:8080/v1", "json_schema")])
def test_each_server_has_its_default_address_and_structured_output_mode(monkeypatch, server, url, mode) -> None:
    local_env(monkeypatch, WIKI_OPENAI_SERVER=server, WIKI_MODEL_ID=MODEL)
    settings = load_settings()
    gateway = build_model_client(settings)
    assert (settings.openai_base_url, settings.structured_output()) == (url, mode)
    assert isinstance(gateway, OpenAICompatibleClient) and gateway.structured_output == mode
    assert gateway.base_url == url and gateway.price.input == gateway.price.output == 0


def test_an_unknown_server_is_asked_for_tool_calls_and_a_mode_set_by_hand_wins(monkeypatch) -> None:
    local_env(monkeypatch, WIKI_OPENAI_BASE_URL="http://gpu-box:9000/v1/", WIKI_MODEL_ID="Qwen/Qwen2.5-7B-Instruct")
    assert load_settings().structured_output() == "tools"
    monkeypatch.setenv("WIKI_LLM_STRUCTURED_OUTPUT", "json")
    settings = load_settings()
    assert settings.structured_output() == "json" and settings.openai_base_url == "http://gpu-box:9000/v1"
    assert compile_options(settings, model_id="llama3.1:8b").model_id == "llama3.1:8b"


async def test_the_forgets_rederivation_goes_through_the_gateway_with_its_schema(openai_sim) -> None:
    task = RederiveTask(section_id="s1", page_title="Casa Sol", page_type="entity", slug="visits", heading="Visits",
                        lines=[RederiveLine(text="- 2026-10-03: Dinner at Casa Sol with Lena."),
                               RederiveLine(text="- 2026-10-05: Back at Casa Sol with Sam.", redo=True,
                                            memory_ids=["m2"])],
                        memories=[RederiveMemory(id="m2", content="Back at Casa Sol, alone this time.",
                                                 day="2026-10-05")])
    client = gateway(openai_sim)
    reply = await ClaudeRederiver(client).rederive(task, MODEL)
    await client.aclose()
    [call] = openai_sim.of_kind("rederive")
    assert call.mode == "json_schema" and call.status == 200
    assert reply.body.splitlines()[0] == "- 2026-10-03: Dinner at Casa Sol with Lena."
    assert reply.usage.input_tokens == call.prompt_tokens and reply.usage.cost_usd == 0
