"""`wiki recall "question"` and `wiki context`: what MCP's and HTTP's recall and context return,
for an operator, with the same budget rule: everything printed counts, four characters a token
(`--json` prints the body an agent receives)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from cli.common import EXIT_USAGE, CliError, JsonOption, OwnerOption, TenantOption, handled, run, scope
from runtime.settings import get_settings

MaxTokensOption = Annotated[int | None, typer.Option(
    "--max-tokens", help="Budget for everything printed, at 4 characters a token (50-8000; default 500).")]
MinConfidenceOption = Annotated[float | None, typer.Option(
    "--min-confidence", help="Only claims at least this sure (0-1).")]
VerboseOption = Annotated[bool, typer.Option(
    "--verbose", help="With --json: also each answer's section, kind, status, confidence, validity, scores and "
                      "retriever signals (within the budget).")]


async def _ask(question: str, tenant: str, owner: str, max_tokens, as_of, min_confidence, without, verbose, form):
    from app import recall as recall_use
    from app.reads import ReadScope
    from cli.common import database

    async with database() as engine:
        return await recall_use.recall(engine, ReadScope.of(tenant, owner), question, max_tokens, as_of,
                                       min_confidence, without, embedder=recall_use.embedder_for(get_settings()),
                                       verbose=verbose, form=form, reserve=1)


@handled
def recall_command(
    question: Annotated[str, typer.Argument(help="The question, in plain words.")],
    tenant: TenantOption,
    owner: OwnerOption,
    max_tokens: MaxTokensOption = None,
    as_of: Annotated[str | None, typer.Option("--as-of", help="Only what was known by this ISO-8601 time.")] = None,
    min_confidence: MinConfidenceOption = None,
    without: Annotated[str | None, typer.Option(
        "--without", help="Retrievers to switch off, comma-separated: memories, lexical, evidence, names, graph, "
                          "time, semantic.")] = None,
    json_output: JsonOption = False,
    verbose: VerboseOption = False,
) -> None:
    """The answers to a question, best first, within a token budget that bounds all that is printed."""
    get_settings()
    tenant, owner = scope(tenant, owner)
    from app.reads import BadInput

    try:
        result = run(_ask(question, tenant, owner, max_tokens, as_of, min_confidence, without, verbose,
                          "json" if json_output else "text"))
    except BadInput as error:
        raise CliError(str(error), EXIT_USAGE) from None
    print_body(result.body)


@handled
def context_command(
    tenant: TenantOption,
    owner: OwnerOption,
    max_tokens: MaxTokensOption = None,
    min_confidence: MinConfidenceOption = None,
    json_output: JsonOption = False,
    verbose: VerboseOption = False,
) -> None:
    """The scope's most important current claims, for an agent's system prompt, within a token budget."""
    get_settings()
    tenant, owner = scope(tenant, owner)
    from app.context import context
    from app.reads import BadInput, ReadScope
    from cli.common import database

    async def standing():
        async with database() as engine:
            return await context(engine, ReadScope.of(tenant, owner), max_tokens, min_confidence, verbose,
                                 "json" if json_output else "text", reserve=1)

    try:
        result = run(standing())
    except BadInput as error:
        raise CliError(str(error), EXIT_USAGE) from None
    print_body(result.body)


def print_body(body: str) -> None:
    """The body as it was packed, and a newline (the one character it kept for it): all within the budget."""
    sys.stdout.write(body + "\n")
    sys.stdout.flush()
