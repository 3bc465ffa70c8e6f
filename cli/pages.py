"""The compiled wiki's pages: `wiki search`, and `wiki page show/backlinks/archive/restore/delete`, and
why a page holds its names: `wiki page merges/merge/unmerge`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from app import merges as pages_merges
from app import pages
from app.pages import ClaimView, PageWithSources, SourceMemory

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection
from cli.common import (
    EXIT_USAGE,
    CliError,
    JsonOption,
    OwnerOption,
    TenantOption,
    YesOption,
    change,
    confirm,
    handled,
    in_range,
    read_found,
    reading,
    run,
    scope,
)
from cli.output import Col, WideOption, first_line, out, print_json, table, write_text
from domain.claims import claim_mark, status_legend
from domain.markup import safe_markdown
from domain.search import MAX_SEARCH_LIMIT, MIN_TERM_LENGTH, normalize_search_terms
from runtime.settings import get_settings

page_app = typer.Typer(help="One page: show it, its backlinks; archive, restore or delete it; its merges.",
                       no_args_is_help=True)

PageArgument = Annotated[str, typer.Argument(
    metavar="PAGE", help="The page by TYPE/SLUG (entity/franklin-barbecue), slug, title or alias, as MCP and "
                         "HTTP read it; an archived page by TYPE/SLUG only.")]


@handled
def search_command(
    query: Annotated[str, typer.Argument(help="Words to search for; a word may be a prefix (empan).")],
    tenant: TenantOption,
    owner: OwnerOption,
    limit: Annotated[int, typer.Option(help=f"At most this many results (1-{MAX_SEARCH_LIMIT}).")] = 20,
    json_output: JsonOption = False,
    wide: WideOption = False,
) -> None:
    """The pages holding the answers to the words (recall's ranking grouped by page; a word may be a prefix;
    pages the words name first), best first."""
    get_settings()
    tenant, owner = scope(tenant, owner)
    limit = in_range("limit", limit, 1, MAX_SEARCH_LIMIT)
    from app import reads

    try:  # the same check, and sentence, as MCP's and HTTP's search
        query = reads.text_argument("query", query, reads.MAX_QUERY_CHARS)
    except reads.BadInput as error:
        raise CliError(str(error), EXIT_USAGE) from None
    from app.reads import ReadScope
    from app.recall import embedder_for
    from app.search import search

    found = run(reading(lambda conn: search(conn, ReadScope.of(tenant, owner), query, limit,
                                            embedder_for(get_settings()))))
    hits = found.hits
    if json_output:
        print_json(hits)  # with each hit's score
    elif hits:
        # Ranks, not raw scores: a page naming the words far apart scores near 0 and still matches.
        out.print(table(f"Search {query!r} in {tenant}/{owner}, best first",
                        [Col("#", "num"), Col("page", "key"), Col("title"), Col("matched alias")],
                        [(rank, f"{h.type}/{h.slug}", h.title, h.matched_alias or "")
                         for rank, h in enumerate(hits, 1)], boxed=False))
    elif not normalize_search_terms(query):
        out.print(f"no page of {tenant}/{owner} matches {query!r}: a search word needs at least "
                  f"{MIN_TERM_LENGTH} letters or digits")
    else:
        out.print(f"no page of {tenant}/{owner} matches {query!r}")


def _source_line(source: SourceMemory) -> str:
    if source.content is None:
        return f"- {source.id} (no longer stored)"
    return f"- {source.dated:%Y-%m-%d} {source.id}: {first_line(source.content, 80)}"


def _sources_lines(cited: list[SourceMemory]) -> list[str]:
    return ["", f"sources ({len(cited)}; `wiki memory show ID` shows one whole):" if cited else "sources: none",
            *(_source_line(source) for source in cited)]


def _claim_line(claim: ClaimView) -> str:
    # Each line marked with what was checked: its confidence (when a memory was shown to support it),
    # its status, and how many memories it cites.
    mark = claim_mark(claim.status, claim.confidence)
    if claim.validity == "superseded" and claim.valid_to is not None:
        mark += f" · until {claim.valid_to:%Y-%m-%d}"
    elif claim.validity == "disputed":
        mark += " · disputed"
    return f"{claim.text} `[{mark} · {claim.corroboration} mem]`"


def _page_markdown(page: PageWithSources, sources: bool, per_section: bool = False) -> str:
    """The page; with `sources` the memories it cites, once for the page (a memory cited by three
    sections is listed once), or under each section with `per_section`."""
    lines = [f"# {page.title}", "",
             f"{page.type}/{page.slug} · {page.status} · aliases: {', '.join(page.aliases) or 'none'}"]
    if page.summary:
        lines += ["", page.summary]
    for section in page.sections:
        claimed = page.claims.get(section.slug)
        body = "\n".join(_claim_line(c) for c in claimed) if claimed is not None else section.body_md.strip()
        lines += ["", f"## {section.heading}", "", body]
        if sources and per_section:
            lines += _sources_lines(page.sources.get(section.slug, []))
    if sources and not per_section:
        once = {source.id: source for section in page.sections for source in page.sources.get(section.slug, [])}
        lines += _sources_lines(list(once.values()))
    if page.statuses:
        lines += ["", "statuses:", *(f"- {line}" for line in status_legend(page.statuses))]
    # Whatever the rows hold, the markdown printed is safe (domain.markup).
    return safe_markdown("\n".join(lines)) + "\n"


async def _page_key(conn: AsyncConnection, tenant: str, owner: str, ref: str) -> tuple[str, str]:
    """TYPE/SLUG as given, else the page a title, alias or slug names, as MCP and HTTP read it."""
    from app import reads

    try:
        return await reads.page_key(conn, reads.ReadScope.of(tenant, owner), ref)
    except reads.BadInput as error:
        raise CliError(str(error), EXIT_USAGE) from None
    except reads.NotFound:
        raise CliError(f"no page named {ref.strip()!r} in {tenant}/{owner}; `wiki search` finds pages by "
                       "words") from None


def _resolved_ref(tenant: str, owner: str, ref: str) -> tuple[str, str]:
    return run(reading(lambda conn: _page_key(conn, tenant, owner, ref)))


@page_app.command("show")
@handled
def page_show(
    page_ref: PageArgument,
    tenant: TenantOption,
    owner: OwnerOption,
    sources: Annotated[bool, typer.Option(help="The memories the page cites, each once: date, id and first "
                                               "line.")] = False,
    per_section: Annotated[bool, typer.Option("--per-section", help="With --sources: under each section, "
                                                                     "the memories that section cites.")] = False,
    min_confidence: Annotated[float, typer.Option(help="Only claims at least this sure (0 to 1).")] = 0.0,
    history: Annotated[bool, typer.Option("--history", help="Facts since replaced too, each with the day it "
                                                            "stopped holding.")] = False,
    as_of: Annotated[str | None, typer.Option("--as-of", metavar="DATE",
                                              help="The page as its memories up to DATE (2026-02-15, or an ISO "
                                                   "date-time) supported it.")] = None,
    json_output: JsonOption = False,
) -> None:
    """The page as markdown, sections in order (archived pages too, marked as such); each line marked
    with its confidence and status, a replaced fact with when it stopped holding. --json gives
    sections with their claims (text, sources, confidence, status, first and last seen, valid from
    and to, validity)."""
    get_settings()
    tenant, owner = scope(tenant, owner)
    if not 0.0 <= min_confidence <= 1.0:
        raise CliError(f"min-confidence must be between 0 and 1 (got {min_confidence})", EXIT_USAGE)
    from app import reads

    try:
        moment = reads.parse_as_of(as_of)
    except reads.BadInput as error:
        raise CliError(str(error), EXIT_USAGE) from None
    page_type, slug = _resolved_ref(tenant, owner, page_ref)
    view = run(reading(lambda conn: pages.page_with_sources(conn, tenant, owner, page_type, slug,
                                                            sources=sources or per_section,
                                                            min_confidence=min_confidence, history=history,
                                                            as_of=moment)))
    if view is None:
        raise CliError(f"no page {page_type}/{slug} in {tenant}/{owner}")
    if json_output:
        print_json(view)
    else:
        write_text(_page_markdown(view, sources or per_section, per_section))


@page_app.command("backlinks")
@handled
def page_backlinks(page_ref: PageArgument, tenant: TenantOption, owner: OwnerOption,
                   json_output: JsonOption = False, wide: WideOption = False) -> None:
    """The active pages that link to this page."""
    get_settings()
    tenant, owner = scope(tenant, owner)
    page_type, slug = _resolved_ref(tenant, owner, page_ref)
    links = read_found(lambda conn: pages.backlinks_of(conn, tenant, owner, page_type, slug),
                       f"no page {page_type}/{slug} in {tenant}/{owner}")
    if json_output:
        print_json(links)
    elif links:
        out.print(table(f"Pages linking to {page_ref}", [Col("from", "key"), Col("kind", "key"), Col("title"),
                                                          Col("context")],
                        [(f"{b.from_type}/{b.from_slug}", b.kind, b.from_title, b.context or "") for b in links],
                        boxed=False))
    else:
        out.print(f"no active page links to {page_ref}")


def _set_status(page_ref: str, tenant: str, owner: str, status: str) -> None:
    get_settings()
    tenant, owner = scope(tenant, owner)
    page_type, slug = _resolved_ref(tenant, owner, page_ref)
    if not run(change(pages.set_page_status, tenant, owner, page_type, slug, status)):
        raise CliError(f"no page {page_type}/{slug} in {tenant}/{owner}")


@page_app.command("archive")
@handled
def page_archive(page_ref: PageArgument, tenant: TenantOption, owner: OwnerOption) -> None:
    """Hide the page from search and reads; everything is kept, and a compile of its slug resurrects it."""
    _set_status(page_ref, tenant, owner, "archived")
    out.print(f"archived {page_ref} of {tenant}/{owner}")


@page_app.command("restore")
@handled
def page_restore(page_ref: PageArgument, tenant: TenantOption, owner: OwnerOption) -> None:
    """Make an archived page active again."""
    _set_status(page_ref, tenant, owner, "active")
    out.print(f"restored {page_ref} of {tenant}/{owner}")


@page_app.command("delete")
@handled
def page_delete(page_ref: PageArgument, tenant: TenantOption, owner: OwnerOption, yes: YesOption = False) -> None:
    """Delete the page for good, with its sections, aliases, links and section sources."""
    get_settings()
    tenant, owner = scope(tenant, owner)
    page_type, slug = _resolved_ref(tenant, owner, page_ref)
    confirm(f"Delete {page_type}/{slug} of {tenant}/{owner} with all its sections and sources?", yes)
    deleted = run(change(pages.delete_page, tenant, owner, page_type, slug))
    if deleted is None:
        raise CliError(f"no page {page_type}/{slug} in {tenant}/{owner}")
    out.print(f"deleted {page_type}/{slug} of {tenant}/{owner} with {deleted.sections} sections, {deleted.aliases} "
              f"aliases, {deleted.links} links and {deleted.section_sources} section sources", soft_wrap=True)


@page_app.command("keep-section")
@handled
def page_keep_section(
    page_ref: PageArgument,
    section: Annotated[str, typer.Argument(metavar="SECTION", help="The section's slug (its id in `wiki page show "
                                                                   "--json`).")],
    tenant: TenantOption,
    owner: OwnerOption,
    undo: Annotated[bool, typer.Option("--undo", help="Allow promoting the section again.")] = False,
    json_output: JsonOption = False,
) -> None:
    """Never promote this section of the page to a page of its own (the aggregation pass leaves it on
    its page), in every compile and rebuild after."""
    from app import corrections
    from cli.corrections import corrected, report

    report(corrected(tenant, owner, lambda engine, at: corrections.keep_section(engine, at, page_ref, section,
                                                                                undo=undo)), json_output)


@page_app.command("list")
@handled
def page_list(tenant: TenantOption, owner: OwnerOption, json_output: JsonOption = False,
              wide: WideOption = False) -> None:
    """Every page of the scope (archived ones too), with its claims: how many, and how many durable."""
    get_settings()
    tenant, owner = scope(tenant, owner)
    listed = run(reading(lambda conn: pages.page_list(conn, tenant, owner)))
    if json_output:
        print_json(listed)
    elif listed:
        out.print(table(f"Pages of {tenant}/{owner}", [Col("page", "key"), Col("title"), Col("status", "key"),
                                                       Col("sections", "num"), Col("claims", "num"),
                                                       Col("durable", "num")],
                        [(f"{p.type}/{p.slug}", p.title, p.status, p.sections, p.claims, p.durable_claims)
                         for p in listed], boxed=False))
    else:
        out.print(f"no page in {tenant}/{owner}")


def _merge_view_line(merge: pages_merges.PageMerge) -> str:
    undone = f", undone {merge.undone_at[:19]}" if merge.undone_at else ""
    return (f"- {merge.merged_at[:19]}: {merge.source} merged into {merge.target} ({merge.sections_moved} sections, "
            f"{merge.aliases_moved} aliases){undone}")


@page_app.command("merges")
@handled
def page_merges_command(page_ref: PageArgument, tenant: TenantOption, owner: OwnerOption,
                        json_output: JsonOption = False) -> None:
    """Why the page holds the names it holds: every resolution decision about it (the rung or the judge,
    the evidence, the answer, the run), newest first, and the operator merges it took part in."""
    get_settings()
    tenant, owner = scope(tenant, owner)
    page_type, slug = _resolved_ref(tenant, owner, page_ref)
    record = read_found(lambda conn: pages_merges.page_resolution(conn, tenant, owner, page_type, slug),
                        f"no page {page_type}/{slug} in {tenant}/{owner}")
    if json_output:
        print_json(record)
        return
    lines = [f"# Resolution of {record.page}", ""]
    for d in record.decisions:
        answer = "same" if d.same else "apart"
        places = d.evidence.get("proposal_places") or d.evidence.get("candidate_places")
        lines.append(f"- {d.decided_at:%Y-%m-%d %H:%M} {answer} by {d.decided_by} ({d.rung}"
                     f"{': ' + d.detail if d.detail else ''}): {', '.join(d.names)} from {d.proposal}"
                     f" — {d.reason}{f'; places {places}' if places else ''}{f'; run {d.run_id}' if d.run_id else ''}")
    lines += [_merge_view_line(m) for m in record.merges]
    if len(lines) == 2:
        lines.append("no decision on record: the page's names were never compared with another page's")
    write_text(safe_markdown("\n".join(lines)) + "\n")


def _exact_ref(ref: str) -> tuple[str, str]:
    page_type, slash, slug = ref.strip().partition("/")
    if not slash or not page_type or not slug:
        raise CliError(f"name the page as TYPE/SLUG (entity/franklin-barbecue), not {ref!r}", EXIT_USAGE)
    return page_type, slug


@page_app.command("merge")
@handled
def page_merge(source: Annotated[str, typer.Argument(metavar="A", help="The page merged away, as TYPE/SLUG.")],
               target: Annotated[str, typer.Argument(metavar="B", help="The page it joins, as TYPE/SLUG.")],
               tenant: TenantOption, owner: OwnerOption, json_output: JsonOption = False) -> None:
    """Merge page A into page B: A's sections (with their claims and sources) and aliases move to B and A
    is archived. Kept on record, so `wiki page unmerge A` restores both exactly; compiles and `wiki
    rebuild` keep A's name on B while the merge stands."""
    get_settings()
    tenant, owner = scope(tenant, owner)
    try:
        merged = run(change(pages_merges.merge, tenant, owner, _exact_ref(source), _exact_ref(target)))
    except pages_merges.MergeRefused as refused:
        raise CliError(str(refused)) from None
    if json_output:
        print_json(merged)
    else:
        out.print(f"merged {merged.source} into {merged.target}: {merged.sections_moved} sections and "
                  f"{merged.aliases_moved} aliases moved; `wiki page unmerge {merged.source}` undoes it")


@page_app.command("unmerge")
@handled
def page_unmerge(source: Annotated[str, typer.Argument(metavar="A", help="The merged page, as TYPE/SLUG.")],
                 tenant: TenantOption, owner: OwnerOption, json_output: JsonOption = False) -> None:
    """Undo `wiki page merge A B`: A's sections, claims, sources and aliases go back to A, which is active again."""
    get_settings()
    tenant, owner = scope(tenant, owner)
    try:
        undone = run(change(pages_merges.unmerge, tenant, owner, _exact_ref(source)))
    except pages_merges.MergeRefused as refused:
        raise CliError(str(refused)) from None
    if json_output:
        print_json(undone)
    else:
        out.print(f"unmerged {undone.source} from {undone.target}: {undone.sections_moved} sections and "
                  f"{undone.aliases_moved} aliases restored")
