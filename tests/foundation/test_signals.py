"""A long-lived process (a bench or fault worker) ends cleanly on SIGTERM and on SIGINT."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

PROCESS = """
import asyncio
from runtime.signals import until_signalled

async def run(stop):
    print("ready", flush=True)
    await stop.wait()
    print("stopped", flush=True)

asyncio.run(until_signalled(run))
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_the_run_is_told_to_stop_and_the_process_exits_cleanly(signum):
    process = subprocess.Popen([sys.executable, "-c", PROCESS], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        process.send_signal(signum)
        out, _ = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    assert (out.strip(), process.returncode) == ("stopped", 0)
