"""A command that reaches Temporal while it is still starting waits for it (bounded, saying once what
it waits for) instead of failing on "Frontend is not healthy yet"."""

from __future__ import annotations

import pytest
from temporalio.service import RPCError, RPCStatusCode

from runtime.temporal_client import TemporalNotHealthy, wait_until_healthy


class _Starting:
    """A server that fails its first `failures` probes the way a starting dev server does."""

    def __init__(self, failures: int, *, namespace_missing: int = 0) -> None:
        self.failures = failures
        self.namespace_missing = namespace_missing
        self.probes = 0
        self.service_client = self
        self.workflow_service = self

    async def check_health(self, **_: object) -> bool:
        self.probes += 1
        if self.probes <= self.failures:
            raise RPCError("Frontend is not healthy yet", RPCStatusCode.UNAVAILABLE, b"")
        return True

    async def describe_namespace(self, request: object, **_: object) -> object:
        if self.namespace_missing:
            self.namespace_missing -= 1
            raise RPCError("Namespace default is not found.", RPCStatusCode.NOT_FOUND, b"")
        return object()


async def test_a_starting_server_is_waited_for_and_said_once():
    server, said = _Starting(failures=3, namespace_missing=2), []
    await wait_until_healthy(server, "127.0.0.1:7233", "default", on_wait=said.append, timeout=30)
    assert server.probes == 6  # three unhealthy, two without the namespace, then ready
    assert said == ["waiting up to 30 s for Temporal at 127.0.0.1:7233 to be ready (Frontend is not healthy yet)"]


async def test_a_ready_server_costs_one_probe_and_says_nothing():
    server, said = _Starting(failures=0), []
    await wait_until_healthy(server, "127.0.0.1:7233", "default", on_wait=said.append)
    assert server.probes == 1 and said == []


async def test_a_server_that_never_gets_ready_fails_in_one_sentence():
    with pytest.raises(TemporalNotHealthy) as failed:
        await wait_until_healthy(_Starting(failures=10**6), "127.0.0.1:7233", "default", timeout=0)
    assert str(failed.value) == ("Temporal at 127.0.0.1:7233 is still not ready after 0 s: Frontend is not "
                                 "healthy yet")
