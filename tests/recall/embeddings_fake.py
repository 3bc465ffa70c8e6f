"""A local embeddings provider speaking the wire formats of Voyage AI's `POST /v1/embeddings` and
Amazon Bedrock's `POST /model/{modelId}/invoke` (Titan Text Embeddings V2, Cohere Embed), reached by
the real clients through their base-URL settings (VOYAGE_BASE_URL, AWS_ENDPOINT_URL_BEDROCK_RUNTIME),
never the network.

A text's vector is its words hashed into the asked size (a bag of words): texts sharing words are
close, which is all the wiring needs. `fail_next` scripts the next replies (a status, its headers,
Bedrock's error type), so the clients' retry policies meet real throttling and outages.
"""

from __future__ import annotations

import json
import re
import threading
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np


def bag_of_words(text: str, dimensions: int) -> list[float]:
    vector = np.zeros(dimensions, dtype=np.float64)
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vector[zlib.crc32(word.encode()) % dimensions] += 1.0
    return vector.tolist()


@dataclass
class Fault:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    error_type: str = ""  # Bedrock's x-amzn-ErrorType


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict


class FakeEmbeddings:
    def __init__(self) -> None:
        self.requests: list[Seen] = []
        self.faults: list[Fault] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                with fake._lock:
                    fake.requests.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                    fault = fake.faults.pop(0) if fake.faults else None
                if fault is not None:
                    self._send(fault.status, {"message": f"scripted {fault.status}", "detail": "scripted"},
                               {**fault.headers, **({"x-amzn-ErrorType": fault.error_type} if fault.error_type else {})})
                elif self.path == "/v1/embeddings":
                    self._send(200, fake.voyage(body))
                elif (match := re.fullmatch(r"/model/([^/]+)/invoke", self.path)) is not None:
                    self._send(200, fake.bedrock(match[1], body))
                else:
                    self._send(404, {"message": "no such route"})

            def _send(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def fail_next(self, *faults: Fault) -> None:
        with self._lock:
            self.faults.extend(faults)

    def voyage(self, body: dict) -> dict:
        size = body.get("output_dimension") or 1024
        return {"object": "list", "model": body["model"], "usage": {"total_tokens": 7 * len(body["input"])},
                "data": [{"object": "embedding", "index": i, "embedding": bag_of_words(text, size)}
                         for i, text in reversed(list(enumerate(body["input"])))]}  # out of order: sorted by index

    def bedrock(self, model: str, body: dict) -> dict:
        if "cohere" in model:
            return {"id": "x", "response_type": "embeddings_floats", "texts": body["texts"],
                    "embeddings": [bag_of_words(text, 1024) for text in body["texts"]]}
        return {"embedding": bag_of_words(body["inputText"], body.get("dimensions", 1024)),
                "inputTextTokenCount": len(body["inputText"].split())}

    def __enter__(self) -> FakeEmbeddings:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
