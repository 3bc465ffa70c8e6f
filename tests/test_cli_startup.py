"""`wiki --help` answers without importing any command's module (its speed is measured by
`python -m bench.cli_startup`, not here), and every command it lists loads and runs under its name."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from cli import main as cli

HEAVY = ("temporalio", "sqlalchemy", "anthropic", "mcp", "fastapi", "store", "app", "planners", "workflows",
         "activities", "runtime", "pydantic")


def test_the_group_help_imports_no_command_module() -> None:
    probe = (
        "import sys, json\n"
        "from typer.testing import CliRunner\n"
        "from cli.main import app\n"
        "result = CliRunner().invoke(app, ['--help'])\n"
        "print(json.dumps({'code': result.exit_code, 'out': result.stdout, 'modules': sorted(sys.modules)}))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["code"] == 0
    for name in cli.COMMANDS:
        assert name in seen["out"]
    loaded = [m for m in seen["modules"] if m.split(".")[0] in HEAVY or m.startswith("cli.") and m not in (
        "cli.main", "cli.group", "cli.output")]
    assert loaded == [], loaded


@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_every_listed_command_loads_with_its_own_help(name: str) -> None:
    result = CliRunner().invoke(cli.app, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert f"wiki {name}" in result.stdout


def test_an_unknown_command_is_one_usage_line() -> None:
    result = CliRunner().invoke(cli.app, ["nosuch"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: No such command 'nosuch'")


def test_the_read_commands_import_no_temporal_client() -> None:
    # `wiki search`, `wiki page show` and `wiki mention list` read Postgres only.
    probe = ("import sys, json\nimport cli.pages, cli.mentions, app.reads, store.wiki_reads\n"
             "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'temporalio')))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_no_command_offers_shell_completion(name: str) -> None:
    # `wiki` has none; a command loaded on demand must not bring its own.
    assert "--install-completion" not in CliRunner().invoke(cli.app, [name, "--help"]).stdout
