"""The section writer's own lines, held to the grounding rule of the plan's lines.

A model writer that condenses or rewrites a section answers with a new body. Lines it keeps from
the body it was shown, or copies from the plan's proposal, passed the verification gate already; a
line it writes itself (a fold, a summary) may carry a name, a number or a date, and the writer has
no source for one beyond what it was shown: the section's lines, the proposal and the memories the
task cites. So a written line is kept only when each of its terms is found there (after the
resolver's normalisation, as `unsupported_terms` checks a plan line), a figure it states may be a
recount of those lines (`counts_of`) or a count of lines it folds (a whole number up to the lines it
was shown: which lines a fold took cannot be recomputed, so a small invented figure can pass), and
the page's own names always count; a sentence opening with a rare word (a one-word name,
`domain/opening_names.py`) needs it shown too. Anything else is invented, and the line is dropped before the
draft is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from domain.claims import Evidence, body_lines, claim_key, evidence_of, unsupported_terms
from domain.opening_names import unsupported_openings


@dataclass(frozen=True)
class WriterRejection:
    text: str
    reason: str


@dataclass(frozen=True)
class CheckedDraft:
    body: str
    rejected: tuple[WriterRejection, ...] = ()


def _count_of_lines(term: str, lines: int) -> bool:
    # A fold states how many lines it folds ("Earlier: 6 notes"), a subset the check cannot recompute:
    # a whole number up to the lines shown may be that count. A larger one is not.
    return term.isdigit() and 1 <= int(term) <= lines


def writer_reason(missing: Sequence[str]) -> str:
    shown = ", ".join(repr(term) for term in missing[:5])
    more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
    return f"written by the section writer, with {shown}{more} in none of the lines and memories it was shown"


def shown_evidence(shown_bodies: Sequence[str | None]) -> list[Evidence]:
    """Each line the writer was shown as evidence of its own (a dated line carries its day)."""
    lines = [line for body in shown_bodies for line in body_lines(body)]
    return [evidence_of(f"line:{n}", line, None, None) for n, line in enumerate(lines)]


def check_written_body(body: str, shown_bodies: Sequence[str | None], memories: Sequence[Evidence],
                       page_names: Sequence[str], is_rare: Callable[[str], bool] | None = None) -> CheckedDraft:
    """`body` without the lines the writer added whose terms nothing it was shown holds."""
    shown = {claim_key(line) for text in shown_bodies for line in body_lines(text)}
    evidence = [*shown_evidence(shown_bodies), *memories]
    kept: list[str] = []
    rejected: list[WriterRejection] = []
    for line in body.splitlines():
        stripped = line.strip()
        if not stripped or claim_key(stripped) in shown:
            kept.append(line)
            continue
        missing = [term for term in unsupported_terms(stripped, evidence, page_names)
                   if not _count_of_lines(term, len(shown))]
        if not missing and is_rare is not None:
            missing = unsupported_openings(stripped, evidence, page_names, is_rare)
        if missing:
            rejected.append(WriterRejection(text=stripped, reason=writer_reason(missing)))
        else:
            kept.append(line)
    return CheckedDraft(body="\n".join(kept).strip("\n"), rejected=tuple(rejected))
