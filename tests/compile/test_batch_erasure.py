"""Message Batches deleted at the provider, through the real SDK against the simulator: the API's rules
(a batch is deleted only once it has ended; a cancel ends it, the requests not yet run `canceled`),
and a forget's erasure of a batch other scopes share, which never costs them their answers."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from activities.batch_erasure import erase_batches, read_outcome
from activities.deferred_calls import CallDeferred, DeferringClient
from claude_sim import ClaudeSimulator
from domain.errors import BatchGone, BatchNotEnded, ModelRejected
from messages.compile import Scope
from planners.claude_client import BatchItem, ModelClient
from store.llm_batches import held_batches, load_request
from tests.compile.test_model_path import API_KEY

ASK = {"model": "claude-haiku-4-5", "system": "Be brief.", "max_tokens": 64}


@pytest.fixture
async def sdk(sim: ClaudeSimulator):
    """The product's Anthropic client, its SDK reaching the simulator; closed after the test."""
    client = ModelClient(provider="anthropic", api_key=API_KEY)
    try:
        yield client
    finally:
        await client.aclose()


def items(count: int) -> list[BatchItem]:
    return [BatchItem(custom_id=f"r{i}", model="claude-haiku-4-5", system="Be brief.", user=f"Say {i}.", max_tokens=64)
            for i in range(count)]


async def test_a_batch_is_deleted_only_once_it_has_ended_and_a_cancel_ends_it(sim: ClaudeSimulator, sdk) -> None:
    sim.config.batch_processing_seconds = 3600.0
    sim.config.batch_cancel_seconds = 3600.0
    batch_id = await sdk.submit_batch(items(3))
    with pytest.raises(ModelRejected, match="400"):  # in progress: the API refuses
        await sdk.delete_batch(batch_id)
    state = await sdk.cancel_batch(batch_id)
    assert state.canceling and not state.ended
    assert (await sdk.cancel_batch(batch_id)).canceling  # asked again: nothing changes
    with pytest.raises(ModelRejected, match="400"):  # canceling is not ended either
        await sdk.delete_batch(batch_id)
    sim.batches[batch_id].cancel_settles_at = 0.0  # the requests in progress have finished
    state = await sdk.batch_state(batch_id)
    assert state.ended and state.canceled == 3 and sim.calls == []  # nothing ran, nothing billed
    assert [o.error for o in await sdk.batch_results(batch_id)] == ["canceled:"] * 3
    assert (await sdk.cancel_batch(batch_id)).ended  # an ended batch stays as it is
    assert await sdk.delete_batch(batch_id) is True
    assert batch_id not in sim.batches and sim.deleted_batches == [batch_id]
    with pytest.raises(BatchGone):
        await sdk.batch_state(batch_id)
    with pytest.raises(BatchGone):
        await sdk.batch_results(batch_id)
    assert await sdk.delete_batch(batch_id) is False  # gone already


async def test_a_cancel_after_processing_keeps_the_answers_and_deleting_drops_every_copy(sim, sdk) -> None:
    sim.config.batch_processing_seconds = 0.0
    batch_id = await sdk.submit_batch(items(2))
    state = await sdk.cancel_batch(batch_id)  # processing was over before the cancel settled
    assert state.ended and state.succeeded == 2
    assert all(c.body for c in sim.calls)
    assert await sdk.delete_batch(batch_id)
    # The provider keeps what it billed (usage), not what was asked or answered.
    assert all(c.usage is not None and c.body == {} and c.reply_text == "" for c in sim.calls)


async def test_erasing_a_shared_batch_keeps_the_other_scope_its_answer(engine, sim, sdk) -> None:
    sim.config.batch_processing_seconds = 3600.0
    mine, theirs = Scope(tenant="t-erase", owner="alice"), Scope(tenant="t-other", owner="bob")
    def deferring(scope: Scope, call: str) -> DeferringClient:
        # Both wait the window, so the shared submitter sends them in one batch.
        return DeferringClient(engine, sdk, 0.3, scope, uuid.UUID(int=9), "run-1", call, [])

    sent = await asyncio.gather(*[_deferred(deferring(scope, f"write_section:{scope.tenant}"), scope.tenant)
                                  for scope in (mine, theirs)], return_exceptions=True)
    assert all(isinstance(s, CallDeferred) for s in sent) and len({s.batch_id for s in sent}) == 1
    [batch_id] = list(sim.batches)
    async with engine.connect() as conn:
        assert [b.batch_id for b in await held_batches(conn, mine.tenant, mine.owner)] == [batch_id]

    # In progress: the forget cancels it, and waits (retried) until it has ended.
    sim.config.batch_cancel_seconds = 3600.0
    with pytest.raises(BatchNotEnded):
        await erase_batches(engine, sdk, mine, [batch_id])
    assert sim.batches[batch_id].status == "canceling"
    sim.batches[batch_id].cancel_settles_at = 0.0
    erased = await erase_batches(engine, sdk, mine, [batch_id])
    assert [(e.batch_id, e.status) for e in erased] == [(batch_id, "deleted")]
    assert sim.batches == {} and sim.deleted_batches == [batch_id]
    again = await erase_batches(engine, sdk, mine, [batch_id])  # a retry finds it done
    assert [e.status for e in again] == ["deleted"]
    async with engine.connect() as conn:
        assert await held_batches(conn, mine.tenant, mine.owner) == []
        kept = await load_request(conn, theirs, str(uuid.uuid5(uuid.UUID(int=9), f"write_section:{theirs.tenant}")))
    assert kept is not None and kept.saved_outcome is not None
    outcome = await read_outcome(engine, sdk, theirs, kept)
    assert outcome is not None and outcome.error.startswith("canceled")
    # The other scope's call does not fail: the batch could not answer it, so it is asked interactively.
    calls_before = len(sim.calls)
    reply = await deferring(theirs, f"write_section:{theirs.tenant}").complete(user=f"Say {theirs.tenant}.", **ASK)
    assert not reply.batch and len(sim.calls) == calls_before + 1 and sim.calls[-1].batch_id is None


async def test_an_answered_request_of_another_scope_is_read_from_what_was_saved(engine, sim, sdk) -> None:
    sim.config.batch_processing_seconds = 3600.0
    mine, theirs = Scope(tenant="t-erase2", owner="alice"), Scope(tenant="t-other2", owner="bob")
    def deferring(scope: Scope) -> DeferringClient:
        plan = uuid.uuid5(uuid.UUID(int=11), scope.tenant)  # each scope's compile has plans of its own
        return DeferringClient(engine, sdk, 0.3, scope, plan, "run-1", "judge", [])

    await asyncio.gather(*[_deferred(deferring(scope), scope.tenant) for scope in (mine, theirs)],
                         return_exceptions=True)
    [batch] = sim.batches.values()
    batch.ready_at = 0.0  # answered before the forget
    await erase_batches(engine, sdk, mine, [batch.id])
    assert sim.batches == {}
    calls_before = len(sim.calls)
    reply = await deferring(theirs).complete(user=f"Say {theirs.tenant}.", **ASK)
    assert reply.batch and len(sim.calls) == calls_before  # the batch's answer, read from Postgres


async def _deferred(client: DeferringClient, tenant: str) -> None:
    await client.complete(user=f"Say {tenant}.", **ASK)
