"""A newcomer's first session, scripted (issue 16): every command of the README's walkthrough block, in
order, as separate processes against fresh embedded services (their own data directory and ports,
started by the first command and stopped by the last), each checked to exit as the README says
within a bound. Between the last two commands: a background worker that died is started again by
the next command that needs one, and its log is free of migration chatter.

The README block is the source: change it and this test runs the new commands.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from runtime.devservices import free_port

PROJECT_DIR = Path(__file__).resolve().parents[1]
README = PROJECT_DIR / "README.md"
MAKEFILE = PROJECT_DIR / "Makefile"
MARKER = "<!-- walkthrough:"
# Seconds a step may take on a loaded 2-core machine: the demo starts Postgres (initdb the first time)
# and Temporal and compiles 700 memories; the rest are one command each. A compile after a retain
# must not sit out the retain's five-minute debounce, so its bound is far below that.
DEMO_BOUND = 300
STEP_BOUND = 120


@dataclass
class Step:
    line: str  # as written in the README
    command: str  # what runs (a make target replaced by the wiki command its recipe runs)
    exit_code: int  # 0 unless the comment says "exits N"


def make_recipe(target: str) -> str:
    """The one `wiki` command a Makefile target runs (after creating the venv, which exists here)."""
    lines = MAKEFILE.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    recipe = [line.strip() for line in lines[start + 1:] if line.startswith("\t")][:1]
    assert recipe and recipe[0].startswith("$(BIN)/wiki "), f"make {target} runs {recipe}"
    return recipe[0].removeprefix("$(BIN)/")


def readme_steps() -> list[Step]:
    block = README.read_text().split(MARKER, 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    steps = []
    for line in block.splitlines():
        if not line.strip():
            continue
        command, *comment = re.split(r"\s{2,}#\s", line, maxsplit=1)
        command = command.strip()
        if command.startswith("make "):
            command = make_recipe(command.removeprefix("make ").strip())
        expected = re.search(r"\bexits (\d)\b", " ".join(comment))
        steps.append(Step(line.strip(), command, int(expected.group(1)) if expected else 0))
    return steps


def test_the_readme_block_is_found_and_covers_the_first_session():
    steps = readme_steps()
    commands = [step.command for step in steps]
    assert commands[0] == "wiki demo" and commands[-1] == "wiki dev down"
    for needed in ("wiki dev status", "wiki search", "wiki page show", "wiki memory show", "wiki retain",
                   "wiki compile", "wiki lint", "wiki schedule show"):
        assert any(command.startswith(needed) or f"| {needed}" in command for command in commands), needed


@pytest.fixture
def fresh_services(tmp_path: Path):
    """The environment of a newcomer's shell, with its own data directory and ports; whatever the
    walkthrough leaves running (ours only, by the pids in that directory) is stopped at the end."""
    data_dir = tmp_path / "data"
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith(("WIKI_", "DATABASE_URL", "TEMPORAL_", "ANTHROPIC_"))}
    environment.update({
        "WIKI_DATA_DIR": str(data_dir),
        "WIKI_DEV_POSTGRES_PORT": str(free_port()),
        "WIKI_DEV_TEMPORAL_PORT": str(free_port()),
        "WIKI_DEV_TEMPORAL_UI_PORT": str(free_port()),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",  # `wiki` of this venv
        "COLUMNS": "80",
    })
    yield environment, data_dir
    if (data_dir / "temporal.pid").exists() or (data_dir / "worker.pid").exists():
        subprocess.run(["wiki", "dev", "down"], env=environment, cwd=tmp_path, capture_output=True,
                       timeout=STEP_BOUND)
    for pid_file in (data_dir / "worker.pid", data_dir / "temporal.pid", data_dir / "postgres" / "postmaster.pid"):
        pid = _pid(pid_file)
        if pid is not None and _alive(pid):
            os.kill(pid, signal.SIGKILL)


def _pid(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


def run_step(step: Step, environment: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    bound = DEMO_BOUND if step.command == "wiki demo" else STEP_BOUND
    started = time.monotonic()
    try:
        result = subprocess.run(["bash", "-c", step.command], env=environment, cwd=cwd, capture_output=True,
                                text=True, timeout=bound, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`{step.line}` did not end within {bound}s")
    took = time.monotonic() - started
    assert result.returncode == step.exit_code, (
        f"`{step.line}` exited {result.returncode} after {took:.1f}s, the README says {step.exit_code}:\n"
        f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    if step.exit_code:
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return result


def test_a_newcomer_follows_the_readme(fresh_services, tmp_path):
    environment, data_dir = fresh_services
    steps = readme_steps()
    outputs: dict[str, subprocess.CompletedProcess] = {}
    for step in steps[:-1]:
        outputs[step.line] = run_step(step, environment, tmp_path)

    by_command = {step.command: outputs[step.line] for step in steps[:-1]}
    assert "retained for demo/eric: 700 inserted" in by_command["wiki demo"].stdout
    services = " ".join(by_command["wiki dev status"].stdout.split())
    assert services.count("running") == 4 and "running (background, pid" in services, services
    assert "Franklin Barbecue" in next(out.stdout for command, out in by_command.items()
                                       if command.startswith("wiki search brisk"))
    compiled = next(out for command, out in by_command.items() if command == "wiki compile --tenant demo --owner eric")
    assert "records_read" in compiled.stdout  # the retained memory, compiled without waiting out the debounce
    log = (data_dir / "worker.log").read_text()
    assert "worker polling wiki-compile" in log and "alembic" not in log

    # A background worker that died is started again by the next command that needs one.
    worker_pid = _pid(data_dir / "worker.pid")
    assert worker_pid is not None and _alive(worker_pid)
    os.kill(worker_pid, signal.SIGKILL)
    again = run_step(Step("wiki compile (worker killed)", "wiki compile --tenant demo --owner eric", 0),
                     environment, tmp_path)
    assert "started the background worker" in again.stderr
    assert _pid(data_dir / "worker.pid") not in (None, worker_pid)
    # Settings changed since the worker started: it polls the old queue, and the command says so.
    elsewhere = run_step(Step("wiki lint (another queue)", "WIKI_TASK_QUEUE=elsewhere wiki lint", 1),
                         environment, tmp_path)
    assert elsewhere.stderr.startswith("error: the background worker (pid ") and (
        "polls task queue wiki-compile, not elsewhere: it keeps the settings it was started with" in elsewhere.stderr)

    down = run_step(steps[-1], environment, tmp_path)
    assert down.stdout.strip() == "stopped: worker, Temporal dev server, Postgres"
    for pid_file in (data_dir / "worker.pid", data_dir / "temporal.pid", data_dir / "postgres" / "postmaster.pid"):
        pid = _pid(pid_file)
        assert pid is None or not _alive(pid), f"{pid_file.name}: {pid} still runs"
