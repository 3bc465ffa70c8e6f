"""The load benchmark's judgement (bench/server_load.py): what counts as a rate held, and what the
overload step reports."""

from __future__ import annotations

from bench.server_load import MIX, Step, Traffic
from bench.server_load_report import headline, rows, section


def _step(statuses: dict[int, int], latency_ms: float = 10.0, hangs: int = 0) -> Step:
    step = Step(rate=100, seconds=1.0)
    for status, count in statuses.items():
        for _ in range(count):
            step.record("search", status, latency_ms, "1" if status in (429, 503) else None)
    step.hangs = hangs
    return step


def test_a_rate_is_held_only_with_every_answer_a_success_within_the_p95_target():
    assert _step({200: 95, 202: 5}).held()
    assert not _step({200: 99, 503: 1}).held()  # a refusal is not held load
    assert not _step({200: 100}, hangs=1).held()
    assert not _step({200: 100}, latency_ms=150).held()


def test_the_overload_keys_count_500s_hangs_and_refusals():
    overload = _step({200: 10, 503: 4, 429: 2, 500: 1}, hangs=3).summary()
    held = _step({200: 50}).summary()
    detail = {"held": held, "overload": overload, "steps": [held], "targets": {"requests_per_second": 300,
              "p95_ms": 100.0}, "tokens": 20, "pages": 10, "mix_percent": MIX, "method": "m", "cpus": 2,
              "load_average_before": [1.0, 1.0, 1.0], "load_average_after": [1.0, 1.0, 1.0]}
    keys = headline(detail)
    assert keys["server_overload_500s"] == 1 and keys["server_overload_hangs"] == 3
    assert keys["server_overload_refusals"] == {"429": 2, "503": 4}
    assert keys["server_load_requests_per_second"] == 50.0 and keys["server_load_errors"] == 0
    assert [row.ok for row in rows(detail)] == [False, True, False]  # 50/s is under 300/s; a 500 fails the row
    assert any("500: 1" in line for line in section(detail))


def test_the_traffic_follows_the_mix_and_rotates_tokens():
    traffic = Traffic([f"t{i}" for i in range(20)])
    kinds, tokens = [], set()
    for _ in range(4000):
        kinds.append(traffic.next()[0])
        tokens.add(traffic.token())
    for kind, percent in MIX.items():
        assert abs(kinds.count(kind) / 40 - percent) < 3, kind
    assert len(tokens) == 20


def test_the_cpu_per_request_gives_the_machines_ceiling():
    from bench.server_load_report import capacity, cpu_per_request

    step = _step({200: 100})
    step.cpu_seconds = {"server": 0.25, "postgres": 0.15, "temporal": 0.02, "bench_process": 0.03,
                        "machine_busy_share": 0.5}
    summary = step.summary()
    assert cpu_per_request(summary) == 4.5  # (0.25 + 0.15 + 0.02 + 0.03) s over 100 answers
    assert capacity({"steps": [summary], "cpus": 2}) == 444


async def test_the_load_client_reuses_its_connection_and_reads_status_and_retry_after():
    import asyncio

    from bench.load_client import LoadClient

    accepted: list[int] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                return  # the client closed its connection
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length")), 0)
            await reader.readexactly(length)
            busy = b"POST" in head.split(b"\r\n")[0]
            writer.write(b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 2\r\nContent-Length: 2\r\n\r\n{}" if busy
                         else b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
            await writer.drain()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = LoadClient(f"http://127.0.0.1:{port}", connections=4, timeout=5)
    try:
        get = client.encode("GET", "/v1/search", {"q": "x"}, None, "tok")
        post = client.encode("POST", "/v1/memories", None, {"memories": []}, "tok")
        assert [await client.request(get) for _ in range(3)] == [(200, None)] * 3
        assert await client.request(post) == (503, "2")
        assert len(accepted) == 1  # one keep-alive connection for all four
    finally:
        await client.aclose()
        server.close()
