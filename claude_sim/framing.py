"""How a streamed reply is framed on each platform.

The Messages API streams server-sent events (`event: <type>` / `data: <json>` / blank line). Bedrock's
InvokeModelWithResponseStream streams the same Messages events inside AWS event-stream messages: a
binary frame (total length, headers length, prelude CRC32, headers, payload, message CRC32) whose
payload is `{"bytes": "<base64 of the event's JSON>"}` for a `chunk` event, or an error message
for an `exception` frame. The anthropic SDK decodes the latter with botocore's event-stream parser.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any

_STRING_HEADER = 7


def sse(event: dict[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n".encode()


def _headers(headers: dict[str, str]) -> bytes:
    out = b""
    for name, value in headers.items():
        raw_name, raw_value = name.encode(), value.encode()
        out += struct.pack("!B", len(raw_name)) + raw_name + struct.pack("!BH", _STRING_HEADER, len(raw_value)) + raw_value
    return out


def event_stream_message(headers: dict[str, str], payload: bytes) -> bytes:
    encoded_headers = _headers(headers)
    total = 12 + len(encoded_headers) + len(payload) + 4
    prelude = struct.pack("!II", total, len(encoded_headers))
    prelude += struct.pack("!I", zlib.crc32(prelude) & 0xFFFFFFFF)
    message = prelude + encoded_headers + payload
    return message + struct.pack("!I", zlib.crc32(message) & 0xFFFFFFFF)


def bedrock_chunk(event: dict[str, Any]) -> bytes:
    data = base64.b64encode(json.dumps(event, ensure_ascii=False).encode()).decode()
    payload = json.dumps({"bytes": data, "p": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"}).encode()
    return event_stream_message(
        {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}, payload)


def bedrock_exception(kind: str, message: str) -> bytes:
    """An exception frame; `kind` as Bedrock names it in streams (e.g. "throttlingException")."""
    return event_stream_message(
        {":exception-type": kind, ":content-type": "application/json", ":message-type": "exception"},
        json.dumps({"message": message}).encode())
