"""Connecting to Temporal and starting/waking compiles. One place for the data converter."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from temporalio.api.enums.v1 import IndexedValueType, TaskQueueKind, TaskQueueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest, ListSearchAttributesRequest
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest, DescribeTaskQueueRequest
from temporalio.client import Client, WorkflowHandle
from temporalio.common import Priority, SearchAttributePair, TypedSearchAttributes, WorkflowIDConflictPolicy
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.service import RPCError, RPCStatusCode

from domain.model_ids import model_id_problem
from messages.compile import (
    CompileInput,
    CompileOptions,
    RunCaps,
    Scope,
    Trigger,
    WakeUp,
    compile_workflow_id,
    run_summary,
)
from runtime.priority import compile_priority
from runtime.search_attributes import WIKI_OWNER, WIKI_RUN, WIKI_TENANT, WIKI_TRIGGER
from runtime.settings import ConfigError, Settings, get_settings, model_provider


def resolve_temporal_address(settings: Settings | None = None) -> str:
    """TEMPORAL_ADDRESS when set; otherwise the embedded dev server, started if needed."""
    settings = settings or get_settings()
    if settings.temporal_address:
        return settings.temporal_address
    from runtime.devservices import DevTemporal

    return DevTemporal.from_settings(settings).ensure_running()


# How long a command waits for a Temporal server that answers but is still starting ("Frontend is not
# healthy yet", its namespace not registered yet) before it gives up.
HEALTH_WAIT_SECONDS = 60.0
HEALTH_PROBE_EVERY_SECONDS = 0.25


class TemporalNotHealthy(RuntimeError):
    """The server answered, but was still not ready for requests after the bounded wait."""


async def wait_until_healthy(client: Client, address: str, namespace: str, *,
                             on_wait: Callable[[str], None] | None = None,
                             timeout: float = HEALTH_WAIT_SECONDS) -> None:
    """Return once the frontend says it is serving and the namespace is known; say once, through
    `on_wait`, what is being waited for; fail in one sentence after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    told = False
    while True:
        try:
            healthy = await client.service_client.check_health(timeout=timedelta(seconds=5))
            if healthy:
                await client.workflow_service.describe_namespace(
                    DescribeNamespaceRequest(namespace=namespace), timeout=timedelta(seconds=5))
                return
            problem = "its frontend is not serving yet"
        except RPCError as error:
            problem = " ".join(str(error).split()) or error.status.name
        if loop.time() >= deadline:
            raise TemporalNotHealthy(f"Temporal at {address} is still not ready after {timeout:.0f} s: {problem}")
        if not told and on_wait is not None:
            on_wait(f"waiting up to {timeout:.0f} s for Temporal at {address} to be ready ({problem})")
            told = True
        await asyncio.sleep(HEALTH_PROBE_EVERY_SECONDS)


async def connect(settings: Settings | None = None, *, on_wait: Callable[[str], None] | None = None,
                  **kwargs) -> Client:
    """A client of a server ready for requests: one that is still starting is waited for (bounded)."""
    settings = settings or get_settings()
    address = resolve_temporal_address(settings)
    client = await Client.connect(address, namespace=settings.temporal_namespace,
                                  data_converter=pydantic_data_converter, **kwargs)
    await wait_until_healthy(client, address, settings.temporal_namespace, on_wait=on_wait)
    return client


def compile_options(settings: Settings, *, model_id: str | None = None, bootstrap: bool = False,
                    debounce: bool = True) -> CompileOptions:
    if model_id:
        problem = model_id_problem(model_provider(settings.llm), model_id, settings.aws_region)
        if problem:
            raise ConfigError(f"--model: {problem}")
    return CompileOptions(
        model_id=model_id or settings.model_id,
        debounce_seconds=settings.debounce_seconds if debounce else 0.0,
        caps=RunCaps(
            page_size=settings.page_size(),
            max_records=settings.max_records_per_bootstrap_run if bootstrap else settings.max_records_per_run,
            max_new_pages=settings.max_new_pages_per_run,
            max_sections_rewritten=settings.max_sections_rewritten_per_run,
            section_writer_concurrency=settings.section_writer_concurrency,
            max_candidate_pages=settings.max_candidate_pages,
        ),
        aggregation_enabled=settings.aggregation_pass_enabled,
        deterministic_linking_enabled=settings.deterministic_linking_enabled,
        llm_retry_budget_seconds=settings.llm_retry_budget_seconds,
        heartbeat_timeout_seconds=settings.heartbeat_timeout_seconds,
        llm_task_queue=settings.llm_task_queue,
        batch_triggers=batch_triggers(settings),
        batch_poll_seconds=settings.llm_batch_poll_seconds,
        overlap_planning=settings.overlap_planning,
    )


# The triggers of bulk compiles, whose latency matters less than their price.
BULK_TRIGGERS: list[Trigger] = ["bootstrap_import", "rebuild"]


def batch_triggers(settings: Settings) -> list[Trigger]:
    """The triggers whose plans go through Message Batches: none when batch mode is off, or when the
    provider has no Message Batches (Bedrock: the compile falls back to interactive calls)."""
    if settings.llm_batch_mode == "off" or settings.llm != "anthropic":
        return []
    return list(BULK_TRIGGERS)


async def signal_compile(
    client: Client,
    tenant: str,
    owner: str,
    *,
    trigger: Trigger = "memory_retain",
    memory_count: int = 0,
    settings: Settings | None = None,
    model_id: str | None = None,
    promotion_mention_ids: list | None = None,
    forget: bool = False,
) -> WorkflowHandle:
    """Signal-with-start the scope's CompileWorkflow: wakes the running one, or starts a new one.
    `forget`: a forget or edit request is queued for the scope (served between batches).

    Retain and lint debounce (bursts collapse into one pass); admin triggers compile at once.
    """
    settings = settings or get_settings()
    bootstrap = trigger == "bootstrap_import"
    options = compile_options(settings, model_id=model_id, bootstrap=bootstrap,
                              debounce=trigger == "memory_retain")
    scope = Scope(tenant=tenant, owner=owner)
    registered = False
    while True:
        try:
            return await _signal_with_start(client, scope, trigger, options, memory_count, settings, model_id,
                                            promotion_mention_ids, forget)
        except RPCError as error:
            if error.status != RPCStatusCode.INVALID_ARGUMENT or WIKI_RUN.name not in error.message:
                raise
            if not settings.temporal_address and not registered:
                # The embedded dev server was started before WikiRun existed: it is ours to register.
                await _register_on_dev_server(client, settings)
                registered = True
                continue
        raise SearchAttributeMissing(
            f"Temporal namespace {settings.temporal_namespace} has no search attribute {WIKI_RUN.name}: register it "
            f"with `temporal operator search-attribute create --namespace {settings.temporal_namespace} "
            f"--name {WIKI_RUN.name} --type Int` (the embedded dev server registers it when it starts: "
            "`wiki dev down`, then `wiki dev up`)") from None


async def _register_on_dev_server(client: Client, settings: Settings) -> None:
    await client.operator_service.add_search_attributes(AddSearchAttributesRequest(
        namespace=settings.temporal_namespace,
        search_attributes={WIKI_RUN.name: IndexedValueType.INDEXED_VALUE_TYPE_INT}))
    # The namespace's attribute cache catches up within moments; bounded.
    for _ in range(100):
        response = await client.operator_service.list_search_attributes(
            ListSearchAttributesRequest(namespace=settings.temporal_namespace))
        if WIKI_RUN.name in response.custom_attributes:
            return
        await asyncio.sleep(0.1)


class SearchAttributeMissing(RuntimeError):
    """The namespace lacks a search attribute compiles set; the message says how to register it."""


async def _signal_with_start(client: Client, scope: Scope, trigger: Trigger, options: CompileOptions,
                             memory_count: int, settings: Settings, model_id: str | None,
                             promotion_mention_ids: list | None, forget: bool = False) -> WorkflowHandle:
    tenant, owner = scope.tenant, scope.owner
    return await client.start_workflow(
        "CompileWorkflow",
        CompileInput(scope=scope, trigger=trigger, options=options, forget_pending=forget),
        id=compile_workflow_id(tenant, owner),
        task_queue=settings.task_queue,
        start_signal="wake",
        start_signal_args=[WakeUp(trigger=trigger, memory_count=memory_count, model_id=model_id, forget=forget,
                                  promotion_mention_ids=promotion_mention_ids or [])],
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        # Set on a start only: a wake-up of a running compile leaves the priority it started with.
        priority=compile_priority(settings, tenant, trigger) or Priority.default,
        search_attributes=TypedSearchAttributes([
            SearchAttributePair(WIKI_TENANT, tenant),
            SearchAttributePair(WIKI_OWNER, owner),
            SearchAttributePair(WIKI_TRIGGER, trigger),
            SearchAttributePair(WIKI_RUN, 1),
        ]),
        # Only the first run can have a summary (continue-as-new cannot set one); every run's current
        # details start with the same line, and WikiRun numbers the runs.
        static_summary=run_summary(scope, 1, trigger),
    )


# The server lists a poller for minutes after its worker is gone; a live worker polls again at least
# once a minute (a long poll's expiry), so an older last access is a worker that has stopped.
LIVE_POLLER_WITHIN = timedelta(seconds=90)


async def live_pollers(client: Client, task_queue: str) -> list[str]:
    """Identities of the workers polling `task_queue` for workflow tasks now (DescribeTaskQueue)."""
    response = await client.workflow_service.describe_task_queue(DescribeTaskQueueRequest(
        namespace=client.namespace,
        task_queue=TaskQueue(name=task_queue, kind=TaskQueueKind.TASK_QUEUE_KIND_NORMAL),
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    ))
    recent = datetime.now(UTC) - LIVE_POLLER_WITHIN
    return [poller.identity for poller in response.pollers
            if not poller.HasField("last_access_time") or poller.last_access_time.ToDatetime(UTC) >= recent]
