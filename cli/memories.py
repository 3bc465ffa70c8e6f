"""Memories: `wiki retain` stores them and wakes the compile; `wiki memory show` shows one whole and
`wiki memory pages` where it is cited; `wiki memory forget` forgets memories."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from app import pages
from app.pages import MemoryShown
from app.retain import RetainOutcome, plain_memories_note, retain_and_signal
from cli.common import (
    EXIT_USAGE,
    CliError,
    JsonOption,
    OwnerOption,
    TenantOption,
    database,
    handled,
    parse_memory_id,
    read_found,
    require_worker,
    run,
    scope,
    temporal,
)
from cli.output import Col, WideOption, out, print_json, print_workflow_location, safe_text, table, write_text
from domain.conversation import ConversationIn
from domain.memory import MemoryIn, parse_memory_lines
from messages.compile import compile_workflow_id
from runtime.settings import Settings, get_settings

memory_app = typer.Typer(help="One memory: show it whole, the pages citing it; forget memories.", no_args_is_help=True)

MemoryArgument = Annotated[str, typer.Argument(metavar="MEMORY_ID", help="The memory's id (a UUID).")]


def _read_text(file: str) -> str:
    if file == "-":
        return sys.stdin.read()
    try:
        return Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise CliError(f"cannot read {file}: {error}", EXIT_USAGE) from None


def read_memories(file: str) -> list[MemoryIn]:
    """Every line validated; any bad line is printed as `line N: message` and nothing is returned."""
    # split("\n"), not splitlines(): JSON strings may contain U+2028 and other line separators.
    memories, errors = parse_memory_lines(_read_text(file).split("\n"))
    if errors:
        for error in errors:
            print(safe_text(f"line {error.line}: {error.message}"), file=sys.stderr)
        source = "stdin" if file == "-" else file
        raise CliError(f"{len(errors)} invalid line(s) in {source}; nothing was stored", EXIT_USAGE)
    return memories


async def _retain(settings: Settings, tenant: str, owner: str, memories: list[MemoryIn],
                  compile_after: bool) -> RetainOutcome:
    async with database() as engine:
        # Connect first: if Temporal is down, fail before storing anything.
        client = await temporal(settings) if compile_after else None
        if client is not None:
            await require_worker(client, settings, wait=False)
        return await retain_and_signal(engine, tenant, owner, memories, client=client, settings=settings)


def print_retained(outcome: RetainOutcome, tenant: str, owner: str) -> None:
    stored = outcome.stored
    out.print(f"retained for {tenant}/{owner}: {len(stored.inserted)} inserted, {len(stored.updated)} updated, "
              f"{len(stored.unchanged)} unchanged", soft_wrap=True)


def read_conversation(file: str) -> ConversationIn:
    """The conversation file (one JSON object), checked; a problem is one line and exit 2."""
    from domain.conversation import ConversationError, parse_conversation
    from domain.memory import parse_json

    text = _read_text(file)
    source = "stdin" if file == "-" else file
    try:
        return parse_conversation(parse_json(text))
    except (ValueError, ConversationError) as error:
        raise CliError(f"{source}: {error}; nothing was stored", EXIT_USAGE) from None


async def _retain_conversation(settings: Settings, tenant: str, owner: str, conversation: ConversationIn,
                               compile_after: bool) -> RetainOutcome:
    from app.conversations import retain_conversation
    from domain.conversation import ConversationError

    async with database() as engine:
        client = await temporal(settings) if compile_after else None
        if client is not None:
            await require_worker(client, settings, wait=False)
        try:
            _, outcome = await retain_conversation(engine, tenant, owner, conversation, client=client,
                                                   settings=settings)
        except ConversationError as error:
            raise CliError(f"{error}; nothing was stored", EXIT_USAGE) from None
        return outcome


@handled
def retain_command(
    tenant: TenantOption,
    owner: OwnerOption,
    file: Annotated[str | None, typer.Argument(help="JSONL file of memories, or - for stdin.")] = None,
    conversation: Annotated[str | None, typer.Option(
        "--conversation", metavar="FILE",
        help='A conversation (one JSON object, or - for stdin): {"id", "user", "messages": [{"speaker", "text", '
             '"time"}]}; each message is kept as a turn with its speaker.')] = None,
    compile_after: Annotated[bool, typer.Option("--compile/--no-compile",
                                                help="Wake the scope's compile when anything changed.")] = True,
) -> None:
    """Store memories, or a conversation's turns (all or nothing), and wake the scope's compile."""
    settings = get_settings()
    tenant, owner = scope(tenant, owner)
    if (file is None) == (conversation is None):
        raise CliError("give a JSONL file of memories, or --conversation FILE (one of them)", EXIT_USAGE)
    note = None
    if conversation is not None:
        talk = read_conversation(conversation)
        outcome = run(_retain_conversation(settings, tenant, owner, talk, compile_after))
        print_retained(outcome, tenant, owner)
        out.print(f"conversation {talk.id}: {len(talk.messages)} turns", soft_wrap=True, markup=False)
    else:
        memories = read_memories(file or "-")
        outcome = run(_retain(settings, tenant, owner, memories, compile_after))
        print_retained(outcome, tenant, owner)
        note = plain_memories_note(memories, settings.llm)
    if note is not None:
        out.print(note, soft_wrap=True)
    workflow_id = compile_workflow_id(tenant, owner)
    if outcome.compile is not None:
        out.print(f"compile signalled: workflow {workflow_id}", soft_wrap=True)
        print_workflow_location(settings, workflow_id)
    elif outcome.stored.changed == 0:
        out.print("nothing changed; no compile needed")
    else:
        out.print(f"compile not signalled (--no-compile); run `wiki compile --tenant {tenant} --owner {owner}`",
                  soft_wrap=True)


def _memory_markdown(memory: MemoryShown) -> str:
    lines = [f"# Memory {memory.id}", "",
             f"{memory.tenant}/{memory.owner} · dated {memory.dated:%Y-%m-%d %H:%M} UTC · "
             f"last stored {memory.updated_at:%Y-%m-%d %H:%M} UTC", "", safe_text(memory.content).strip(), ""]
    if memory.conversation is not None:
        lines += [f"## In conversation {safe_text(memory.conversation)}, turn {memory.position}", ""]
        lines += [f"{'>' if turn.this else ' '} {turn.position}. {safe_text(turn.content).strip()}"
                  for turn in memory.around] + [""]
    lines += ["## Metadata", "", safe_text(json.dumps(memory.metadata, indent=2, ensure_ascii=False)), "",
              "## Cited by", ""]
    lines += [f"- {c.page_type}/{c.page_slug} ({c.page_title}): {c.heading}" for c in memory.cited_by] or [
        "no section of an active page cites it"]
    return "\n".join(lines) + "\n"


@memory_app.command("show")
@handled
def memory_show(memory: MemoryArgument, tenant: TenantOption, owner: OwnerOption,
                json_output: JsonOption = False) -> None:
    """The memory whole: its text, date and metadata, and the sections (of active pages) citing it."""
    get_settings()
    tenant, owner = scope(tenant, owner)
    memory_id = parse_memory_id(memory)

    shown = read_found(lambda conn: pages.memory_shown(conn, tenant, owner, memory_id),
                       f"no memory {memory_id} in {tenant}/{owner}")
    if json_output:
        print_json(shown)
    else:
        write_text(_memory_markdown(shown))


@memory_app.command("pages")
@handled
def memory_pages(
    memory: MemoryArgument,
    tenant: TenantOption,
    owner: OwnerOption,
    json_output: JsonOption = False,
    wide: WideOption = False,
) -> None:
    """The sections (of active pages) that cite the memory."""
    get_settings()
    tenant, owner = scope(tenant, owner)
    memory_id = parse_memory_id(memory)

    sections = read_found(lambda conn: pages.sections_citing(conn, tenant, owner, memory_id),
                          f"no memory {memory_id} in {tenant}/{owner}")
    if json_output:
        print_json(sections)
    elif sections:
        out.print(table(f"Sections citing {memory_id}", [Col("page", "key"), Col("title"), Col("section")],
                        [(f"{c.page_type}/{c.page_slug}", c.page_title, c.heading) for c in sections], boxed=False))
    else:
        out.print(f"no section cites memory {memory_id}")


async def _forget(settings: Settings, tenant: str, owner: str, ids: list[str], dry_run: bool,
                  wait: float | None = None):
    from app.forget import forget_memories, preview_forget, wait_for_receipt
    from app.reads import ReadScope

    read_scope = ReadScope.of(tenant, owner)
    async with database() as engine:
        if dry_run:
            return await preview_forget(engine, read_scope, ids)
        client = await temporal(settings)
        await require_worker(client, settings, wait=wait is not None)
        queued = await forget_memories(engine, read_scope, ids, client, settings)
        if wait is None:
            return queued
        return await wait_for_receipt(engine, read_scope, queued.request_id, wait)


def report_lines(report) -> list[str]:
    """A forget's report (a preview, or a receipt), one line per kind of thing touched; the same lines
    for both, a receipt's without the names it does not keep."""
    def listed(items) -> str:
        names = [safe_text(item.name) for item in items if item.name]
        shown = "; ".join(names[:8])
        return f"{len(items)}" + (f" ({shown}{'; …' if len(names) > 8 else ''})" if names else "")

    batches = report.provider_batches
    lines = [
        f"memories: {len(report.memory_ids)}" + (f" (not found: {', '.join(report.not_found)})" if report.not_found else "")
        + (f"; edited: {len(report.edited_memory_ids)}" if report.edited_memory_ids else ""),
        f"claims removed: {report.claims_removed}; claims re-derived: {report.claims_rederived}",
        f"sections re-derived: {listed(report.sections_rederived)}",
        f"sections removed: {listed(report.sections_removed)}",
        f"pages removed: {listed(report.pages_removed)}",
        f"pages demoted to a mention: {listed(report.pages_demoted)}",
        f"aliases removed: {listed(report.aliases_removed)}",
        f"mention sightings removed: {report.sightings_removed}; mentions removed: {listed(report.mentions_removed)}; "
        f"mentions recounted: {listed(report.mentions_recounted)}",
        f"summaries recomputed: {listed(report.summaries_recomputed)}",
        f"links removed: {report.links_removed}; link contexts recomputed: {report.link_contexts_recomputed}",
        f"rollups and hub lists re-derived: {listed(report.rollups_affected)}",
        f"merge decisions removed: {report.decisions_removed}; merge records changed: {report.merge_records_changed}",
        f"staged rows removed: {report.staged_rows_removed}; batch requests discarded: "
        f"{report.batch_requests_discarded}",
        f"Message Batches deleted at the provider: {len(batches)}"
        + (f" ({'; '.join(f'{b.batch_id} {b.status}' for b in batches[:8])})" if batches else ""),
    ]
    if report.outcome is not None:
        o = report.outcome
        lines.append(f"the writer: {o.lines_written} lines written; then removed: {o.sections_emptied} sections, "
                     f"{o.pages_emptied} pages, {o.marks_removed} supersession marks")
    if report.cost_usd is not None:
        lines.append(f"cost: ${report.cost_usd:.4f}")
    return lines


@memory_app.command("forget")
@handled
def memory_forget(
    memories: Annotated[list[str], typer.Argument(metavar="MEMORY_ID...", help="The memories' ids (UUIDs).")],
    tenant: TenantOption,
    owner: OwnerOption,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list what forgetting them would touch.")] = False,
    wait: Annotated[bool, typer.Option("--wait", help="Wait for the receipt (the pass run to its end, the "
                                                      "provider's copies deleted) and print it.")] = False,
    timeout: Annotated[float, typer.Option("--timeout", min=1, help="With --wait: give up after this many "
                                                                    "seconds (the forget stays queued).")] = 600.0,
    json_output: JsonOption = False,
) -> None:
    """Forget memories: their text, the claims resting only on them, what is left empty; re-derive the rest."""
    from app.forget import ReceiptTimeout
    from app.reads import BadInput, NotFound

    if dry_run and wait:
        raise CliError("--dry-run changes nothing, so there is no receipt to --wait for", EXIT_USAGE)
    settings = get_settings()
    tenant, owner = scope(tenant, owner)
    try:
        result = run(_forget(settings, tenant, owner, list(memories), dry_run, timeout if wait else None))
    except BadInput as error:
        raise CliError(str(error), EXIT_USAGE) from None
    except (NotFound, ReceiptTimeout) as error:
        raise CliError(str(error)) from None
    if json_output:
        print_json(result)
    elif dry_run:
        out.print(f"forgetting would touch, in {tenant}/{owner}:", soft_wrap=True)
        for line in report_lines(result):
            out.print(f"  {line}", soft_wrap=True, markup=False)
    elif wait:
        out.print(f"forgotten, in {tenant}/{owner} (receipt of request {result.request_id}):", soft_wrap=True)
        for line in report_lines(result.report):
            out.print(f"  {line}", soft_wrap=True, markup=False)
    else:
        note = f" (not found: {', '.join(result.not_found)})" if result.not_found else ""
        out.print(f"forget queued for {len(result.memory_ids)} memories{note}: the compile of {tenant}/{owner} "
                  f"serves it between batches; its receipt shows in `wiki jobs` (`--wait` waits for it)",
                  soft_wrap=True)
        print_workflow_location(settings, result.compile_workflow_id)
