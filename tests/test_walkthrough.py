"""The README and the pages under docs/ held to the code.

The first session: every command of the README's walkthrough block, in order, typed into one shell
(variables and background jobs carry from line to line, as in a newcomer's terminal) against fresh
embedded services with their own data directory and ports, each checked to exit as the README says
within a bound. The README block is the source: change it and this test runs the new commands.

Everything else the pages name is checked without running it: each `wiki` command and option
against the CLI, each `make` target against the Makefile, each `python -m` module, each port
against the defaults in the code, each setting (with its default and range) against
runtime/settings.py, each repository file and each link. A renamed command, option, port or file
fails here.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import os
import random
import re
import selectors
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

import pytest
import typer.main

import claude_sim.__main__ as claude_sim_main
from cli.main import app
from runtime.devservices import free_port
from runtime.settings import Settings
from tests.docs_text import (
    FAKE_PORT,
    PROJECT_DIR,
    README,
    Step,
    code_snippets,
    doc_files,
    embedded_ports,
    heading_anchors,
    invocations,
    is_generated,
    markdown_tables,
    model_server_ports,
    port_mentions,
    python_names,
    relative_links,
    repository_paths,
    table_cells,
    walkthrough_steps,
)

MAKEFILE = PROJECT_DIR / "Makefile"
CONFIGURATION = PROJECT_DIR / "docs" / "configuration.md"
# Seconds a step may take on a loaded 2-core machine: the demo starts Postgres (initdb the first time)
# and Temporal and compiles 700 memories; the rest are one command each. A compile after a retain
# must not sit out the retain's five-minute debounce, so its bound is far below that.
DEMO_BOUND = 300
STEP_BOUND = 120


# ---- the CLI, the Makefile and the ports, as the code defines them

@functools.cache
def wiki_cli():
    """The `wiki` command as Typer builds it, and a context to look its subcommands up in."""
    command = typer.main.get_command(app)
    return command, command.context_class(command, info_name="wiki")


def _is_group(command) -> bool:
    return hasattr(command, "get_command") and hasattr(command, "list_commands")


def wiki_problem(words: list[str]) -> str | None:
    """Why `wiki <words>` names no command or option of the CLI, or None when it does."""
    command, context = wiki_cli()
    path = ["wiki"]
    for word in words:
        if re.match(r"^--?[A-Za-z]", word):
            option = word.split("=", 1)[0]
            known = {name for param in command.params for name in (*param.opts, *param.secondary_opts)}
            if option not in known | set(command.get_help_option_names(context)):
                return f"`{' '.join(path)}` has no option {option}"
        elif _is_group(command):
            if not re.match(r"^[a-z][a-z0-9-]*$", word):  # a placeholder: <command>, COMMAND
                return None
            sub = command.get_command(context, word)
            if sub is None:
                return f"`{' '.join(path)}` has no command {word!r}"
            command, context = sub, sub.context_class(sub, info_name=word, parent=context)
            path.append(word)
    return None


def make_targets() -> set[str]:
    return set(re.findall(r"^([\w.-]+):", MAKEFILE.read_text(), re.M))


def make_recipe(target: str) -> str:
    """The one `wiki` command a Makefile target runs (after creating the venv, which exists here)."""
    lines = MAKEFILE.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    recipe = [line.strip() for line in lines[start + 1:] if line.startswith("\t")][:1]
    assert recipe and recipe[0].startswith("$(BIN)/wiki "), f"make {target} runs {recipe}"
    return recipe[0].removeprefix("$(BIN)/")


def python_name_exists(dotted: str) -> bool:
    """A module, or a name inside one, that can be imported from the repository (or the venv)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.util.find_spec(".".join(parts[:cut])) is not None
        except ModuleNotFoundError:  # a parent is a module, not a package
            found = False
        if found:
            thing = importlib.import_module(".".join(parts[:cut]))
            for attribute in parts[cut:]:
                if not hasattr(thing, attribute):
                    return False
                thing = getattr(thing, attribute)
            return True
    return False


def repository_packages() -> set[str]:
    return {path.name for path in PROJECT_DIR.iterdir() if (path / "__init__.py").exists()}


def serve_default_port() -> int:
    command, context = wiki_cli()
    serve = command.get_command(context, "serve")
    return next(param.default for param in serve.params if param.name == "port")


class _Parsed(Exception):
    pass


@functools.cache
def simulator_default_port() -> int:
    """The port `python -m claude_sim serve` listens on without --port, read from its own parser."""
    parse = argparse.ArgumentParser.parse_args

    def parsed(parser, args=None, namespace=None):
        raise _Parsed(parse(parser, args, namespace))

    with mock.patch.object(argparse.ArgumentParser, "parse_args", parsed):
        try:
            claude_sim_main.main(["serve"])
        except _Parsed as done:
            return done.args[0].port
    raise AssertionError("python -m claude_sim serve parsed no arguments")


def listeners(snippet: str) -> list[tuple[str, int]]:
    """The servers a snippet starts and the port each listens on: the one given, else the default.
    A placeholder (`--port P`) starts nothing."""
    found = []
    for words in invocations(snippet, "wiki"):
        if words[:1] == ["serve"]:
            found.append(("wiki serve", _port(_option_value(words, "--port"), serve_default_port())))
        if words[:1] == ["mcp"] and _option_value(words, "--http"):
            found.append(("wiki mcp --http", _port(_option_value(words, "--http").rpartition(":")[2], None)))
    for words in invocations(snippet, "python"):
        if words[:3] == ["-m", "claude_sim", "serve"]:
            found.append(("the Claude simulator", _port(_option_value(words, "--port"), simulator_default_port())))
        if words[:3] == ["-m", "openai_sim", "serve"]:
            found.append(("the OpenAI-compatible fake", _port(_option_value(words, "--port"), FAKE_PORT)))
    return [(label, port) for label, port in found if port is not None]


def _port(given: str | None, default: int | None) -> int | None:
    if given is None:
        return default
    return int(given) if given.isdigit() else None


def _option_value(words: list[str], option: str) -> str | None:
    for index, word in enumerate(words):
        if word == option and index + 1 < len(words):
            return words[index + 1]
        if word.startswith(option + "="):
            return word.split("=", 1)[1]
    return None


# ---- the checks over every page

def all_snippets() -> list[tuple[str, str]]:
    return [(path.relative_to(PROJECT_DIR).as_posix(), snippet)
            for path in doc_files() for snippet in code_snippets(path.read_text())]


def test_every_wiki_command_and_option_the_pages_name_exists():
    named = [(where, words) for where, snippet in all_snippets() for words in invocations(snippet, "wiki")]
    assert len(named) > 50, named  # the pages are read: the README alone names a dozen commands
    problems = {f"{where}: wiki {' '.join(words)}: {problem}"
                for where, words in named if (problem := wiki_problem(words))}
    assert not problems, "\n".join(sorted(problems))


def test_a_misspelt_command_or_option_is_caught():
    """Every real command path, each with one word misspelt (seeded), is refused; the real ones pass."""
    command, context = wiki_cli()
    paths = []
    for name in command.list_commands(context):
        sub = command.get_command(context, name)
        names = sub.list_commands(context) if _is_group(sub) else [None]
        for leaf in names:
            words = [name, leaf] if leaf else [name]
            target = sub.get_command(context, leaf) if leaf else sub
            options = [opt for param in target.params for opt in param.opts if opt.startswith("--")]
            paths.append((words, options))
    rng = random.Random(22)
    for words, options in paths:
        assert wiki_problem([*words, *options]) is None, words
        index = rng.randrange(len(words))
        misspelt = list(words)
        misspelt[index] = _misspell(words[index], rng)
        assert wiki_problem(misspelt) is not None, misspelt
        if options:
            assert wiki_problem([*words, "--" + _misspell(rng.choice(options)[2:], rng)]) is not None
    snippet = "`.venv/bin/wiki compiles --tenant demo` and\nX=1 wiki page shwo entity/a | wiki search brisk --limt 3"
    assert [wiki_problem(words) for words in invocations(snippet, "wiki")] == [
        "`wiki` has no command 'compiles'", "`wiki page` has no command 'shwo'", "`wiki search` has no option --limt"]
    assert invocations("claude mcp add --transport http wiki http://x/mcp; the wiki is", "wiki") == []


def _misspell(word: str, rng: random.Random) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    while True:
        at = rng.randrange(len(word) + 1)
        edit = rng.choice(("insert", "delete", "replace"))
        if edit == "insert":
            candidate = word[:at] + rng.choice(letters) + word[at:]
        elif edit == "delete" and len(word) > 1 and at < len(word):
            candidate = word[:at] + word[at + 1:]
        elif at < len(word):
            candidate = word[:at] + rng.choice(letters) + word[at + 1:]
        else:
            continue
        if candidate != word and candidate.strip("-"):
            return candidate


def test_every_make_target_and_module_the_pages_name_exists():
    targets = make_targets()
    problems = []
    for where, snippet in all_snippets():
        for words in invocations(snippet, "make"):
            if words and not words[0].startswith("-") and words[0] not in targets:
                problems.append(f"{where}: make {words[0]}")
        for words in invocations(snippet, "python"):
            if words[:1] == ["-m"] and len(words) > 1 and not python_name_exists(words[1]):
                problems.append(f"{where}: python -m {words[1]}")
    assert not problems, problems
    assert "demo" in targets and python_name_exists("claude_sim") and not python_name_exists("tests.no_such_module")


def port_problems(pages: dict[str, str]) -> list[str]:
    """A port named on this machine must be a default of the code or one the same page chose on a
    command line, and no two servers the pages start may share a port (nor take an embedded one)."""
    embedded = embedded_ports()
    serving: dict[int, set[str]] = {port: {label} for port, label in embedded.items()}
    problems = []
    for name, text in pages.items():
        started = [found for snippet in code_snippets(text) for found in listeners(snippet)]
        for label, port in started:
            serving.setdefault(port, set()).add(label)
        chosen = {port for _, port in started} | {int(port) for port in re.findall(r"WIKI_\w*PORT=(\d+)", text)}
        known = set(embedded) | {serve_default_port()} | chosen | model_server_ports()
        mentions = [] if is_generated(text) else port_mentions(text)  # a report may quote a test's free port
        problems += [f"{name}: port {mention.port} is no default of the code and not chosen on the page: "
                     f"…{mention.text}…" for mention in mentions if mention.port not in known]
    return problems + [f"port {port} serves {' and '.join(sorted(labels))}"
                       for port, labels in serving.items() if len(labels) > 1]


def test_ports_the_pages_name_are_the_ones_the_code_uses():
    problems = port_problems({path.name: path.read_text() for path in doc_files()})
    assert not problems, "\n".join(problems)
    readme_ports = {mention.port for mention in port_mentions(README.read_text())}
    assert serve_default_port() in readme_ports and Settings.model_fields["dev_temporal_ui_port"].default in readme_ports


def test_a_port_the_code_does_not_use_or_two_servers_on_one_port_are_caught():
    assert listeners("python -m claude_sim serve") == [("the Claude simulator", simulator_default_port())]
    assert listeners("wiki serve --port 9000 &") == [("wiki serve", 9000)]
    assert listeners("wiki serve [--port P]") == []
    assert listeners("wiki mcp --http 127.0.0.1:8766") == [("wiki mcp --http", 8766)]
    assert [mention.port for mention in port_mentions("open http://127.0.0.1:8233 or localhost:9 on port 7233")] == [
        8233, 7233]
    serve = serve_default_port()
    assert port_problems({"a.md": f"`wiki serve --port {serve + 1}` and `python -m claude_sim serve --port {serve + 1}`"}) == [
        f"port {serve + 1} serves the Claude simulator and wiki serve"]
    assert port_problems({"a.md": "`wiki mcp --http 127.0.0.1:7233`"}) == [
        "port 7233 serves the Temporal dev server and wiki mcp --http"]
    assert port_problems({"a.md": "`wiki serve &` then `curl http://127.0.0.1:8001/v1/search`"})[0].startswith(
        "a.md: port 8001 is no default of the code")
    assert port_problems({"a.md": "`wiki serve --port 8001 &` then `curl http://127.0.0.1:8001/v1/search`"}) == []


def _range_of(field) -> str:
    """The bounds of a setting as the configuration page writes them: "1 to 500", "> 0, ≤ 600", "≥ 1"."""
    bounds = {name: getattr(item, name) for item in field.metadata for name in ("ge", "gt", "le")
              if getattr(item, name, None) is not None}
    if "ge" in bounds and "le" in bounds:
        return f"{bounds['ge']:g} to {bounds['le']:g}"
    signs = {"ge": "≥", "gt": ">", "le": "≤"}
    return ", ".join(f"{signs[name]} {bounds[name]:g}" for name in ("ge", "gt", "le") if name in bounds)


def _default_of(field) -> str:
    value = field.default
    if value is None or value == "":
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, int | float):
        return f"`{value:g}`"
    return f"`{value}`"


def settings_problems(configuration: str, pages: dict[str, str]) -> list[str]:
    """Every setting of runtime/settings.py has a row on the configuration page whose default and
    range are the code's; every WIKI_ variable a page names is a setting."""
    rows = {}
    for table in markdown_tables(configuration):
        for row in table:
            for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row[0]):
                rows[name] = row
    problems = []
    for field in Settings.model_fields.values():
        name = field.validation_alias.choices[0]
        if name not in rows:
            problems.append(f"{name} is missing")
            continue
        _, default, range_, *_ = rows[name]
        if not default.startswith(_default_of(field)):
            problems.append(f"{name}: default {default!r}, the code has {_default_of(field)}")
        if range_ != _range_of(field):
            problems.append(f"{name}: range {range_!r}, the code has {_range_of(field)!r}")
    aliases = {alias for field in Settings.model_fields.values() for alias in field.validation_alias.choices}
    for page, text in pages.items():
        problems += [f"{page}: {name} is no setting" for name in sorted(set(re.findall(r"\bWIKI_[A-Z0-9_]+\b", text)))
                     if name not in aliases]
    return problems


def test_the_configuration_page_lists_every_setting_with_its_default_and_range():
    problems = settings_problems(CONFIGURATION.read_text(), {path.name: path.read_text() for path in doc_files()})
    assert not problems, "\n".join(problems)


def test_a_wrong_default_or_range_or_an_unknown_setting_is_caught():
    """Each setting's row, with its default or its range changed (seeded), is caught; so is a name
    that is no setting."""
    configuration = CONFIGURATION.read_text()
    rng = random.Random(27)
    for field in Settings.model_fields.values():
        name = field.validation_alias.choices[0]
        row = next(line for line in configuration.splitlines() if line.startswith(f"| `{name}`"))
        cells = table_cells(row)
        column = rng.choice([1, 2])
        cells[column] = rng.choice([value for value in ("`7`", "unset", "2 to 9", "> 1", "") if value != cells[column]])
        changed = configuration.replace(row, "| " + " | ".join(cells) + " |")
        assert any(problem.startswith(name) for problem in settings_problems(changed, {})), (name, cells)
    assert settings_problems(configuration, {"a.md": "set WIKI_DEBOUNCE_SECOND=0"}) == [
        "a.md: WIKI_DEBOUNCE_SECOND is no setting"]


def reference_problems(pages: dict[Path, str]) -> list[str]:
    """Repository files, folders and Python names the pages' code names, and the pages their links
    lead to (with the heading of an anchor), that do not exist. A generated page is held to the code
    that writes it, not checked here: it changes when its make target runs again."""
    problems, packages = [], repository_packages()
    for path, text in pages.items():
        if not is_generated(text):
            for snippet in code_snippets(text):
                problems += [f"{path.name}: {name}" for name in repository_paths(snippet)
                             if not (PROJECT_DIR / name).exists()]
                problems += [f"{path.name}: {name}" for name in python_names(snippet, packages)
                             if not python_name_exists(name)]
        for link in relative_links(text):
            target, _, anchor = link.partition("#")
            linked = (path.parent / target).resolve()
            if not linked.exists():
                problems.append(f"{path.name}: link {link}")
            elif anchor and anchor not in heading_anchors(linked.read_text()):
                problems.append(f"{path.name}: link {link}: no such heading")
    return problems


def test_files_and_links_the_pages_name_exist():
    problems = reference_problems({path: path.read_text() for path in doc_files()})
    assert not problems, "\n".join(problems)


def test_a_missing_file_or_link_is_caught():
    assert repository_paths("see planners/compact_plan.py, tests/servers/ and https://a.b/c.py or .data/") == [
        "planners/compact_plan.py", "tests/servers/"]
    page = PROJECT_DIR / "docs" / "page.md"
    text = ("`domain/no_such.py`, `app.retain.no_such_function`, `app.retain.retain_and_signal`, "
            "[a](agents.md#no-such-heading) [b](nowhere.md) [c](cluster.md#the-nightly-lint)")
    assert reference_problems({page: text}) == [
        "page.md: domain/no_such.py", "page.md: app.retain.no_such_function",
        "page.md: link agents.md#no-such-heading: no such heading", "page.md: link nowhere.md"]
    assert python_names("`app.retain.retain_and_signal`, temporalio.worker.Worker, docs/x.md", {"app"}) == [
        "app.retain.retain_and_signal"]


# ---- the first session, run

def test_the_readme_block_is_found_and_covers_the_first_session():
    steps = walkthrough_steps(README.read_text())
    commands = [make_recipe(step.command[5:]) if step.command.startswith("make ") else step.command
                for step in steps]
    assert commands[0] == "wiki demo" and commands[-1] == "wiki dev down"
    for needed in ("wiki dev status", "wiki search", "wiki page show", "wiki retain", "wiki status",
                   "wiki compile", "wiki token create", "wiki serve", "curl", "wiki lint"):
        assert any(needed in command for command in commands), needed
    retain = next(step for step in steps if step.command.startswith("wiki retain"))
    assert retain.command.count("\n") == 4 and retain.command.endswith("\nEOF")  # the here-document's lines


class Shell:
    """One bash session: each step's output goes to its own files, and bash's own stdout carries only
    the exit status after each step, so a step's end is read, never waited for by time."""

    def __init__(self, environment: dict[str, str], cwd: Path) -> None:
        self.cwd, self.count = cwd, 0
        self.process = subprocess.Popen(["bash", "--noprofile", "--norc"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=(cwd / "shell.err").open("w"),
                                        text=True, env=environment, cwd=cwd, start_new_session=True)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.process.stdout, selectors.EVENT_READ)

    def run(self, command: str, bound: float) -> tuple[int, str, str, float]:
        self.count += 1
        out, err = self.cwd / f"step{self.count}.out", self.cwd / f"step{self.count}.err"
        marker = f"__step{self.count}_exit"
        self.process.stdin.write(f"{{ {command}\n}} >{out} 2>{err} </dev/null\necho \"{marker} $?\"\n")
        self.process.stdin.flush()
        started = time.monotonic()
        while True:
            remaining = bound - (time.monotonic() - started)
            if remaining <= 0 or not self.selector.select(remaining):
                pytest.fail(f"`{command.splitlines()[0]}` did not end within {bound}s")
            line = self.process.stdout.readline()
            if not line:
                pytest.fail(f"the shell ended during `{command.splitlines()[0]}`: {(self.cwd / 'shell.err').read_text()}")
            if line.startswith(marker):
                return int(line.split()[1]), out.read_text(), err.read_text(), time.monotonic() - started

    def close(self) -> None:
        """Ends the shell, a step it may be stuck in, and whatever it left in the background: its own
        process group only (the embedded services and the background worker run in sessions of their own)."""
        self.selector.close()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        self.process.stdin.close()
        self.process.wait(timeout=STEP_BOUND)


def localised(command: str, ports: dict[int, int]) -> str:
    """The command with the code's default ports replaced by this test's free ones; a `wiki serve`
    that relies on its default gets the free port explicitly."""
    for default, chosen in ports.items():
        command = re.sub(rf"(?<=:){default}\b|(?<=--port ){default}\b", str(chosen), command)
    return re.sub(r"\bwiki serve\b(?![^\n&|;]*--port)", f"wiki serve --port {ports[serve_default_port()]}", command)


@pytest.fixture
def fresh_shell(tmp_path: Path):
    """A newcomer's shell with its own data directory and ports; whatever the walkthrough leaves
    running (ours only: by the pids in that directory, and the shell's own process group) is stopped."""
    data_dir = tmp_path / "data"
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith(("WIKI_", "DATABASE_URL", "TEMPORAL_", "ANTHROPIC_"))}
    fields = Settings.model_fields
    ports = {fields[name].default: free_port() for name in ("dev_postgres_port", "dev_temporal_port",
                                                              "dev_temporal_ui_port")}
    ports[serve_default_port()] = free_port()
    bin_dirs = [str(Path(sys.executable).parent)]  # `wiki` of this venv
    if shutil.which("curl") is None:  # a machine with only Python: a stand-in for the curl the README uses
        stand_in = tmp_path / "bin" / "curl"
        stand_in.parent.mkdir()
        stand_in.write_text(f"#!{sys.executable}\nfrom tests.walkthrough_curl import main\nraise SystemExit(main())\n")
        stand_in.chmod(0o755)
        bin_dirs.append(str(stand_in.parent))
        environment["PYTHONPATH"] = str(PROJECT_DIR)
    environment.update({
        "WIKI_DATA_DIR": str(data_dir),
        "WIKI_DEV_POSTGRES_PORT": str(ports[fields["dev_postgres_port"].default]),
        "WIKI_DEV_TEMPORAL_PORT": str(ports[fields["dev_temporal_port"].default]),
        "WIKI_DEV_TEMPORAL_UI_PORT": str(ports[fields["dev_temporal_ui_port"].default]),
        "PATH": os.pathsep.join([*bin_dirs, os.environ.get("PATH", "")]),
        "COLUMNS": "80",
    })
    shell = Shell(environment, tmp_path)
    yield shell, ports, data_dir
    shell.close()
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


def run_step(shell: Shell, step: Step, ports: dict[int, int]) -> tuple[str, str]:
    command = step.command
    if command.startswith("make "):
        command = make_recipe(command.removeprefix("make ").strip())
    command = localised(command, ports)
    bound = DEMO_BOUND if command == "wiki demo" else STEP_BOUND
    code, stdout, stderr, took = shell.run(command, bound)
    assert code == step.exit_code, (
        f"`{step.line}` exited {code} after {took:.1f}s, the README says {step.exit_code}:\n"
        f"{stdout[-3000:]}\n{stderr[-3000:]}")
    if step.exit_code:
        assert stderr.startswith("error: ") and stderr.count("\n") == 1, stderr
    assert "Traceback" not in stderr, stderr
    return stdout, stderr


def test_a_newcomer_follows_the_readme(fresh_shell):
    shell, ports, data_dir = fresh_shell
    steps = walkthrough_steps(README.read_text())
    outputs = {step.line: run_step(shell, step, ports)[0] for step in steps[:-1]}

    def output(starting: str) -> str:
        return next(out for line, out in outputs.items() if line.startswith(starting))

    assert "retained for demo/eric: 700 inserted" in output("make demo")
    services = " ".join(output("wiki dev status").split())
    assert services.count("running") == 4 and "running (background, pid" in services, services
    assert "Franklin Barbecue" in output("wiki search brisk")
    assert output("wiki page show entity/franklin-barbecue").startswith("# Franklin Barbecue")
    assert "3 inserted" in output("wiki retain")
    assert "debouncing" in output("wiki status")
    assert "records_read" in output("wiki compile")  # compiled without waiting out the debounce
    casa_sol = output("wiki page show entity/casa-sol")
    assert casa_sol.startswith("# Casa Sol") and "sources (3;" in casa_sol, casa_sol
    assert '"slug":"casa-sol"' in output("curl")  # the HTTP API found the page by its title
    log = (data_dir / "worker.log").read_text()
    assert "worker polling wiki-compile" in log and "alembic" not in log

    # What the README says of the new memories: "Sam" is an alias of Sam Okafor, whose page cites one.
    sam, _ = run_step(shell, Step("sam", "wiki page show entity/sam-okafor --tenant demo --owner eric --sources", 0),
                      ports)
    assert "Casa Sol again, with Sam this time." in sam
    # A background worker that died is started again by the next command that needs one.
    worker_pid = _pid(data_dir / "worker.pid")
    assert worker_pid is not None and _alive(worker_pid)
    os.kill(worker_pid, signal.SIGKILL)
    _, again = run_step(shell, Step("worker killed", "wiki compile --tenant demo --owner eric", 0), ports)
    assert "started the background worker" in again
    assert _pid(data_dir / "worker.pid") not in (None, worker_pid)
    # Settings changed since the worker started: it polls the old queue, and the command says so.
    _, elsewhere = run_step(shell, Step("another queue", "WIKI_TASK_QUEUE=elsewhere wiki lint", 1), ports)
    assert elsewhere.startswith("error: the background worker (pid ") and (
        "polls task queue wiki-compile, not elsewhere: it keeps the settings it was started with" in elsewhere)

    down, _ = run_step(shell, steps[-1], ports)
    assert down.strip() == "stopped: worker, Temporal dev server, Postgres"
    for pid_file in (data_dir / "worker.pid", data_dir / "temporal.pid", data_dir / "postgres" / "postmaster.pid"):
        pid = _pid(pid_file)
        assert pid is None or not _alive(pid), f"{pid_file.name}: {pid} still runs"
