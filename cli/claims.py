"""`wiki claims rejected`: the lines the verification gate kept out of a scope's wiki, and why."""

from __future__ import annotations

from typing import Annotated

import typer

from app import pages
from cli.common import JsonOption, OwnerOption, TenantOption, handled, in_range, reading, run, scope
from cli.output import Col, WideOption, out, print_json, table
from runtime.settings import get_settings

claims_app = typer.Typer(help="Claims: what the verification gate rejected.", no_args_is_help=True)

MAX_LISTED = 1_000


@claims_app.callback()
def _claims() -> None:
    """Claims: what the verification gate rejected."""  # a group, so `rejected` stays a subcommand


@claims_app.command("rejected")
@handled
def claims_rejected(
    tenant: TenantOption,
    owner: OwnerOption,
    limit: Annotated[int, typer.Option(help=f"At most this many, newest first (1-{MAX_LISTED}).")] = 50,
    json_output: JsonOption = False,
    wide: WideOption = False,
) -> None:
    """The scope's rejected claims, newest first: page, section, the line, the memories it cited, why."""
    get_settings()
    tenant, owner = scope(tenant, owner)
    limit = in_range("limit", limit, 1, MAX_LISTED)
    rejected = run(reading(lambda conn: pages.rejected_claims(conn, tenant, owner, limit)))
    if json_output:
        print_json(rejected)
    elif rejected:
        out.print(table(f"Claims rejected in {tenant}/{owner}, newest first",
                        [Col("page", "key"), Col("section", "key"), Col("claim"), Col("stage", "key"),
                         Col("reason")],
                        [(r["page"], r["section"], r["text"], r["stage"], r["reason"]) for r in rejected],
                        boxed=False))
    else:
        out.print(f"no claim of {tenant}/{owner} was rejected")
