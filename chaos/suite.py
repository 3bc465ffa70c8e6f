"""The suite's shared state: services, seed databases, the fault-free reference, and run helpers.

The seed database holds the migrated schema and the 700-memory sample in the scope chaos/alice.
Every run compiles a clone of it, so the memories — ids and timestamps — are the same in every run
and the reference, and any difference in the wiki is the fault's doing.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.service import RPCError

from chaos.measure import (
    HistoryStats,
    WikiDiff,
    compare,
    cross_scope_rows,
    history_stats,
    isolation_breaches,
    ledger_llm_calls,
    ledger_rows,
)
from chaos.processes import Fleet
from chaos.services import Databases, TemporalServer, engine_for
from domain.memory import MemoryIn
from messages.compile import compile_workflow_id
from runtime.database import migrate
from runtime.devservices import EmbeddedPostgres
from runtime.settings import Settings
from runtime.temporal_client import signal_compile
from store.memories import store_memories
from tests.compile.helpers import poll as wait_until
from tests.compile.helpers import sample_memories, wiki_snapshot

T = TypeVar("T")
TENANT, OWNER = "chaos", "alice"
SAMPLE_MEMORIES = 700
SEED_DB = "chaos_seed"
VICTIM_DB = "chaos_seed_victim"
VICTIM = ("victim", "alice")
VICTIM_MEMORIES = 150
CANARY = "CANARY-7f3e9b2c"
HEARTBEAT_TIMEOUT_SECONDS = 2
COMPILE_TIMEOUT_SECONDS = 900
POLL_SECONDS = 0.1


class ScenarioError(AssertionError):
    """The scenario could not run as designed (not a finding about the product)."""


async def poll(check: Callable[[], Awaitable[T]], *, timeout: float, what: str, every: float = POLL_SECONDS) -> T:
    return await wait_until(check, timeout=timeout, what=what, every=every, error=ScenarioError)


def canary_memories() -> list[MemoryIn]:
    """Two memories about a place only the victim knows, so it gets a page holding the canary."""
    entity = {"name": "Victim Secret Garden", "type": "entity", "kind": "park", "aliases": []}
    place = {"name": "Victim Secret Garden", "city": "Austin", "types": ["park"]}
    return [MemoryIn(content=f"Eric walked in the Victim Secret Garden again ({CANARY}, visit {n}).",
                     metadata={"entities": [entity], "place": place}) for n in (1, 2)]


@dataclass
class Reference:
    snapshot: dict[str, list[tuple]]
    llm_calls: int
    seconds: float
    runs: int


@dataclass
class Judgement:
    """A finished run of chaos/alice measured against the reference."""

    diff: WikiDiff
    ledger: list[dict[str, Any]]
    llm_calls: int
    history: HistoryStats
    breaches: dict[str, int]
    reference_llm_calls: int

    @property
    def statuses(self) -> list[str]:
        return [row["status"] for row in self.ledger]

    @property
    def succeeded(self) -> bool:
        return bool(self.ledger) and self.statuses[-1] == "succeeded" and "failed" not in self.statuses

    @property
    def isolated(self) -> bool:
        return isolation_breaches(self.breaches) == 0

    def wasted_by_retries(self) -> int:
        """Model calls repeated (Temporal's attempt counts: at most this many answers were thrown
        away) plus any extra calls the ledger counted over the reference."""
        return self.history.retried_model_attempts + max(0, self.llm_calls - self.reference_llm_calls)

    def wasted_of_journal(self, model_calls_made: int) -> int:
        """Calls that reached the (fake) model minus the calls whose answer the compile used."""
        return model_calls_made - self.history.model_calls_used


@dataclass
class Suite:
    root: Path
    postgres: EmbeddedPostgres
    temporal: TemporalServer
    databases: Databases
    client: Client
    rng: random.Random
    reference: Reference | None = None
    _templates: set[str] = field(default_factory=set)

    # ------------------------------------------------------------------ configuration

    def settings(self, **env: Any) -> Settings:
        """What the suite starts compiles with (the workflow's options come from these)."""
        values = {"WIKI_TASK_QUEUE": f"chaos-{uuid.uuid4().hex[:10]}", "WIKI_LLM": "scripted",
                  "WIKI_DEBOUNCE_SECONDS": 0, "WIKI_HEARTBEAT_TIMEOUT_SECONDS": HEARTBEAT_TIMEOUT_SECONDS,
                  "TEMPORAL_ADDRESS": self.temporal.address, "WIKI_DATA_DIR": str(self.root / "data")}
        return Settings(**{**values, **env})

    def worker_env(self, settings: Settings, database_url: str, **extra: str) -> dict[str, str]:
        env = {"DATABASE_URL": database_url, "TEMPORAL_ADDRESS": self.temporal.address,
               "WIKI_TASK_QUEUE": settings.task_queue, "WIKI_LLM": "scripted", "WIKI_SCRIPTED_LATENCY_MS": "20",
               "WIKI_HEARTBEAT_TIMEOUT_SECONDS": str(HEARTBEAT_TIMEOUT_SECONDS),
               "WIKI_DATA_DIR": str(self.root / "data")}
        if settings.llm_task_queue:
            env["WIKI_LLM_TASK_QUEUE"] = settings.llm_task_queue
        return {**env, **extra}

    def fleet(self, label: str, settings: Settings, database_url: str, **extra: str) -> Fleet:
        return Fleet(self.root / "logs" / label, self.worker_env(settings, database_url, **extra))

    # ------------------------------------------------------------------ databases

    async def build_seed(self) -> None:
        url = await self.databases.create(SEED_DB)
        engine = engine_for(url)
        try:
            await migrate(engine)
            stored = await store_memories(engine, TENANT, OWNER, sample_memories(SAMPLE_MEMORIES))
            if stored.changed != SAMPLE_MEMORIES:
                raise ScenarioError(f"the seed holds {stored.changed} memories, not {SAMPLE_MEMORIES}")
        finally:
            await engine.dispose()
        self._templates.add(SEED_DB)

    async def build_victim_seed(self) -> None:
        """The seed plus another tenant's compiled wiki: the same sample (same titles and aliases)
        and a page only it has, whose text carries a canary."""
        if VICTIM_DB in self._templates:
            return
        url = await self.databases.create(VICTIM_DB, SEED_DB)
        engine = engine_for(url)
        try:
            await store_memories(engine, *VICTIM, sample_memories(VICTIM_MEMORIES) + canary_memories())
            settings = self.settings()
            with self.fleet("victim-seed", settings, url) as fleet:
                fleet.product_worker()
                await self.compile(settings, *VICTIM)
        finally:
            await engine.dispose()
        self._templates.add(VICTIM_DB)

    @asynccontextmanager
    async def database(self, label: str, template: str = SEED_DB) -> AsyncIterator[tuple[str, AsyncEngine]]:
        async with self.databases.clone(template, label) as url:
            engine = engine_for(url)
            try:
                yield url, engine
            finally:
                await engine.dispose()

    # ------------------------------------------------------------------ compiles

    async def start_compile(self, settings: Settings, tenant: str = TENANT, owner: str = OWNER,
                            trigger: str = "admin") -> WorkflowHandle:
        return await signal_compile(self.client, tenant, owner, trigger=trigger, settings=settings)

    async def wait_for_compile(self, tenant: str = TENANT, owner: str = OWNER,
                               timeout: float = COMPILE_TIMEOUT_SECONDS) -> None:
        """Until the scope's workflow (following continue-as-new) has completed; rides out a
        Temporal outage (the RPC fails, the next poll reconnects)."""
        handle = self.client.get_workflow_handle(compile_workflow_id(tenant, owner))

        async def completed() -> bool:
            try:
                description = await handle.describe()
            except RPCError:
                return False
            status = description.status
            if status == WorkflowExecutionStatus.RUNNING:
                return False
            if status != WorkflowExecutionStatus.COMPLETED:
                raise ScenarioError(f"the compile of {tenant}/{owner} ended {status.name}")
            return True

        await poll(completed, timeout=timeout, what=f"the compile of {tenant}/{owner}", every=0.25)

    async def compile(self, settings: Settings, tenant: str = TENANT, owner: str = OWNER) -> None:
        await self.start_compile(settings, tenant, owner)
        await self.wait_for_compile(tenant, owner)

    async def run_ids(self, engine: AsyncEngine, tenant: str = TENANT, owner: str = OWNER) -> list[str]:
        return [row["run_id"] for row in await ledger_rows(engine, tenant, owner)]

    async def histories_of(self, engine: AsyncEngine, tenant: str = TENANT, owner: str = OWNER) -> HistoryStats:
        workflow_id = compile_workflow_id(tenant, owner)
        return await history_stats(self.client, workflow_id, await self.run_ids(engine, tenant, owner))

    async def compute_reference(self) -> Reference:
        async with self.database("reference") as (url, engine):
            settings = self.settings()
            started = time.monotonic()
            with self.fleet("reference", settings, url) as fleet:
                fleet.product_worker()
                await self.compile(settings)
            seconds = time.monotonic() - started
            rows = await ledger_rows(engine, TENANT, OWNER)
            self.reference = Reference(snapshot=await wiki_snapshot(engine, TENANT, OWNER),
                                       llm_calls=ledger_llm_calls(rows), seconds=seconds, runs=len(rows))
        return self.reference

    async def judge(self, engine: AsyncEngine, tenant: str = TENANT, owner: str = OWNER) -> Judgement:
        if self.reference is None:
            raise ScenarioError("the reference must be computed first")
        rows = await ledger_rows(engine, tenant, owner)
        return Judgement(diff=compare(await wiki_snapshot(engine, tenant, owner), self.reference.snapshot),
                         ledger=rows, llm_calls=ledger_llm_calls(rows),
                         history=await self.histories_of(engine, tenant, owner),
                         breaches=await cross_scope_rows(engine), reference_llm_calls=self.reference.llm_calls)

    async def reconnect(self) -> None:
        self.client = await self.temporal.client()
