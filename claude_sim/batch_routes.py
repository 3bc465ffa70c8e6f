"""The Message Batches routes of the simulator (claude_sim/batches.py says what they do): create,
retrieve, results, cancel and delete, mixed into `ClaudeSimulator`, which answers a batch's requests
(`_process`) as it answers interactive calls."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from claude_sim.auth import Denied, api_caller
from claude_sim.batches import Batch, check_requests, deleted, new_batch
from claude_sim.catalog import api_model
from claude_sim.validation import Invalid, check_api_headers, check_body
from claude_sim.wire import Request, Response


class BatchRoutes:
    """`/v1/messages/batches...` for the simulator (mixed into it: `self` is the simulator)."""

    config: Any  # claude_sim.server.SimConfig (the simulator's own modules import this one)
    batches: dict[str, Batch]
    deleted_batches: list[str]
    calls: list[Any]  # claude_sim.server.Call

    @property
    def base_url(self) -> str:
        raise NotImplementedError

    def _process(self, batch: Batch) -> None:
        raise NotImplementedError

    async def _batches(self, request: Request) -> Response:
        try:
            caller = api_caller(request.headers, self.config.api_keys)
            check_api_headers(request.headers)
        except Denied as denied:
            return api_error(denied.status, denied.kind, denied.message)
        except Invalid as invalid:
            return api_error(400, "invalid_request_error", str(invalid))
        rest = request.path.removeprefix("/v1/messages/batches").strip("/")
        if request.method == "POST" and not rest:
            try:
                requests = check_requests(json.loads(request.body or b"null"))
                for index, item in enumerate(requests):
                    model = api_model(str(item["params"].get("model")))
                    if model is None:
                        raise Invalid(f"requests.{index}.params.model: {item['params'].get('model')}")
                    check_body(item["params"], model, bedrock=False)
            except (Invalid, ValueError) as invalid:
                return api_error(400, "invalid_request_error", str(invalid))
            batch = new_batch(caller.identity, requests, self.config.batch_processing_seconds)
            self.batches[batch.id] = batch
            return json_response(batch.as_json(self.base_url))
        batch_id, _, tail = rest.partition("/")
        batch = self.batches.get(batch_id)
        route = (request.method, tail)
        if batch is None or batch.identity != caller.identity or route not in (
                ("GET", ""), ("GET", "results"), ("POST", "cancel"), ("DELETE", "")):
            return api_error(404, "not_found_error", f"No batch {batch_id!r} for {request.method} {request.path}")
        self._settle(batch)
        if route == ("POST", "cancel"):
            try:
                batch.cancel(self.config.batch_cancel_seconds)
            except ValueError as ended:
                return api_error(400, "invalid_request_error", str(ended))
            self._settle(batch)
            return json_response(batch.as_json(self.base_url))
        if route == ("DELETE", ""):
            if batch.ended_at is None:
                return api_error(400, "invalid_request_error", f"Batch {batch_id} is still {batch.status}: a "
                                  "Message Batch can be deleted only once it has ended (cancel it first)")
            del self.batches[batch_id]
            self.deleted_batches.append(batch_id)
            for call in self.calls:  # the provider keeps what it billed, not what was asked or answered
                if call.batch_id == batch_id:
                    call.body, call.memory_texts, call.reply_text = {}, [], ""
            return json_response(deleted(batch_id))
        if not tail:
            batch.retrievals += 1
            return json_response(batch.as_json(self.base_url))
        if batch.ended_at is None:
            return api_error(400, "invalid_request_error", f"Batch {batch_id} is still {batch.status}")
        lines = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in batch.results)
        return Response(200, {"content-type": "application/binary"}, lines.encode())

    def _settle(self, batch: Batch) -> None:
        """End a batch whose processing (or cancel) is over: answered, or canceled before it ran."""
        if not batch.due(time.monotonic()):
            return
        if batch.processed_before_cancel():
            self._process(batch)
        else:
            batch.end_canceled()



def json_response(value: dict[str, Any]) -> Response:
    return Response(200, {"content-type": "application/json", "request-id": f"req_{uuid.uuid4().hex[:24]}"},
                    json.dumps(value).encode())


def api_error(status: int, kind: str, message: str, details: dict[str, Any] | None = None) -> Response:
    error: dict[str, Any] = {"type": kind, "message": message}
    if details:
        error["details"] = details
    body = {"type": "error", "error": error, "request_id": f"req_{uuid.uuid4().hex[:24]}"}
    return Response(status, {"content-type": "application/json"}, json.dumps(body).encode())
