"""Service probes a loaded machine cannot fool: a port slow to accept is still open, a Postgres of ours
that is slow to answer is waited for, never taken for a stranger on its port, and a pid file is
believed only for a live process running what it names."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import main as cli
from runtime import devservices
from runtime.devservices import DevWorker, EmbeddedPostgres, port_is_open
from runtime.settings import get_settings


def test_a_listener_slow_to_accept_is_still_open():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(0)
        port = server.getsockname()[1]
        # One connection waits in the accept queue and fills it: the kernel drops the next SYN and the
        # client retries it a second later, as with a server too busy to accept.
        with socket.create_connection(("127.0.0.1", port)):
            assert not port_is_open("127.0.0.1", port, timeout=0.2)  # a probe this short: "not open"

            def accept_soon() -> None:
                for _ in range(2):
                    connection, _ = server.accept()
                    connection.close()

            accepting = threading.Thread(target=accept_soon, daemon=True)
            accepting.start()
            assert port_is_open("127.0.0.1", port)
            accepting.join(timeout=10)


def test_a_worker_pid_file_is_believed_only_for_a_live_worker_process(tmp_path: Path):
    worker = DevWorker(data_dir=tmp_path)
    worker.pid_path.write_text(f"{os.getpid()}\nwiki-compile\n")  # alive, but not `python -m worker`
    assert worker.pid() is None and not worker.is_running()
    # A process whose command line carries `-m worker`, as `wiki worker` in the background does.
    process = subprocess.Popen([sys.executable, "-c", "import sys; print('up', flush=True); sys.stdin.read()",
                                "-m", "worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        # Just after exec the kernel can show an empty command line; once Python runs code it is there.
        assert process.stdout.readline() == b"up\n"
        worker.pid_path.write_text(f"{process.pid}\nwiki-compile\n")
        assert worker.pid() == process.pid and worker.is_running()
        process.stdin.close()  # it exits; waitid without reaping leaves it a zombie, dead all the same
        os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)
        assert worker.pid() is None and not worker.is_running()
    finally:
        process.kill()  # a failed check above must end the test, not leave it waiting on the child forever
        process.wait()
        process.stdout.close()
    assert worker.pid() is None  # and once reaped, no process has that pid


def test_a_closed_port_is_closed():
    assert not port_is_open("127.0.0.1", devservices.free_port())


@pytest.fixture
def embedded_env(postgres_server: EmbeddedPostgres, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The CLI's embedded-Postgres settings, pointing at the session's Postgres (ours, running)."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "postgres").symlink_to(postgres_server.pgdata)
    monkeypatch.setenv("WIKI_DATA_DIR", str(data_dir))
    monkeypatch.setenv("WIKI_DEV_POSTGRES_PORT", str(postgres_server.port))
    monkeypatch.setenv("TEMPORAL_ADDRESS", "127.0.0.1:9")  # never started here
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("DATABASE_URL", raising=False)
    get_settings.cache_clear()
    yield data_dir
    get_settings.cache_clear()


async def wiki(*args: str):
    return await asyncio.to_thread(CliRunner().invoke, cli.app, list(args))


async def test_our_postgres_slow_to_answer_is_waited_for_not_restarted(embedded_env, postgres_server,
                                                                     monkeypatch):
    probes: list[int] = []

    def slow_machine(host: str, port: int, timeout: float = 5.0) -> bool:
        """The first probe of each command times out, as a 0.2 s probe did under load."""
        probes.append(port)
        return len(probes) % 2 == 0

    monkeypatch.setattr(devservices, "port_is_open", slow_machine)
    status = await wiki("dev", "status")
    assert status.exit_code == 0, status.output
    postgres = next(line for line in status.stdout.splitlines() if line.startswith("Postgres"))
    assert f"127.0.0.1:{postgres_server.port}/wiki" in postgres and "running (embedded)" in postgres

    probes.clear()
    migrated = await wiki("migrate")  # starts the embedded Postgres if it is not running
    assert migrated.exit_code == 0, migrated.output
    assert "taken by another process" not in migrated.output
    assert probes and postgres_server.is_running()
