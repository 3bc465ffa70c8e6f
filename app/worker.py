"""The worker: polls the task queue and runs compile workflows and their activities.

`wiki worker` (or `python worker.py`) runs until SIGTERM/SIGINT, then shuts down gracefully:
it stops polling, lets activities in flight finish within the grace period, and hands the rest
back to Temporal to retry elsewhere (every activity is idempotent).
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable
from contextlib import AsyncExitStack
from datetime import timedelta
from uuid import UUID

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig
from temporalio.worker import PollerBehaviorAutoscaling, Worker

from activities.aggregation import Aggregation
from activities.attempts import AttemptLedger
from activities.batches import MessageBatches
from activities.capacity import Capacity
from activities.compile_steps import CompileSteps
from activities.deferred_calls import DeferredCalls
from activities.forget import Forgetting
from activities.lint import CompileWaker, Lint
from activities.planning import Planning
from app.cache_eviction import forgets_followed
from app.capacity import WorkerCapacity, worker_capacity
from app.recall import embedder_for
from domain.pricing import flat_price
from messages.compile import WorkerCapacityReport
from planners import cpu_pool
from planners.claude_client import ModelClient, ModelGateway
from planners.claude_planner import ClaudePlanner
from planners.openai_client import OpenAICompatibleClient
from planners.port import Planner
from planners.rederive import ClaudeRederiver, Rederiver, ScriptedRederiver
from planners.scripted.planner import ScriptedPlanner
from runtime.database import create_engine, migrate
from runtime.priority import apply_tenant_rate_limit
from runtime.settings import ConfigError, Settings, get_settings
from runtime.temporal_client import connect, signal_compile
from workflows.compile import CompileWorkflow
from workflows.lint import LintWorkflow

WORKFLOWS = [CompileWorkflow, LintWorkflow]
log = logging.getLogger("wiki.worker")


def bedrock_setup_problem(settings: Settings) -> str | None:
    """Why Bedrock calls could not be signed (one sentence), or None. A Bedrock API key needs nothing
    else; SigV4 needs boto3 and credentials from the AWS chain (environment, profile, role)."""
    if settings.aws_bearer_token_bedrock:
        return None
    try:
        import boto3
    except ImportError:
        return ("WIKI_LLM=bedrock signs requests with boto3, which is not installed: install the bedrock extra "
                "(pip install -e '.[bedrock]')")
    if boto3.Session(region_name=settings.aws_region).get_credentials() is None:
        return ("WIKI_LLM=bedrock found no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                "AWS_PROFILE, or a Bedrock API key in AWS_BEARER_TOKEN_BEDROCK")
    return None


def build_model_client(settings: Settings) -> ModelGateway:
    """The model gateway `WIKI_LLM` names (its SDK's own retries off: Temporal retries). Claude: on
    Bedrock it gets the Bedrock API key or signs with AWS credentials, never the Anthropic key; a missing
    piece stops start-up; the SDK reads ANTHROPIC_BASE_URL / ANTHROPIC_BEDROCK_BASE_URL itself. An
    OpenAI-compatible server: its address, key, structured-output mode and price from the settings."""
    stall = settings.llm_stall_timeout_seconds
    min_rate = settings.llm_min_output_tokens_per_second
    if settings.llm == "openai-compatible":
        key = settings.openai_api_key
        return OpenAICompatibleClient(
            base_url=settings.openai_base_url, api_key=key.get_secret_value() if key else None,
            server=settings.openai_server, structured_output=settings.structured_output(),
            adaptive=settings.llm_structured_output == "auto",
            price=flat_price(settings.llm_price_input_per_mtok, settings.llm_price_output_per_mtok),
            stall_timeout_seconds=stall, min_output_tokens_per_second=min_rate,
            first_token_seconds=settings.llm_first_token_seconds)
    if settings.llm == "bedrock":
        problem = bedrock_setup_problem(settings)
        if problem:
            raise ConfigError(problem)
        token = settings.aws_bearer_token_bedrock
        return ModelClient(provider="bedrock", api_key=token.get_secret_value() if token else None,
                           aws_region=settings.aws_region, stall_timeout_seconds=stall,
                           min_output_tokens_per_second=min_rate, first_token_seconds=settings.llm_first_token_seconds)
    api_key = settings.anthropic_api_key.get_secret_value() if settings.anthropic_api_key else None
    return ModelClient(provider="anthropic", api_key=api_key, stall_timeout_seconds=stall,
                       min_output_tokens_per_second=min_rate, first_token_seconds=settings.llm_first_token_seconds)


def build_planner(settings: Settings, model_client: ModelGateway | None = None) -> Planner:
    """The one place the planner is chosen: `WIKI_LLM`, or Claude through `model_client` when given."""
    if model_client is not None:
        return ClaudePlanner(model_client)
    if settings.llm == "scripted":
        return ScriptedPlanner(latency_seconds=settings.scripted_latency_ms / 1000)
    return ClaudePlanner(build_model_client(settings))


def _batch_client(settings: Settings, planner: Planner) -> ModelClient | None:
    """The Claude client behind a model planner, for Message Batches (None for the scripted planner and
    an OpenAI-compatible server, which have none)."""
    client = planner.client if isinstance(planner, ClaudePlanner) else None
    return client if isinstance(client, ModelClient) else None


def model_facts(planner: Planner) -> Callable[[], dict[str, str]]:
    """What each run's ledger row records of the model: the provider and the structured-output mode."""
    client = planner.client if isinstance(planner, ClaudePlanner) else None

    def facts() -> dict[str, str]:
        if isinstance(client, OpenAICompatibleClient):
            return client.describe()
        if client is not None:  # Claude answers through one forced tool (planners/claude_client.py)
            return {"llm_provider": client.provider, "structured_output": "tools"}
        return {"llm_provider": "scripted"}

    return facts


def build_rederiver(settings: Settings, planner: Planner) -> Rederiver:
    """The writer that re-derives lines after a forget: Claude's when the planner is, else the scripted one."""
    if isinstance(planner, ClaudePlanner):
        return ClaudeRederiver(planner.client)
    return ScriptedRederiver(latency_seconds=settings.scripted_latency_ms / 1000)


def compile_waker(settings: Settings) -> CompileWaker:
    """How the lint wakes a scope's compile: signal-with-start with this worker's compile options."""

    async def wake(client: Client, tenant: str, owner: str, mention_ids: list[UUID]) -> object:
        return await signal_compile(client, tenant, owner, trigger="lint", promotion_mention_ids=mention_ids,
                                    settings=settings)

    return wake


def capacity_for(settings: Settings, planner: Planner) -> WorkerCapacity:
    """What a worker with this planner runs at once (app/capacity.py): the scripted planner computes."""
    return worker_capacity(settings, cpu_bound=isinstance(planner, ScriptedPlanner))


def activities_for(engine: AsyncEngine, settings: Settings, model_client: ModelGateway | None = None,
                   planner: Planner | None = None) -> list:
    planner = planner or build_planner(settings, model_client)
    sizes = capacity_for(settings, planner)
    capacity = Capacity(WorkerCapacityReport(activity_slots=sizes.activity_slots, section_writes=sizes.section_writes,
                                             cpu_threads=sizes.cpu_threads))
    steps = CompileSteps(engine, embedder_for(settings), model_facts(planner))
    deferred = DeferredCalls(engine, settings.llm_batch_window_seconds)
    planning = Planning(engine, planner, deferred)
    batches = MessageBatches(engine, _batch_client(settings, planner), settings.llm_batch_window_seconds,
                             judge=planner)
    aggregation = Aggregation(engine, planner, deferred)
    lint = Lint(engine, compile_waker(settings))
    forgetting = Forgetting(engine, build_rederiver(settings, planner))
    return [
        steps.start_run, steps.next_batch, steps.resolve_plan, steps.apply_batch, steps.finish_run,
        planning.plan_batch, planning.write_section, planning.judge_merges,
        batches.submit, batches.poll, batches.collect, batches.erase,
        aggregation.plan, aggregation.resolve, aggregation.apply,
        lint.run_checks, lint.prune_ledger, lint.record, lint.wake_compiles,
        forgetting.prepare, forgetting.rederive_section, forgetting.apply,
        capacity.report,
    ]


HEARTBEAT_SEND_INTERVAL = timedelta(seconds=2)


def worker_sizes(settings: Settings, model_client: ModelGateway | None = None) -> WorkerCapacity:
    """The sizes of this process's workers, for its engine's pool: every activity and local activity
    holds at most one connection, so the pool holds one for each (a smaller pool made activities
    queue for a connection until they timed out when many scopes compiled at once)."""
    # The planner build_planner would choose, without building it: the scripted one computes.
    return worker_capacity(settings, cpu_bound=model_client is None and settings.llm == "scripted")


def _worker_defaults(options: dict, engine: AsyncEngine, sizes: WorkerCapacity) -> dict:
    # Sized to what this worker can serve (app/capacity.py), not a fixed count.
    if "tuner" not in options:  # a tuner (tests, a deployment's own) sizes every slot kind itself
        options.setdefault("max_concurrent_activities", sizes.activity_slots)
        options.setdefault("max_concurrent_local_activities", sizes.local_activity_slots)
    # Every compile activity attempt that times out, is cancelled or fails is written down (the ledger's
    # attempts_* counts, the lint's retrying steps).
    options["interceptors"] = [*options.get("interceptors", ()), AttemptLedger(engine)]
    # A batch schedules all its section writes at once: a fixed handful of pollers picked them up a
    # few at a time; autoscaling pollers follow the server's backlog.
    options.setdefault("activity_task_poller_behavior", PollerBehaviorAutoscaling())
    # By default the SDK sends heartbeats at most every 0.8 x the heartbeat timeout (8 s of 10 s),
    # leaving a loaded server 2 s to record one before the attempt times out. Sending every 2 s leaves
    # most of the timeout as slack.
    options.setdefault("max_heartbeat_throttle_interval", HEARTBEAT_SEND_INTERVAL)
    return options


def build_worker(client: Client, engine: AsyncEngine, settings: Settings, *, task_queue: str | None = None,
                 model_client=None, planner: Planner | None = None, **worker_options) -> Worker:
    """The compile queue's worker; `planner` replaces the one the settings choose (tests, fault suites)."""
    cpu_pool.configure(settings.worker_cpu_threads or None)
    planner = planner or build_planner(settings, model_client)
    return Worker(
        client,
        task_queue=task_queue or settings.task_queue,
        workflows=WORKFLOWS,
        activities=activities_for(engine, settings, planner=planner),
        graceful_shutdown_timeout=timedelta(seconds=30),
        **_worker_defaults(worker_options, engine, capacity_for(settings, planner)),
    )


def build_llm_worker(client: Client, engine: AsyncEngine, settings: Settings, *, model_client=None,
                     activities: list | None = None, **worker_options) -> Worker:
    """The worker of WIKI_LLM_TASK_QUEUE, where workflows schedule their model calls.

    Temporal dispatches at most WIKI_LLM_MAX_PER_SECOND activities a second from that queue, to all its
    workers together. Every activity is registered, so the workflow alone decides what runs here; the
    compile worker keeps them all too, for workflows started before the queue was configured.
    """
    if not settings.llm_task_queue:
        raise ConfigError("WIKI_LLM_TASK_QUEUE is not set: there is no model-call queue to serve")
    cpu_pool.configure(settings.worker_cpu_threads or None)
    return Worker(
        client,
        task_queue=settings.llm_task_queue,
        activities=activities if activities is not None else activities_for(engine, settings, model_client),
        max_task_queue_activities_per_second=settings.llm_max_per_second,
        graceful_shutdown_timeout=timedelta(seconds=30),
        **_worker_defaults(worker_options, engine, worker_sizes(settings, model_client)),
    )


def build_workers(client: Client, engine: AsyncEngine, settings: Settings) -> list[Worker]:
    """The workers of one worker process: the compile queue's, and WIKI_LLM_TASK_QUEUE's when it is set."""
    workers = [build_worker(client, engine, settings)]
    if settings.llm_task_queue:
        workers.append(build_llm_worker(client, engine, settings))
    return workers


async def run_worker(settings: Settings | None = None, *, stop: asyncio.Event | None = None) -> None:
    settings = settings or get_settings()
    runtime = None
    if settings.metrics_port:
        runtime = Runtime(telemetry=TelemetryConfig(
            metrics=PrometheusConfig(bind_address=f"{settings.metrics_host}:{settings.metrics_port}")))
    client = await connect(settings, runtime=runtime) if runtime else await connect(settings)
    # Two workers (compile queue and model queue) may share this engine: a connection for each slot of each.
    engine = create_engine(pool_size=worker_sizes(settings).database_connections)
    await migrate(engine)
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    workers = build_workers(client, engine, settings)
    if await apply_tenant_rate_limit(client, settings):
        log.info("each tenant's model calls limited to %s/s (times its weight) on %s",
                 settings.tenant_max_per_second(), settings.llm_task_queue)
    log.info("worker polling %s on %s", ", ".join(w.task_queue for w in workers),
             settings.temporal_address or "the embedded dev server")
    try:
        async with AsyncExitStack() as running:
            # Every cache of this process drops a scope as soon as any process commits a forget of it.
            await running.enter_async_context(forgets_followed(engine))
            for worker in workers:
                await running.enter_async_context(worker)
            await stop.wait()
            log.info("shutting down: finishing activities in flight")
    finally:
        await engine.dispose()

