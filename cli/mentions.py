"""Names the compile holds until it sees them again: `wiki mention list`, and `wiki mention ignore`."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.common import JsonOption, OwnerOption, TenantOption, handled, in_range, reading, run, scope
from cli.output import Col, WideOption, first_line, out, print_json, table
from domain.promotion import PROMOTION_MIN_SIGHTINGS, PROMOTION_WINDOW_DAYS
from runtime.settings import get_settings

MAX_MENTIONS_LISTED = 500

mention_app = typer.Typer(help="Open mentions: names seen too rarely yet to get a page of their own.",
                          no_args_is_help=True)


@mention_app.callback()
def _mentions() -> None:
    """Open mentions: names seen too rarely yet to get a page of their own."""  # a group, even of one command


@mention_app.command("list")
@handled
def mention_list(
    tenant: TenantOption,
    owner: OwnerOption,
    limit: Annotated[int, typer.Option(help=f"At most this many (1-{MAX_MENTIONS_LISTED}).")] = 50,
    json_output: JsonOption = False,
    wide: WideOption = False,
) -> None:
    """The scope's open mentions, most seen first, with how often and when each was seen."""
    from app import pages

    get_settings()
    tenant, owner = scope(tenant, owner)
    limit = in_range("limit", limit, 1, MAX_MENTIONS_LISTED)
    rows, total = run(reading(lambda conn: pages.open_mentions(conn, tenant, owner, limit)))
    if json_output:
        print_json({"open": total, "mentions": rows})
        return
    if not rows:
        out.print(f"no open mention in {tenant}/{owner}")
        return
    out.print(table(f"Open mentions of {tenant}/{owner}, most seen first",
                    [Col("name", "key"), Col("type", "key"), Col("seen", "num"), Col("last seen", "key"),
                     Col("context")],
                    [(r.alias, r.suggested_type or "", r.mention_count, f"{r.last_seen_at:%Y-%m-%d}",
                      first_line(r.quote or "", 60)) for r in rows], boxed=False))
    shown = f"{len(rows)} of {total}" if total > len(rows) else str(total)
    out.print(f"{shown} open; a name seen {PROMOTION_MIN_SIGHTINGS} times, the last within "
              f"{PROMOTION_WINDOW_DAYS} days, gets its page at the next compile or nightly lint", soft_wrap=True)


@mention_app.command("ignore")
@handled
def mention_ignore(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The name as memories write it.")],
    tenant: TenantOption,
    owner: OwnerOption,
    json_output: JsonOption = False,
) -> None:
    """Never promote this name to a page, nor offer it to the planner again (its open mention closes)."""
    from app import corrections
    from cli.corrections import corrected, report

    report(corrected(tenant, owner, lambda engine, at: corrections.ignore_mention(engine, at, name)), json_output)
