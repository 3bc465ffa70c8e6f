"""The section writer's own lines, held to the grounding rule of the plan's lines.

A model writer that condenses or rewrites a section answers with a new body. Lines it keeps from
the body it was shown, or copies from the plan's proposal, passed the verification gate already; a
line it writes itself (a fold, a summary) may carry a name, a number or a date, and the writer has
no source for one beyond what it was shown: the section's lines, the proposal and the memories the
task cites. So a written line is kept only when it passes the grounding rule (domain/grounding.py)
with the writer's allowance (`writer_rule`): each of its terms is found there, a figure it states may
be a recount of those lines or a count of lines it folds (a whole number up to the lines it was
shown: which lines a fold took cannot be recomputed, so a small invented figure can pass), the
page's own names always count, and a sentence opening with a rare word (a one-word name) needs it
shown too. Anything else is invented, and the line is dropped before the draft is stored. Which of
the kept lines are quoted, derived or verified is decided at apply (domain/attribution.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from domain.claim_text import body_lines, claim_key
from domain.evidence import Evidence, evidence_of
from domain.grounding import ungrounded, writer_rule


@dataclass(frozen=True)
class WriterRejection:
    text: str
    reason: str


@dataclass(frozen=True)
class CheckedDraft:
    body: str
    rejected: tuple[WriterRejection, ...] = ()


def writer_reason(missing: Sequence[str]) -> str:
    shown = ", ".join(repr(term) for term in missing[:5])
    more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
    return f"written by the section writer, with {shown}{more} in none of the lines and memories it was shown"


def shown_evidence(shown_bodies: Sequence[str | None]) -> list[Evidence]:
    """Each line the writer was shown as evidence of its own (a dated line carries its day)."""
    lines = [line for body in shown_bodies for line in body_lines(body)]
    return [evidence_of(f"line:{n}", line, None, None) for n, line in enumerate(lines)]


def check_written_body(body: str, shown_bodies: Sequence[str | None], memories: Sequence[Evidence],
                       page_names: Sequence[str]) -> CheckedDraft:
    """`body` without the lines the writer added whose terms nothing it was shown holds."""
    shown = {claim_key(line) for text in shown_bodies for line in body_lines(text)}
    evidence = [*shown_evidence(shown_bodies), *memories]
    rule = writer_rule(len(shown))
    kept: list[str] = []
    rejected: list[WriterRejection] = []
    for line in body.splitlines():
        stripped = line.strip()
        if not stripped or claim_key(stripped) in shown:
            kept.append(line)
            continue
        missing = ungrounded(stripped, evidence, page_names, rule)
        if missing:
            rejected.append(WriterRejection(text=stripped, reason=writer_reason(missing)))
        else:
            kept.append(line)
    return CheckedDraft(body="\n".join(kept).strip("\n"), rejected=tuple(rejected))
