"""`wiki export`: a scope's wiki as an Obsidian vault or one JSON document (app/export.py), and
`wiki ui`: the web view of `wiki serve` opened in a browser on a scope."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from cli.common import (
    EXIT_USAGE,
    CliError,
    JsonOption,
    OwnerOption,
    TenantOption,
    handled,
    reading,
    run,
    scope,
)
from cli.demo import DEMO_OWNER, DEMO_TENANT
from cli.output import out, print_json
from runtime.settings import get_settings

UI_TOKEN_HOURS = 12


class ExportFormat(StrEnum):
    obsidian = "obsidian"
    json = "json"


@handled
def export_command(
    destination: Annotated[Path, typer.Argument(metavar="DEST", help="obsidian: the vault's folder (made when "
                                                                     "missing); json: the file to write.")],
    tenant: TenantOption,
    owner: OwnerOption,
    export_format: Annotated[ExportFormat, typer.Option("--format", help="obsidian: one markdown note per page "
                                                                         "with YAML frontmatter and [[wikilinks]]; "
                                                                         "json: the same content as one document.")]
    = ExportFormat.obsidian,
    with_memories: Annotated[bool, typer.Option("--with-memories", help="Also write the cited memories (notes "
                                                                        "under memories/ in a vault).")] = False,
    git: Annotated[bool, typer.Option("--git", help="Commit the export in DEST's git repository (made when "
                                                    "missing); nothing is committed when nothing changed.")] = False,
    json_output: JsonOption = False,
) -> None:
    """Export the scope's active pages: same wiki, byte-identical files; a second export rewrites only
    what changed and removes what was deleted."""
    get_settings()
    tenant, owner = scope(tenant, owner)
    from app.export import (
        ExportError,
        WriteSummary,
        commit_export,
        json_document,
        read_export,
        vault_files,
        write_files,
    )
    from app.reads import ReadScope

    export = run(reading(lambda conn: read_export(conn, ReadScope(tenant=tenant, owner=owner), with_memories)))
    try:
        if export_format is ExportFormat.obsidian:
            folder = destination
            summary = write_files(folder, vault_files(export))
        else:
            if destination.is_dir():
                raise CliError(f"{destination} is a folder; --format json writes one file (wiki.json, say)",
                               EXIT_USAGE)
            folder = destination.parent
            document = json_document(export)
            same = destination.is_file() and destination.read_bytes() == document
            if not same:
                folder.mkdir(parents=True, exist_ok=True)
                destination.write_bytes(document)
            summary = WriteSummary(written=[] if same else [destination.name], removed=[], unchanged=int(same))
        if git:
            summary.committed = commit_export(folder, f"wiki export of {tenant}/{owner}: {len(export.pages)} pages, "
                                                      f"{len(export.memories)} memories")
    except ExportError as error:
        raise CliError(str(error)) from None
    except OSError as error:
        raise CliError(f"cannot write the export to {destination}: {error.strerror or error}") from None
    if json_output:
        print_json({"pages": len(export.pages), "memories": len(export.memories), **summary.model_dump()})
        return
    out.print(f"exported {len(export.pages)} pages and {len(export.memories)} memories of {tenant}/{owner} to "
              f"{destination}: {len(summary.written)} written, {len(summary.removed)} removed, "
              f"{summary.unchanged} unchanged" + (f"; committed {summary.committed[:12]}" if summary.committed else ""),
              soft_wrap=True, markup=False)


@handled
def ui_command(
    tenant: Annotated[str, typer.Option(help="Tenant of the wiki to open.")] = DEMO_TENANT,
    owner: Annotated[str, typer.Option(help="Owner of the wiki to open.")] = DEMO_OWNER,
    port: Annotated[int, typer.Option(help="Port of the local web view.", min=1, max=65535)] = 8765,
    open_browser: Annotated[bool, typer.Option("--open/--no-open", help="Open it in the default browser.")] = True,
) -> None:
    """Open the web view locally on a scope (the demo's by default): make a read token for it, start
    `wiki serve` on loopback, print the address and the token to paste on the sign-in page."""
    settings = get_settings()
    tenant, owner = scope(tenant, owner)
    from app import tokens
    from cli.agents import serve_on
    from cli.common import change

    expires = datetime.now(UTC) + timedelta(hours=UI_TOKEN_HOURS)
    issued = run(change(tokens.issue_token, tenant, owner, "wiki ui", "read", expires))
    address = f"http://127.0.0.1:{port}/"
    print(f"web view of {tenant}/{owner} at {address} — sign in with this read token (valid for {UI_TOKEN_HOURS} "
          "hours):",
          file=sys.stderr, flush=True)
    sys.stdout.write(issued.token + "\n")
    sys.stdout.flush()
    if open_browser:
        import webbrowser

        webbrowser.open(f"{address}sign-in")
    serve_on(settings, "127.0.0.1", port)
