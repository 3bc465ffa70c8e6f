"""What one worker runs at once (app/capacity.py), and the scope a compile's workflow id names."""

from __future__ import annotations

import random
import string

import pytest

from app.capacity import (
    LOCAL_ACTIVITY_SLOTS,
    MODEL_SLOTS,
    SCRIPTED_SLOTS_PER_CPU,
    SLOTS_BESIDE_WRITES,
    worker_capacity,
)
from app.worker import capacity_for
from messages.compile import compile_workflow_id, scope_of_workflow_id
from planners.claude_client import ModelClient
from planners.claude_planner import ClaudePlanner
from planners.cpu_pool import available_cpus
from planners.scripted.planner import ScriptedPlanner
from runtime.settings import Settings


def settings(**values) -> Settings:
    return Settings(**{"WIKI_LLM": "scripted", **values})


def test_a_computing_planner_gets_slots_per_cpu_and_its_writes_leave_room_beside_them() -> None:
    sizes = worker_capacity(settings(WIKI_WORKER_CPU_THREADS=3), cpu_bound=True)
    assert (sizes.cpu_threads, sizes.activity_slots) == (3, 3 * SCRIPTED_SLOTS_PER_CPU)
    assert sizes.section_writes == sizes.activity_slots - SLOTS_BESIDE_WRITES
    assert sizes.database_connections == sizes.activity_slots + LOCAL_ACTIVITY_SLOTS
    assert worker_capacity(settings(), cpu_bound=True).cpu_threads == available_cpus()


def test_a_model_planner_follows_the_model_quota() -> None:
    assert worker_capacity(settings(), cpu_bound=False).activity_slots == MODEL_SLOTS
    limited = settings(WIKI_LLM_TASK_QUEUE="llm", WIKI_LLM_MAX_PER_SECOND=0.5)
    assert worker_capacity(limited, cpu_bound=False).activity_slots == 10  # 0.5 a second x 20 s in flight


@pytest.mark.parametrize("slots, writes", [(1, 1), (2, 1), (3, 1), (40, 38)])
def test_an_operator_may_size_the_worker_and_a_batch_still_writes(slots: int, writes: int) -> None:
    sizes = worker_capacity(settings(WIKI_WORKER_ACTIVITY_SLOTS=slots), cpu_bound=True)
    assert (sizes.activity_slots, sizes.section_writes) == (slots, writes)


def test_bad_sizes_stop_start_up() -> None:
    with pytest.raises(ValueError, match="WIKI_WORKER_ACTIVITY_SLOTS"):
        settings(WIKI_WORKER_ACTIVITY_SLOTS=-1)
    with pytest.raises(ValueError, match="WIKI_WORKER_CPU_THREADS"):
        settings(WIKI_WORKER_CPU_THREADS="many")


def test_the_worker_knows_which_planners_compute() -> None:
    scripted = capacity_for(settings(), ScriptedPlanner())
    claude = capacity_for(settings(), ClaudePlanner(ModelClient(provider="anthropic", api_key="k")))
    assert scripted.activity_slots == available_cpus() * SCRIPTED_SLOTS_PER_CPU
    assert claude.activity_slots == MODEL_SLOTS


@pytest.mark.parametrize("seed", range(30))
def test_a_compile_workflow_id_names_its_scope_back(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits + "_.:@-%"
    tenant, owner = ("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(2))
    scope = scope_of_workflow_id(compile_workflow_id(tenant, owner))
    assert (scope.tenant, scope.owner) == (tenant, owner)
