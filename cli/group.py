"""The `wiki` group itself: one-line usage errors, exit codes, and commands loaded when they run.

Kept free of the product's modules, so that `wiki --help` imports Typer and this file only: each
command's module (and the database, Temporal and model clients it brings) is imported when that
command runs or shows its own help.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:  # the installed Typer vendors Click
    from typer._click.core import Command, Context
    from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
else:
    try:
        from typer._click.core import Command, Context
        from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
    except ImportError:  # a Typer that does not vendor Click
        from click.core import Command, Context
        from click.exceptions import ClickException, NoArgsIsHelpError, UsageError

EXIT_FAILURE = 1
EXIT_USAGE = 2


@dataclass
class ProcessState:
    temporal_used: bool = False


process = ProcessState()


def print_error(message: str) -> None:
    # An error may quote data (a name, a line of a file) or a URL: no control character, no password.
    # Imported here, on the error path only, so `wiki --help` stays light.
    from cli.output import safe_text
    from runtime.settings import mask_secrets

    first, _, details = safe_text(mask_secrets(message)).strip().partition("\n")
    print(f"error: {first}", file=sys.stderr)
    if details:
        print(details, file=sys.stderr)


def _usage_message(error: UsageError) -> str:
    """Click's message on one line, with where to read the usage."""
    message = " ".join(error.format_message().split()).rstrip(".")
    context = error.ctx
    if context is not None:
        message += f" (see `{context.command_path} --help`)"
    return message


class OneLineErrors(TyperGroup):
    """The `wiki` group: a usage error is one `error:` line on stderr and exit 2, never Click's box.

    Every invocation passes through here (the console script and Typer's CliRunner alike), so the
    console's width is reset too: `--wide` lasts one command.
    """

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True, windows_expand_args: bool = True,
             **extra: Any) -> Any:
        from cli.output import set_wide

        set_wide(False)
        try:
            result = super().main(args=args, prog_name=prog_name, complete_var=complete_var,
                                  standalone_mode=False, windows_expand_args=windows_expand_args, **extra)
        except NoArgsIsHelpError:
            result = EXIT_USAGE  # the help is already printed
        except UsageError as error:
            print_error(_usage_message(error))
            result = EXIT_USAGE
        except ClickException as error:
            print_error(" ".join(error.format_message().split()))
            result = error.exit_code
        except typer.Abort:
            print_error("aborted")
            result = EXIT_FAILURE
        code = result if isinstance(result, int) else 0
        if not standalone_mode:
            return code
        sys.exit(code)


@dataclass(frozen=True)
class LazyCommand:
    """A command of the group: where it lives, and its one line in `wiki --help`."""

    module: str
    attribute: str  # a command function, or a Typer of subcommands
    help: str


class LazyGroup(OneLineErrors):
    """The group whose commands are imported only when one of them runs (or shows its own help)."""

    commands_table: dict[str, LazyCommand] = {}

    def list_commands(self, ctx: Context) -> list[str]:
        return list(self.commands_table)

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        entry = self.commands_table.get(cmd_name)
        if entry is None:
            return None
        if getattr(ctx, "_listing_commands", False):
            # Listing for the group's help: the table's line is enough, nothing is imported.
            return TyperCommand(cmd_name, short_help=entry.help, help=entry.help)
        loaded = self.commands.get(cmd_name)
        if loaded is None:
            loaded = _load(cmd_name, entry)
            self.commands[cmd_name] = loaded
        return loaded

    def format_help(self, ctx: Context, formatter: Any) -> None:
        ctx._listing_commands = True  # type: ignore[attr-defined]
        try:
            super().format_help(ctx, formatter)
        finally:
            ctx._listing_commands = False  # type: ignore[attr-defined]


def _load(name: str, entry: LazyCommand) -> Command:
    target = getattr(importlib.import_module(entry.module), entry.attribute)
    if isinstance(target, typer.Typer):
        target._add_completion = False  # as when it was added to the group: `wiki` itself has none
        command = typer.main.get_command(target)
    else:
        single = typer.Typer(add_completion=False)
        single.command(name)(target)
        command = typer.main.get_command(single)
    command.name = name
    return command
