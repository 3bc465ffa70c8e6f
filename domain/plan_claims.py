"""A plan's proposed lines as claims: each line with its own citations, and what the gate found."""

from __future__ import annotations

from collections.abc import Iterable

from domain.claim_text import body_lines, claim_key
from domain.markup import safe_markdown
from domain.plan import LineSources, Plan
from domain.resolved_plan import ProposedClaim


def proposed_sections(plan: Plan) -> Iterable[tuple[str, list[str], list[LineSources]]]:
    """Every section proposal of a leaf plan: (body, section citations, per-line citations)."""
    for update in plan.pageUpdates:
        for section in update.sections:
            yield section.proposed_body_md, section.source_refs, section.line_sources
    for page in [*plan.newPages, *(p.newPage for p in plan.sectionPromotions)]:
        for new_section in page.sections:
            yield new_section.body_md, new_section.source_refs or page.source_refs, new_section.line_sources
    for promotion in plan.promotions:
        for new_section in promotion.sections:
            yield new_section.body_md, new_section.source_refs, new_section.line_sources


def lines_with_refs(body: str, section_refs: list[str], line_sources: list[LineSources]) -> list[LineSources]:
    """Each line of a proposed body with its own citations: the ones the plan gave the line, else the
    section's (a plan in the long form cites per section only)."""
    own = {claim_key(line.text): line for line in line_sources}
    out = []
    for text in body_lines(body):
        line = own.get(claim_key(text))
        if line is None:
            out.append(LineSources(text=text, refs=list(section_refs)))
        else:
            out.append(line.model_copy(update={"text": text}))
    return out


def proposed_claims(plan: Plan) -> dict[str, ProposedClaim]:
    """The plan's lines by claim key, each with the union of the citations the plan gave it and of the
    memories the judge said support it."""
    out: dict[str, ProposedClaim] = {}
    for body, refs, line_sources in proposed_sections(plan):
        for line in lines_with_refs(body, refs, line_sources):
            # Apply stores the line made safe (a tag neutralised, a link to elsewhere reduced to its
            # text), which can change its key: the line is found under either, with its own citations.
            replaced = [key for text in line.supersedes if (key := claim_key(text))]
            replacing = [key for text in line.superseded_by if (key := claim_key(text))]
            unsure = [key for text in line.unsure if (key := claim_key(text))]
            reasons = {key: why for text, why in line.reasons.items() if (key := claim_key(text)) and why}
            for key in dict.fromkeys([claim_key(line.text), claim_key(safe_markdown(line.text))]):
                claim = out.setdefault(key, ProposedClaim(status=line.status, kind=line.kind))
                claim.refs = list(dict.fromkeys([*claim.refs, *line.refs]))
                claim.supersedes = list(dict.fromkeys([*claim.supersedes, *replaced]))
                claim.superseded_by = list(dict.fromkeys([*claim.superseded_by, *replacing]))
                claim.unsure = list(dict.fromkeys([*claim.unsure, *unsure]))
                claim.reasons = {**claim.reasons, **reasons}
                claim.judged_by = list(dict.fromkeys([*claim.judged_by, *line.judged_by]))
                claim.judged_together = list(dict.fromkeys([*claim.judged_together, *line.judged_together]))
                if line.kind == "derived":
                    claim.kind = "derived"
    return out
