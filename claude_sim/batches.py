"""Message Batches as the Anthropic API serves them: create, retrieve, cancel, delete, and the
results file (JSONL).

A batch is `in_progress` until its processing delay (SimConfig.batch_processing_seconds) has passed
since creation; then every request is answered as an interactive call would be (same brain, scripts,
prompt cache and output cap), recorded as a `Call` with `batch=True`, and the batch is `ended` with a
`results_url`. Usage in the results is the tokens the request used; the provider bills batch usage at
half the list price, which is what `Call.billing_multiplier` says (0.5 for a batched request).

Cancel (`POST /v1/messages/batches/{id}/cancel`) may be asked any time before processing ends: the
batch is `canceling` until the requests in progress have finished (SimConfig.batch_cancel_seconds),
then `ended`; a request whose processing was over by then keeps its answer, every other one ends
`canceled`. Cancelling a batch that is already canceling changes nothing; one that has ended is a
400. Delete (`DELETE /v1/messages/batches/{id}`) works only once the batch has ended (a 400 before:
cancel it first) and removes the batch and its results: it is 404 from then on, and the simulator
keeps no prompt or answer of it (the calls it billed keep their usage, not their bodies).
Bedrock has no Message Batches on this API (its batch inference is a separate S3 job API the product
does not use), so only the Anthropic routes exist.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

BATCH_BILLING_MULTIPLIER = 0.5
BATCH_EXPIRY = timedelta(hours=24)
MAX_BATCH_REQUESTS = 100_000


@dataclass
class Batch:
    id: str
    identity: str
    requests: list[dict[str, Any]]  # {"custom_id": ..., "params": {...}}, as sent
    created_at: datetime
    ready_at: float  # monotonic time at which processing ends
    ended_at: datetime | None = None
    results: list[dict[str, Any]] = field(default_factory=list)  # one JSONL line each
    retrievals: int = 0  # GETs of the batch (polls)
    cancel_initiated_at: datetime | None = None
    cancel_settles_at: float | None = None  # monotonic time at which a canceling batch ends

    @property
    def status(self) -> str:
        if self.ended_at is not None:
            return "ended"
        return "canceling" if self.cancel_initiated_at is not None else "in_progress"

    def as_json(self, base_url: str) -> dict[str, Any]:
        ended = self.ended_at is not None
        counts = {kind: sum(1 for line in self.results if line["result"]["type"] == kind)
                  for kind in ("succeeded", "errored", "canceled", "expired")}
        return {
            "id": self.id, "type": "message_batch",
            "processing_status": self.status,
            "request_counts": {"processing": 0 if ended else len(self.requests), **counts},
            "created_at": _stamp(self.created_at), "expires_at": _stamp(self.created_at + BATCH_EXPIRY),
            "ended_at": _stamp(self.ended_at) if self.ended_at else None,
            "archived_at": None,
            "cancel_initiated_at": _stamp(self.cancel_initiated_at) if self.cancel_initiated_at else None,
            "results_url": f"{base_url}/v1/messages/batches/{self.id}/results" if ended else None,
        }

    def due(self, now: float) -> bool:
        """Whether processing (or a cancel) has ended by `now` and the batch is still to be settled."""
        if self.ended_at is not None:
            return False
        if self.cancel_settles_at is not None:
            return now >= self.cancel_settles_at
        return now >= self.ready_at

    def processed_before_cancel(self) -> bool:
        """A canceled batch whose requests were all done before the cancel settled keeps their answers."""
        return self.cancel_settles_at is None or self.ready_at <= self.cancel_settles_at

    def cancel(self, settle_seconds: float) -> None:
        """Start a cancel (ValueError once the batch has ended; a second cancel changes nothing)."""
        if self.ended_at is not None:
            raise ValueError(f"Batch {self.id} has already ended and cannot be canceled")
        if self.cancel_initiated_at is None:
            self.cancel_initiated_at = datetime.now(UTC)
            self.cancel_settles_at = time.monotonic() + settle_seconds

    def end_canceled(self) -> None:
        """End a canceled batch whose requests never ran: each one `canceled`."""
        self.results = [canceled(item["custom_id"]) for item in self.requests]
        self.ended_at = datetime.now(UTC)


def new_batch(identity: str, requests: list[dict[str, Any]], delay_seconds: float) -> Batch:
    return Batch(id=f"msgbatch_{uuid.uuid4().hex[:24]}", identity=identity, requests=requests,
                 created_at=datetime.now(UTC), ready_at=time.monotonic() + delay_seconds)


def deleted(batch_id: str) -> dict[str, Any]:
    return {"id": batch_id, "type": "message_batch_deleted"}


def check_requests(body: Any) -> list[dict[str, Any]]:
    """The batch's requests, or ValueError naming what is wrong (the API answers 400)."""
    requests = body.get("requests") if isinstance(body, dict) else None
    if not isinstance(requests, list) or not requests:
        raise ValueError("requests: must be a non-empty list")
    if len(requests) > MAX_BATCH_REQUESTS:
        raise ValueError(f"requests: at most {MAX_BATCH_REQUESTS} requests per batch")
    seen: set[str] = set()
    for index, request in enumerate(requests):
        custom_id = request.get("custom_id") if isinstance(request, dict) else None
        if not isinstance(custom_id, str) or not 1 <= len(custom_id) <= 64:
            raise ValueError(f"requests.{index}.custom_id: a string of 1 to 64 characters is required")
        if custom_id in seen:
            raise ValueError(f"requests.{index}.custom_id: {custom_id!r} is not unique in the batch")
        seen.add(custom_id)
        params = request.get("params")
        if not isinstance(params, dict):
            raise ValueError(f"requests.{index}.params: an object is required")
        if params.get("stream"):
            raise ValueError(f"requests.{index}.params.stream: batched requests cannot stream")
    return requests


def succeeded(custom_id: str, message: dict[str, Any]) -> dict[str, Any]:
    return {"custom_id": custom_id, "result": {"type": "succeeded", "message": message}}


def errored(custom_id: str, kind: str, message: str) -> dict[str, Any]:
    return {"custom_id": custom_id, "result": {"type": "errored", "error": {
        "type": "error", "error": {"type": kind, "message": message}, "request_id": None}}}


def canceled(custom_id: str) -> dict[str, Any]:
    return {"custom_id": custom_id, "result": {"type": "canceled"}}


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
