"""Worker processes: `python worker.py` as deployed, or `python -m chaos.worker` with a fault injected.

A `Fleet` owns every process it spawns and kills whatever is still alive when it closes, so no
scenario leaves a worker behind, whatever fails.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[1]
EXIT_WAIT_SECONDS = 30
# Settings of the developer's shell must not leak into a worker of the suite.
_INHERITED_PREFIXES = ("WIKI_", "DATABASE_URL", "TEMPORAL_", "ANTHROPIC_", "CHAOS_")


def clean_environment(overrides: dict[str, str]) -> dict[str, str]:
    base = {key: value for key, value in os.environ.items() if not key.startswith(_INHERITED_PREFIXES)}
    return {**base, **overrides}


@dataclass
class WorkerProcess:
    command: list[str]
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen | None = None

    def start(self) -> WorkerProcess:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(self.command, cwd=PROJECT_DIR, env=clean_environment(self.env),
                                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        return self

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    @property
    def identity(self) -> str:
        """The identity the SDK reports in workflow history for this process (its default)."""
        return f"{self.pid}@{socket.gethostname()}"

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL: no shutdown, no flush, activities in flight are simply gone."""
        if self.alive():
            self.process.send_signal(signal.SIGKILL)
        if self.process is not None:
            self.process.wait(timeout=EXIT_WAIT_SECONDS)

    def stop(self) -> None:
        """SIGTERM: the worker's own graceful shutdown, then SIGKILL if it overstays."""
        if self.alive():
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=EXIT_WAIT_SECONDS)
            except subprocess.TimeoutExpired:
                self.kill()

    def log_tail(self, chars: int = 3000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:] if self.log_path.exists() else ""


@dataclass
class Fleet:
    """Spawns worker processes and guarantees they are all gone when it closes."""

    log_dir: Path
    env: dict[str, str]
    spawned: list[WorkerProcess] = field(default_factory=list)

    def product_worker(self, **extra_env: str) -> WorkerProcess:
        return self._spawn([sys.executable, "worker.py"], extra_env)

    def fault_worker(self, **extra_env: str) -> WorkerProcess:
        return self._spawn([sys.executable, "-m", "chaos.worker"], extra_env)

    def _spawn(self, command: list[str], extra_env: dict[str, str]) -> WorkerProcess:
        log = self.log_dir / f"worker-{len(self.spawned) + 1}.log"
        worker = WorkerProcess(command, {**self.env, **extra_env}, log).start()
        self.spawned.append(worker)
        return worker

    def close(self) -> None:
        for worker in self.spawned:
            worker.kill()

    def __enter__(self) -> Fleet:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
