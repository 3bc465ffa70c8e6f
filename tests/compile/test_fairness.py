"""Priority on a busy model queue: an interactive compile's model calls go before those of bootstrap
imports scheduled earlier (the compiles carry a priority from their start; their activities inherit it).

The model worker gets one slot at a time, and only once every compile has its next model call waiting
in the queue (Temporal's own description of each run), so each dispatch is a choice the server makes
between a bootstrap's task and the interactive one: nothing depends on timing.
"""

from __future__ import annotations

import asyncio
import uuid
from contextlib import asynccontextmanager

import pytest
from temporalio.api.enums.v1 import PendingActivityState, TaskQueueKind, TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.common import Priority
from temporalio.worker import (
    ActivityInboundInterceptor,
    CustomSlotSupplier,
    ExecuteActivityInput,
    FixedSizeSlotSupplier,
    Interceptor,
    SlotMarkUsedContext,
    SlotPermit,
    SlotReleaseContext,
    SlotReserveContext,
    WorkerTuner,
)

from app.operations import lint_schedule
from app.worker import build_llm_worker
from domain.fairness import LINT_FAIRNESS_KEY, priority_key
from runtime.priority import apply_tenant_rate_limit
from runtime.temporal_client import signal_compile
from tests.compile.helpers import poll, retain_sample, running_worker
from tests.compile.helpers import test_settings as settings_for

BOOTSTRAP_SCOPES = 3
MODEL_ACTIVITIES = ("llm.", "aggregation.plan")
WAIT_SECONDS = 60


class OneSlotAtATime(CustomSlotSupplier):
    """Activity slots handed out only when the test says so, one per `grant()`."""

    def __init__(self) -> None:
        self._grants = asyncio.Semaphore(0)
        self.busy = 0

    def grant(self) -> None:
        self._grants.release()

    async def reserve_slot(self, ctx: SlotReserveContext) -> SlotPermit:
        await self._grants.acquire()
        return SlotPermit()

    def try_reserve_slot(self, ctx: SlotReserveContext) -> SlotPermit | None:
        return None

    def mark_slot_used(self, ctx: SlotMarkUsedContext) -> None:
        self.busy += 1

    def release_slot(self, ctx: SlotReleaseContext) -> None:
        if ctx.slot_info is not None:
            self.busy -= 1


class DispatchOrder(Interceptor):
    """Records the workflow id of every activity the worker starts, in order."""

    def __init__(self) -> None:
        self.workflow_ids: list[str] = []

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        order = self

        class Recording(ActivityInboundInterceptor):
            async def execute_activity(self, input: ExecuteActivityInput):
                from temporalio import activity

                order.workflow_ids.append(activity.info().workflow_id or "")
                return await super().execute_activity(input)

        return Recording(next)


async def waiting_model_call(handle: WorkflowHandle) -> bool | None:
    """True when the run has a model call waiting in the queue, None when it has closed, else False."""
    description = await handle.describe()
    if description.status != WorkflowExecutionStatus.RUNNING:
        return None
    return any(activity.activity_type.name.startswith(MODEL_ACTIVITIES)
               and activity.state == PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED
               for activity in description.raw_description.pending_activities)


@asynccontextmanager
async def gated_model_worker(client: Client, engine, settings, slots: OneSlotAtATime, order: DispatchOrder):
    tuner = WorkerTuner.create_composite(
        workflow_supplier=FixedSizeSlotSupplier(5), activity_supplier=slots,
        local_activity_supplier=FixedSizeSlotSupplier(5), nexus_supplier=FixedSizeSlotSupplier(1))
    worker = build_llm_worker(client, engine, settings, tuner=tuner, interceptors=[order])
    async with worker:
        yield
        for _ in range(10):  # free any reservation still waiting, so the worker can shut down
            slots.grant()


async def dispatch_order(client: Client, engine, fairness: bool) -> tuple[list[str], list[str], str]:
    """Bootstrap imports of one tenant, then an interactive compile of another, on a model queue served
    one slot at a time: the workflow ids in the order their model calls were dispatched, until the
    interactive compile finished (or, without fairness, until the first dispatch)."""
    settings = settings_for(WIKI_LLM_TASK_QUEUE=f"llm-{uuid.uuid4()}", WIKI_FAIRNESS_ENABLED=fairness)
    big, small = f"big-{uuid.uuid4().hex[:8]}", f"small-{uuid.uuid4().hex[:8]}"
    for index in range(BOOTSTRAP_SCOPES):
        await retain_sample(engine, big, f"agent{index}", 12, seed=index + 1)
    await retain_sample(engine, small, "agent", 6, seed=99)
    slots, order = OneSlotAtATime(), DispatchOrder()

    async with running_worker(client, engine, settings):
        bootstraps = []
        for index in range(BOOTSTRAP_SCOPES):
            handle = await signal_compile(client, big, f"agent{index}", trigger="bootstrap_import", settings=settings)
            await poll(lambda h=handle: waiting_model_call(h), timeout=WAIT_SECONDS, what="a bootstrap's model call")
            bootstraps.append(handle)
        interactive = await signal_compile(client, small, "agent", trigger="memory_retain", settings=settings)
        await poll(lambda: waiting_model_call(interactive), timeout=WAIT_SECONDS, what="the retain's model call")

        async with gated_model_worker(client, engine, settings, slots, order):
            while True:
                async def settled() -> bool:
                    # Every bootstrap waits with a model call (they get no slot meanwhile), and the
                    # interactive compile has its next one queued or has finished.
                    if not all([await waiting_model_call(h) for h in bootstraps]):
                        return False
                    return await waiting_model_call(interactive) is not False

                await poll(settled, timeout=WAIT_SECONDS, what="every compile's next model call to be queued")
                if await waiting_model_call(interactive) is None:
                    break
                dispatched = len(order.workflow_ids)
                slots.grant()

                async def ran(dispatched: int = dispatched) -> bool:
                    return len(order.workflow_ids) > dispatched and slots.busy == 0

                await poll(ran, timeout=WAIT_SECONDS, what="the granted model call to run")
                if not fairness:
                    break
            for handle in bootstraps:
                await handle.terminate("the test has seen the order it checks")
            if not fairness:
                await interactive.terminate("the test has seen the order it checks")
    return order.workflow_ids, [h.id for h in bootstraps], interactive.id


@pytest.mark.parametrize("fairness", [True, False], ids=["fairness-on", "fairness-off"])
async def test_a_bootstrap_does_not_run_ahead_of_a_later_interactive_compile(client, engine, fairness):
    order, bootstraps, interactive = await dispatch_order(client, engine, fairness)
    if fairness:
        assert order and set(order) == {interactive}, (
            f"model calls dispatched while the interactive compile ran: {order}; bootstraps {bootstraps}")
    else:
        # Without priorities the queue is first in, first out: the earlier bootstrap goes first. This is
        # what the priority changes, and shows the setup can tell the two apart.
        assert order[:1] == bootstraps[:1], order


async def test_a_compile_keeps_the_priority_it_started_with_across_continue_as_new(client, engine):
    """The workflows pass no priority: the start's must reach every run of the chain."""
    tenant = f"paying-{uuid.uuid4().hex[:8]}"
    settings = settings_for(WIKI_FAIRNESS_TENANT_WEIGHTS=f"{tenant}=4", WIKI_RECORD_PAGE_SIZE=5,
                            WIKI_MAX_RECORDS_PER_BOOTSTRAP_RUN=5)
    await retain_sample(engine, tenant, "agent", 12)
    async with running_worker(client, engine, settings):
        handle = await signal_compile(client, tenant, "agent", trigger="bootstrap_import", settings=settings)
        await handle.result()

    async def three_runs() -> list:
        # 12 memories at 5 a run make 3 runs; visibility lists them once it has caught up.
        runs = [run async for run in client.list_workflows(f"WorkflowId = '{handle.id}'")]
        return runs if len(runs) == 3 else []

    runs = await poll(three_runs, timeout=WAIT_SECONDS, what="the chain's three runs in visibility")
    expected = Priority(priority_key=priority_key("bootstrap_import"), fairness_key=tenant, fairness_weight=4.0)
    for run in runs:
        description = await client.get_workflow_handle(handle.id, run_id=run.run_id).describe()
        assert Priority._from_proto(description.raw_description.workflow_execution_info.priority) == expected


def test_the_lint_schedule_starts_its_workflow_with_the_lint_priority():
    action = lint_schedule(settings_for()).action
    assert action.priority == Priority(priority_key=priority_key("lint"), fairness_key=LINT_FAIRNESS_KEY)


async def test_the_worker_sets_each_tenants_model_call_limit_on_the_model_queue(client):
    queue, shared = f"llm-{uuid.uuid4()}", f"llm-{uuid.uuid4()}"
    assert not await apply_tenant_rate_limit(client, settings_for(WIKI_LLM_TASK_QUEUE=queue))

    async def configured(name: str) -> float:
        response = await client.workflow_service.describe_task_queue(DescribeTaskQueueRequest(
            namespace=client.namespace, task_queue=TaskQueue(name=name, kind=TaskQueueKind.TASK_QUEUE_KIND_NORMAL),
            task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY, report_config=True))
        return response.config.fairness_keys_rate_limit_default.rate_limit.requests_per_second

    assert await configured(queue) == 0
    assert await apply_tenant_rate_limit(client, settings_for(WIKI_LLM_TASK_QUEUE=queue,
                                                               WIKI_LLM_TENANT_MAX_PER_SECOND=2.5))
    # With only the queue's rate set, a tenant gets WIKI_LLM_TENANT_QUOTA_SHARE of it (0.85 by default).
    assert await apply_tenant_rate_limit(client, settings_for(WIKI_LLM_TASK_QUEUE=shared, WIKI_LLM_MAX_PER_SECOND=2))

    async def limits_set() -> bool:
        # The matching service takes the update in on its own time: on a busy machine a describe just
        # after it may still report the old configuration.
        return await configured(queue) == 2.5 and round(await configured(shared), 3) == 1.7

    assert await poll(limits_set, timeout=WAIT_SECONDS, what="the queues' per-tenant limits")
