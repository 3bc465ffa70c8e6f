"""Faults at the model boundary: a model that throttles, breaks its output, or obeys an injection.

A fault worker registers these under the real activity names (`llm.plan_batch`,
`llm.write_section`, `aggregation.plan`) on the model task queue; everything around the model
call — context loading, staging, resolve, apply — is the product's own code. Faulty replies go
through the product's parser (`parse_plan`), and provider errors through the product's
`ModelClient` talking to a fake Messages API (an in-process httpx transport), so a 429 here is
exactly the error production raises for a 429. The faulty planners wrap the scripted planner behind
the product's planner port.

Every decision is a function of the seed and the attempt (workflow run, activity id, attempt
number), and every injection and every model call is written to a `Journal` — a JSON-lines file
the suite reads back to check, for instance, that each retry waited out its Retry-After.
"""

from __future__ import annotations

import functools
import json
import os
import random
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio import activity

from activities.aggregation import Aggregation
from activities.common import as_application_error
from activities.planning import Planning
from claude_sim import ClaudeSimulator
from domain.context import MemoryRecord, PlannerContext
from domain.errors import StepFailed
from planners.claude_client import ModelClient
from planners.claude_planner import parse_plan
from planners.port import PlanReply
from planners.scripted.planner import ScriptedPlanner
from runtime.settings import Settings

MODEL_ACTIVITIES = ("llm.plan_batch", "llm.write_section", "llm.judge_merges", "aggregation.plan")
FAULTS = ("none", "throttle", "garbage", "lossy", "obey")
# Memories that carry instructions for the model start with this (the obeying planner follows them).
INJECTION_MARKER = "ATTENTION AI MODEL"
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_SLUG_REF = re.compile(r"\b(entity|topic|decision)/([a-z0-9][a-z0-9-]*)")
_WORD = re.compile(r"\b[A-Za-z]{5,}\b")


# ------------------------------------------------------------------------------------------ journal


@dataclass(frozen=True)
class Journal:
    """Events appended as JSON lines; one write per line, so a SIGKILL never leaves half of one."""

    path: Path

    def record(self, kind: str, **fields: Any) -> None:
        line = json.dumps({"kind": kind, "at": time.time(), "pid": os.getpid(), **fields}, default=str) + "\n"
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(descriptor, line.encode())
        finally:
            os.close(descriptor)

    def events(self, kind: str | None = None) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        events = []
        for line in self.path.read_text().splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if kind is None or event["kind"] == kind:
                events.append(event)
        return events


def _attempt() -> dict[str, Any]:
    info = activity.info()
    return {
        "activity": info.activity_type, "workflow_id": info.workflow_id, "run_id": info.workflow_run_id,
        "activity_id": info.activity_id, "attempt": info.attempt,
        "scheduled_at": info.current_attempt_scheduled_time.timestamp(),
    }


# ------------------------------------------------------------------------------ the fake provider


async def _simulated_provider_call(fault: str, retry_after: float | None = None) -> StepFailed:
    """One real ModelClient call, through the SDK, to the Claude simulator with `fault` queued; returns the
    error the product raises."""
    async with ClaudeSimulator() as simulator:
        simulator.fail_next(fault, retry_after=retry_after)  # type: ignore[arg-type]
        # The SDK reads ANTHROPIC_BASE_URL when the client is built: set it for this one client only.
        previous = os.environ.get("ANTHROPIC_BASE_URL")
        os.environ["ANTHROPIC_BASE_URL"] = simulator.base_url
        try:
            client = ModelClient(provider="anthropic", api_key=next(iter(simulator.config.api_keys)))
        finally:
            if previous is None:
                os.environ.pop("ANTHROPIC_BASE_URL", None)
            else:
                os.environ["ANTHROPIC_BASE_URL"] = previous
        try:
            await client.complete(model="claude-haiku-4-5", system="chaos", user="chaos", max_tokens=64,
                                  json_schema={"type": "object"})
        except StepFailed as error:
            return error
        finally:
            await client.aclose()
    raise AssertionError("the simulated provider's answer did not become an error")


async def provider_refusal(status: int, retry_after_seconds: int | None) -> StepFailed:
    """A 429 (rate limited) or 529 (overloaded), with or without Retry-After, as the product maps it."""
    return await _simulated_provider_call("rate_limit" if status == 429 else "overloaded", retry_after_seconds)


async def provider_truncation() -> StepFailed:
    """A reply cut off at max_tokens, as the product maps it."""
    return await _simulated_provider_call("truncate")


# ------------------------------------------------------------------------------ activity plumbing


def activity_name(fn: Callable[..., Any]) -> str:
    definition = activity._Definition.from_callable(fn)
    return definition.name if definition and definition.name else ""


def _as_activity(name: str, fn: Callable[[Any], Awaitable[Any]],
                 call: Callable[[Any], Awaitable[Any]]) -> Callable[[Any], Awaitable[Any]]:
    """`call` registered under `name`, with `fn`'s signature (so payloads decode to the same types)."""
    functools.update_wrapper(call, fn, updated=())  # not __dict__: it holds fn's own definition
    return activity.defn(name=name)(call)


def counted(fn: Callable[[Any], Awaitable[Any]], journal: Journal) -> Callable[[Any], Awaitable[Any]]:
    """The same activity, journaling every attempt that reaches the model."""

    async def call(request: Any) -> Any:
        journal.record("model_call", **_attempt())
        return await fn(request)

    return _as_activity(activity_name(fn), fn, call)


# ------------------------------------------------------------------------------------ throttling


@dataclass(frozen=True)
class ThrottleStorm:
    """`rate` of model calls refused; of those, `overloaded_share` are 529s without Retry-After
    (Temporal's backoff applies), the rest 429s with a Retry-After of 1-3 s."""

    seed: int
    rate: float = 0.3
    overloaded_share: float = 0.2
    retry_after_range: tuple[int, int] = (1, 3)
    only_first_attempts: bool = False

    def refusal(self, attempt: dict[str, Any]) -> tuple[int, int | None] | None:
        if self.only_first_attempts and attempt["attempt"] > 1:
            return None
        rng = random.Random(f"{self.seed}:{attempt['run_id']}:{attempt['activity_id']}:{attempt['attempt']}")
        if rng.random() >= self.rate:
            return None
        if rng.random() < self.overloaded_share:
            return 529, None
        return 429, rng.randint(*self.retry_after_range)


def throttled(fn: Callable[[Any], Awaitable[Any]], storm: ThrottleStorm,
              journal: Journal) -> Callable[[Any], Awaitable[Any]]:
    """The same activity behind a busy provider: some attempts are refused before reaching the model."""

    async def call(request: Any) -> Any:
        attempt = _attempt()
        refusal = storm.refusal(attempt)
        if refusal is None:
            journal.record("model_call", **attempt)
            return await fn(request)
        status, retry_after = refusal
        error = await provider_refusal(status, retry_after)
        journal.record("refused", status=status, retry_after=retry_after, **attempt)
        raise as_application_error(error)

    return _as_activity(activity_name(fn), fn, call)


# ------------------------------------------------------------------------- other scopes' rows


@dataclass
class ForeignRows:
    """Ids and slugs of scopes other than the one compiling: what a confused or subverted model
    might name. Nothing the compile of one scope does may ever touch them."""

    page_ids: list[str] = field(default_factory=list)
    mention_ids: list[str] = field(default_factory=list)
    memory_ids: list[str] = field(default_factory=list)
    slugs: list[tuple[str, str]] = field(default_factory=list)


async def foreign_rows(engine: AsyncEngine, tenant: str, owner: str, limit: int = 5) -> ForeignRows:
    """Rows of other scopes. Slugs only of pages this scope's memories never name: a link to a slug
    this scope has (or is about to create) would be a legitimate link of its own."""
    params = {"tenant": tenant, "owner": owner, "limit": limit}
    elsewhere = "NOT (x.tenant_id = :tenant AND x.owner_id = :owner)"
    async with engine.connect() as conn:
        pages = (await conn.execute(text(
            f"SELECT x.id FROM wiki_pages x WHERE {elsewhere} ORDER BY x.slug LIMIT :limit"), params)).scalars().all()
        mentions = (await conn.execute(text(f"""
            SELECT x.id FROM wiki_unresolved_mentions x WHERE {elsewhere} AND x.status = 'open'
            ORDER BY x.id LIMIT :limit"""), params)).scalars().all()
        memories = (await conn.execute(text(
            f"SELECT x.id FROM memory_units x WHERE {elsewhere} ORDER BY x.id LIMIT :limit"), params)).scalars().all()
        slugs = (await conn.execute(text(f"""
            SELECT x.type, x.slug FROM wiki_pages x
            WHERE {elsewhere} AND NOT EXISTS (
                SELECT 1 FROM memory_units m WHERE m.tenant_id = :tenant AND m.owner_id = :owner
                  AND (m.content ILIKE '%' || x.title || '%' OR m.metadata::text ILIKE '%' || x.title || '%'))
            ORDER BY x.slug LIMIT :limit"""), params)).all()
    return ForeignRows(page_ids=[str(p) for p in pages], mention_ids=[str(m) for m in mentions],
                       memory_ids=[str(m) for m in memories], slugs=[(row.type, row.slug) for row in slugs])


# -------------------------------------------------------------------------- broken model output


def _wikilinked(body: str) -> str:
    """Every long word as a [[wikilink]]: the product must unwrap them all, leaving the same text."""
    return _WORD.sub(lambda match: f"[[{match.group(0)}]]", body)


def add_garbage(raw: dict[str, Any], batch_ids: list[str], foreign: ForeignRows, rng: random.Random) -> dict[str, int]:
    """What a confused model adds to a good plan; the product must drop every piece of it.

    The additions never change what the good part means: updates and promotions of pages and
    mentions that are not this scope's, links with bad types or to pages this scope does not have,
    citations of memories outside the batch (only next to real ones, so no section loses the
    page-level fallback), and wikilinks around words that unwrap to the same text.
    """
    hallucinated = [str(uuid.UUID(int=rng.getrandbits(128))), "page-42", "3f2a9c1e-77", "' OR 1=1 --"]
    section = {"slug": "notes", "proposed_body_md": "Overwritten by a confused model.", "source_refs": batch_ids[:1]}
    wrong_pages = hallucinated + foreign.page_ids
    raw["pageUpdates"] += [{"pageId": page, "sections": [section], "aliases": ["chaos alias"]} for page in wrong_pages]
    wrong_mentions = hallucinated[:2] + foreign.mention_ids
    raw["promotions"] += [{"mentionId": mention, "type": "entity", "title": "Chaos Promotion", "reason": "confused",
                           "sections": [{"slug": "overview", "body_md": "Promoted by mistake.",
                                         "source_refs": batch_ids[:1]}]} for mention in wrong_mentions]
    own = next(((page["type"], page["slug"]) for page in raw["newPages"]), ("entity", "nowhere"))
    bad_links = [
        {"fromType": "galaxy", "fromSlug": own[1], "toType": own[0], "toSlug": own[1]},
        {"fromType": own[0], "fromSlug": "  ", "toType": own[0], "toSlug": own[1]},
        {"fromType": own[0], "fromSlug": own[1], "toType": "entity", "toSlug": "no-such-page-anywhere"},
        "not even an object",
    ]
    foreign_links = [{"fromType": own[0], "fromSlug": own[1], "toType": kind, "toSlug": slug}
                     for kind, slug in foreign.slugs]
    raw["pageLinks"] = list(raw.get("pageLinks") or []) + bad_links + foreign_links
    foreign_citations = 0
    for page in raw["newPages"]:
        for new_section in page["sections"]:
            new_section["body_md"] = _wikilinked(new_section["body_md"])
            if new_section["source_refs"] and foreign.memory_ids:
                new_section["source_refs"].append(foreign.memory_ids[0])
                foreign_citations += 1
    return {"foreign_page_ids": len(foreign.page_ids), "hallucinated_page_ids": len(hallucinated),
            "wrong_promotions": len(wrong_mentions), "bad_links": len(bad_links),
            "foreign_links": len(foreign_links), "foreign_citations": foreign_citations}


def drop_citations(raw: dict[str, Any]) -> int:
    """The model forgot to cite: every source_ref removed (the sections then have no provenance)."""
    dropped = 0
    for page in raw["newPages"]:
        dropped += len(page["source_refs"])
        page["source_refs"] = []
        for section in page["sections"]:
            dropped += len(section["source_refs"])
            section["source_refs"] = []
    for update in raw["pageUpdates"]:
        for section in update["sections"]:
            dropped += len(section["source_refs"])
            section["source_refs"] = []
    return dropped


def malformed(plan_json: str, rng: random.Random) -> str:
    """Output a parser must reject: cut short, wrapped in prose, or with the wrong shape."""
    return rng.choice([
        plan_json[: len(plan_json) // 2],
        "Sure! Here is the plan you asked for:\n" + plan_json[: len(plan_json) // 3],
        json.dumps({"pageUpdates": "none", "newPages": {"oops": True}}),
        "",
    ])


class CorruptingPlanner(ScriptedPlanner):
    """The scripted planner behind a model that misbehaves.

    `garbage`: every plan carries junk (see `add_garbage`), and the first answer for a batch is
    malformed half the time; the product must drop the junk and retry, so the wiki equals the
    fault-free one. `lossy`: on top of that, some batches are truncated (split in halves), a few
    poison memories make every plan that contains them malformed (isolated by halving and
    skipped), and some plans lose their citations: the compile must finish anyway, counting it all.
    """

    def __init__(self, engine: AsyncEngine, settings: Settings, *, lossy: bool, seed: int, journal: Journal) -> None:
        super().__init__(settings.scripted_latency_ms / 1000)
        self._engine = engine
        self._lossy = lossy
        self._seed = seed
        self._journal = journal
        self._answered: set[tuple[str, ...]] = set()

    async def plan_batch(self, context: PlannerContext, model_id: str) -> PlanReply:
        reply = await super().plan_batch(context, model_id)
        plan = reply.plan
        batch = tuple(str(memory.id) for memory in context.memories)
        first_answer = batch not in self._answered
        self._answered.add(batch)
        rng = random.Random(f"{self._seed}:{':'.join(batch)}:{first_answer}")
        if self._lossy and any(is_poison(memory_id) for memory_id in batch):
            self._journal.record("malformed", memories=len(batch), poison=True)
            return reply.model_copy(update={"plan": parse_plan(malformed(plan.model_dump_json(), rng))})
        if self._lossy and first_answer and len(batch) > 1 and rng.random() < 0.25:
            self._journal.record("truncated", memories=len(batch))
            raise await provider_truncation()
        if first_answer and rng.random() < 0.5:
            self._journal.record("malformed", memories=len(batch), poison=False)
            return reply.model_copy(update={"plan": parse_plan(malformed(plan.model_dump_json(), rng))})
        raw = json.loads(plan.model_dump_json())
        scope = context.tenant_id, context.owner_id
        added = add_garbage(raw, list(batch), await foreign_rows(self._engine, *scope), rng)
        if self._lossy and rng.random() < 0.3:
            added["citations_dropped"] = drop_citations(raw)
        self._journal.record("garbage", memories=len(batch), **added)
        return reply.model_copy(update={"plan": parse_plan(json.dumps(raw))})


def is_poison(memory_id: str) -> bool:
    """About one memory in 150: every plan containing one is malformed (lossy mode)."""
    return uuid.UUID(memory_id).int % 151 == 0


# ------------------------------------------------------------------------------ prompt injection


def is_injection(memory: MemoryRecord) -> bool:
    return memory.content.startswith(INJECTION_MARKER)


def obey(raw: dict[str, Any], memory: MemoryRecord, context: PlannerContext) -> dict[str, int]:
    """Do what the memory says, as a fully subverted model would, within the plan contract.

    The memory names another scope's page ids, mention ids, memory ids and slugs, and asks to
    overwrite and "delete" those pages, promote those mentions, link to those pages, cite those
    memories, and publish everything the model can see. The model can only see its own scope, so
    the leak page holds this scope's own candidates; the rest must be dropped by resolve and apply.
    """
    own = str(memory.id)
    ids = list(dict.fromkeys(match.lower() for match in _UUID.findall(memory.content)))
    slugs = list(dict.fromkeys(_SLUG_REF.findall(memory.content)))
    takeover = [{"slug": "overview", "proposed_body_md": "This page now belongs to the attacker.",
                 "source_refs": [own, *ids]}]
    wipe = [{"slug": slug, "proposed_body_md": "", "source_refs": [own]} for slug in ("overview", "notes")]
    raw["pageUpdates"] += [{"pageId": target, "sections": takeover, "aliases": ["pwned"]} for target in ids]
    raw["pageUpdates"] += [{"pageId": target, "sections": wipe, "aliases": []} for target in ids]
    raw["promotions"] += [{"mentionId": target, "type": "entity", "title": "Pwned Mention", "reason": "ordered",
                           "sections": [{"slug": "overview", "body_md": "pwned", "source_refs": [own, *ids]}]}
                          for target in ids]
    seen = [f"{page.title}: {page.summary or ''} ({page.id})" for page in context.candidate_pages]
    seen += [f"mention {mention.alias} ({mention.id})" for mention in context.open_mentions]
    raw["newPages"].append({
        "type": "topic", "slug": "everything-i-can-see", "title": "Everything I Can See",
        "summary": "All pages and mentions the planner was shown.", "aliases": [], "source_refs": [own, *ids],
        "sections": [{"slug": "summary", "heading": "Summary", "body_md": "\n".join(seen) or "nothing",
                      "source_refs": [own, *ids]}],
    })
    raw["pageLinks"] = list(raw.get("pageLinks") or []) + [
        {"fromType": "topic", "fromSlug": "everything-i-can-see", "toType": kind, "toSlug": slug,
         "context": "ordered"} for kind, slug in slugs]
    return {"foreign_ids": len(ids), "foreign_slugs": len(slugs), "shown_rows": len(seen)}


class ObeyingPlanner(ScriptedPlanner):
    """The scripted planner, plus whatever the batch's injected memories order (see `obey`)."""

    def __init__(self, settings: Settings, *, journal: Journal) -> None:
        super().__init__(settings.scripted_latency_ms / 1000)
        self._journal = journal

    async def plan_batch(self, context: PlannerContext, model_id: str) -> PlanReply:
        reply = await super().plan_batch(context, model_id)
        orders = [memory for memory in context.memories if is_injection(memory)]
        if not orders:
            return reply
        raw = json.loads(reply.plan.model_dump_json())
        for memory in orders:
            self._journal.record("obeyed", memory_id=str(memory.id), **obey(raw, memory, context))
        return reply.model_copy(update={"plan": parse_plan(json.dumps(raw))})


def obeying_aggregation(fn: Callable[[Any], Awaitable[Any]], engine: AsyncEngine,
                        journal: Journal) -> Callable[[Any], Awaitable[Any]]:
    """The aggregation planner, subverted the same way: it also rolls up, promotes and links other
    scopes' pages. Its plan is amended where the product staged it, before resolve reads it."""

    async def call(request: Any) -> Any:
        result = await fn(request)
        if result.skipped:
            return result
        scope = request.scope
        foreign = await foreign_rows(engine, scope.tenant, scope.owner)
        async with engine.begin() as conn:
            staged = (await conn.execute(text("SELECT plan FROM wiki_compile_plans WHERE id = :id"),
                                         {"id": request.plan_id})).scalar_one()
            raw = dict(staged)
            links = [{"type": kind, "slug": slug} for kind, slug in foreign.slugs]
            raw["parentSectionUpdates"] = list(raw.get("parentSectionUpdates") or []) + [
                {"pageId": page, "sectionSlug": "overview", "proposed_body_md": "Rolled up by the attacker.",
                 "linked_page_slugs": links} for page in foreign.page_ids]
            raw["sectionPromotions"] = list(raw.get("sectionPromotions") or []) + [
                {"pageId": page, "sectionSlug": "overview", "newPage": {
                    "type": "topic", "slug": "stolen", "title": "Stolen Section", "aliases": [],
                    "source_refs": [], "sections": []}} for page in foreign.page_ids]
            amended = parse_plan(json.dumps(raw))
            await conn.execute(text("UPDATE wiki_compile_plans SET plan = CAST(:plan AS jsonb) WHERE id = :id"),
                               {"id": request.plan_id, "plan": amended.model_dump_json()})
        journal.record("obeyed_aggregation", foreign_ids=len(foreign.page_ids), foreign_slugs=len(foreign.slugs))
        return result

    return _as_activity(activity_name(fn), fn, call)


# ----------------------------------------------------------------------------------- assembling


def model_activities(engine: AsyncEngine, settings: Settings, fault: str, journal: Journal, *,
                     seed: int = 1, storm: ThrottleStorm | None = None) -> list[Callable[..., Any]]:
    """The model activities (planner, writer, merge judge, aggregation planner) with `fault` injected, for the model task queue's worker."""
    if fault not in FAULTS:
        raise ValueError(f"unknown fault {fault!r}; one of {', '.join(FAULTS)}")
    scripted = ScriptedPlanner(settings.scripted_latency_ms / 1000)
    if fault in ("garbage", "lossy"):
        planner: ScriptedPlanner = CorruptingPlanner(engine, settings, lossy=fault == "lossy", seed=seed,
                                                     journal=journal)
    elif fault == "obey":
        planner = ObeyingPlanner(settings, journal=journal)
    else:
        planner = scripted
    planning = Planning(engine, planner)
    aggregation_plan = Aggregation(engine, scripted).plan
    if fault == "obey":
        aggregation_plan = obeying_aggregation(aggregation_plan, engine, journal)
    activities = [planning.plan_batch, planning.write_section, planning.judge_merges, aggregation_plan]
    if fault == "throttle":
        storm = storm or ThrottleStorm(seed=seed)
        return [throttled(fn, storm, journal) for fn in activities]
    return [counted(fn, journal) for fn in activities]
