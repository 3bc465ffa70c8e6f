"""No log line holds memory or reply text: a compile through the SDK whose model replies fail validation
(prose instead of a plan, a plan of the wrong shape, an aggregation plan of the wrong shape), with every
log record of every logger captured at DEBUG, names neither the memories' words nor the replies'.
The failures' messages also reach workflow history: it holds neither either."""

from __future__ import annotations

import logging
import random

import pytest
from pydantic import BaseModel, ValidationError

from domain.memory import MemoryIn
from domain.plan import Plan
from domain.reply_errors import reply_problem
from store.memories import store_memories
from tests.compile.helpers import compile_scope, ledger
from tests.compile.test_forget import history_text, new_scope
from tests.compile.test_forget_everywhere import logged
from tests.compile.test_model_path import model_worker

SYLLABLES = ["zor", "blim", "quax", "prent", "vush", "gloam", "trib", "snel"]


def nonce(rng: random.Random) -> str:
    return "".join(rng.sample(SYLLABLES, 3))


@pytest.mark.parametrize("seed", [5])
async def test_a_compile_whose_replies_fail_validation_logs_none_of_their_text(client, engine, sim, caplog,
                                                                             seed) -> None:
    caplog.set_level(logging.DEBUG)
    rng = random.Random(seed)
    memory_word, prose_word, shape_word, aggregation_word = (nonce(rng) for _ in range(4))
    tenant, owner = new_scope()
    memories = [MemoryIn.model_validate({
        "content": f"Lunch with Lena at the {memory_word} diner, day {day}; she ordered the soup.",
        "metadata": {"entities": [{"name": "Lena", "type": "entity", "kind": "person"}]},
        "occurred_at": f"2026-03-{day:02d}T12:00:00Z"}) for day in (3, 9, 17)]
    await store_memories(engine, tenant, owner, memories)
    # The planner answers prose once, then a plan of the wrong shape (each value quoting a word of its
    # own); the aggregation planner a plan of the wrong shape. The brain answers everything after.
    sim.answer_next("planner", lambda user: f"Here is my plan: {prose_word} all the way. {memory_word}!")
    sim.answer_next("planner", lambda user: {"newPages": [{"type": "entity", "title": f"{shape_word} {memory_word}",
                                                           "sections": f"{shape_word} {memory_word}"}]})
    sim.answer_next("aggregation", lambda user: {"newPages": f"{aggregation_word} {memory_word}",
                                                 "pageUpdates": {aggregation_word: memory_word}})
    async with model_worker(client, engine, "anthropic", WIKI_AGGREGATION_PASS_ENABLED=True) as settings:
        await compile_scope(client, settings, tenant, owner)
    runs = await ledger(engine, tenant, owner)
    assert runs and runs[-1]["metrics"]["invalid_plans"] >= 1, runs  # the replies did fail validation
    assert any(c.reply_text and prose_word in c.reply_text for c in sim.of_kind("planner"))
    text = logged(caplog)
    history = (await history_text(client, tenant, owner)).lower()
    assert "invalid" in text or "not json" in text or "does not match" in text  # the failures were logged
    for word in (memory_word, prose_word, shape_word, aggregation_word):
        assert word not in text, word
        assert word not in history, word


class _Reply(BaseModel):
    names: dict[str, int]
    count: int


def test_a_reply_problem_says_where_and_what_kind_never_the_value() -> None:
    secret = "quaxglomvush"
    for raw, model in (({"names": {secret: "x"}, "count": secret}, _Reply),
                       ({"newPages": [{"title": secret, "sections": secret}]}, Plan)):
        with pytest.raises(ValidationError) as caught:
            model.model_validate(raw)
        assert secret in str(caught.value)  # pydantic's own message would have quoted it
        problem = reply_problem(caught.value, model)
        assert secret not in problem and problem
    with pytest.raises(ValidationError) as caught:
        _Reply.model_validate({"names": {secret: "x"}, "count": 1})
    assert reply_problem(caught.value, _Reply) == "names.?: int_parsing"
