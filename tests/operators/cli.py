"""Running the `wiki` CLI from a test: in a thread (its commands call asyncio.run), as another process would."""

from __future__ import annotations

import asyncio

from typer.testing import CliRunner, Result

from cli import main as cli


async def wiki(*args: str, stdin: str | None = None) -> Result:
    return await asyncio.to_thread(CliRunner().invoke, cli.app, list(args), input=stdin)


def scope(tenant: str, owner: str = "alice") -> list[str]:
    return ["--tenant", tenant, "--owner", owner]


def one_error_line(result: Result, code: int, starts: str) -> None:
    """The command failed with `code` and said why in one stderr line."""
    assert result.exit_code == code, result.output
    assert result.stderr.startswith(f"error: {starts}"), result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
