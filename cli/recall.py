"""`wiki recall "question"` and `wiki context`: what MCP's and HTTP's recall and context return,
for an operator, with the same budget rules (every text returned counts, four characters a token)."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.common import EXIT_USAGE, CliError, JsonOption, OwnerOption, TenantOption, handled, run, scope
from cli.output import out, print_json
from domain.claims import claim_mark, status_legend
from runtime.settings import get_settings

MaxTokensOption = Annotated[int | None, typer.Option(
    "--max-tokens", help="Budget for all text returned, at 4 characters a token (20-8000; default 500).")]
MinConfidenceOption = Annotated[float | None, typer.Option(
    "--min-confidence", help="Only claims at least this sure (0-1).")]


def _dates(first, last) -> str:
    if first is None:
        return ""
    return f"{first:%Y-%m-%d}" if last is None or last.date() == first.date() else f"{first:%Y-%m-%d}..{last:%Y-%m-%d}"


def _claim_lines(rank: int, answer) -> list[str]:
    where = f"{answer.page.type}/{answer.page.slug} · {answer.heading}"
    sure = f"{claim_mark(answer.status, answer.confidence)} · {answer.source_count} mem"
    signals = ", ".join(f"{name} {position}" for name, position in answer.signals.items())
    facts = " · ".join(part for part in (where, sure, _dates(answer.first_seen, answer.last_seen), signals) if part)
    lines = [f"{rank:>2}. {answer.text}", f"    {facts}"]
    lines += [f"    cited {m.occurred_at:%Y-%m-%d}: {m.text}" for m in answer.memories]
    return lines


async def _ask(question: str, tenant: str, owner: str, max_tokens, as_of, min_confidence, without):
    from app import recall as recall_use
    from app.reads import ReadScope
    from cli.common import database

    async with database() as engine:
        return await recall_use.recall(engine, ReadScope.of(tenant, owner), question, max_tokens, as_of,
                                       min_confidence, without, embedder=recall_use.embedder_for(get_settings()))


@handled
def recall_command(
    question: Annotated[str, typer.Argument(help="The question, in plain words.")],
    tenant: TenantOption,
    owner: OwnerOption,
    max_tokens: MaxTokensOption = None,
    as_of: Annotated[str | None, typer.Option("--as-of", help="Only what was known by this ISO-8601 time.")] = None,
    min_confidence: MinConfidenceOption = None,
    without: Annotated[str | None, typer.Option(
        "--without", help="Retrievers to switch off, comma-separated: lexical, evidence, names, graph, time, "
                          "semantic.")] = None,
    json_output: JsonOption = False,
) -> None:
    """The claims that best answer a question, best first, within a token budget; says what did not fit."""
    get_settings()
    tenant, owner = scope(tenant, owner)
    from app.reads import BadInput

    try:
        result = run(_ask(question, tenant, owner, max_tokens, as_of, min_confidence, without))
    except BadInput as error:
        raise CliError(str(error), EXIT_USAGE) from None
    if json_output:
        print_json(result)
        return
    out.print(f"Recall {result.question!r} in {tenant}/{owner}: {result.tokens_used} of {result.max_tokens} tokens, "
              f"{result.took_ms:.0f} ms")
    for page in result.pages:
        out.print(f" •  {page.type}/{page.slug}: {page.summary}")
    for rank, answer in enumerate(result.results, 1):
        if answer.kind == "claim":
            for line in _claim_lines(rank, answer):
                out.print(line)
        else:
            out.print(f"{rank:>2}. {answer.text}\n    uncompiled memory {answer.id} · {answer.occurred_at:%Y-%m-%d}")
    if not result.results:
        out.print("nothing in this wiki answers it")
    left = result.left_out
    if left.answers:
        out.print(f"left out: {left.answers} more answer{'s' if left.answers != 1 else ''}; the best "
                  f"({left.best_tokens} tokens): {left.best}")
    _legend(result.statuses)


def _legend(statuses: dict[str, str]) -> None:
    for line in status_legend(statuses):
        out.print(line)


@handled
def context_command(
    tenant: TenantOption,
    owner: OwnerOption,
    max_tokens: MaxTokensOption = None,
    min_confidence: MinConfidenceOption = None,
    json_output: JsonOption = False,
) -> None:
    """The scope's most important current claims, for an agent's system prompt, within a token budget."""
    get_settings()
    tenant, owner = scope(tenant, owner)
    from app.context import context
    from app.reads import BadInput, ReadScope
    from cli.common import database

    async def standing():
        async with database() as engine:
            return await context(engine, ReadScope.of(tenant, owner), max_tokens, min_confidence)

    try:
        result = run(standing())
    except BadInput as error:
        raise CliError(str(error), EXIT_USAGE) from None
    if json_output:
        print_json(result)
        return
    out.print(f"Context of {tenant}/{owner}: {result.tokens_used} of {result.max_tokens} tokens")
    for rank, answer in enumerate(result.results, 1):
        for line in _claim_lines(rank, answer):
            out.print(line)
    if not result.results:
        out.print("no claim yet: compile some memories first")
    if result.left_out.answers:
        out.print(f"left out: {result.left_out.answers} more claims")
    _legend(result.statuses)
