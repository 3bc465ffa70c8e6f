"""The scripted planner's supersession rule: a line stating a new value of a single-valued fact
marks the lines it replaces.

For every section a plan writes, each line that states a fact (domain/facts.py: where someone lives
or works, a role, a partner, a meeting's time, a status, a phone number) is compared with the facts
the candidate page shows and with the section's other lines; a line stating another value of the
same attribute of the same holder replaces it (`LineSources.supersedes`). The mark says only that the
two lines are rival values: which one holds is decided from when their memories happened when the
plan is applied, so a line from an older memory compiled late is marked the same way and stays
history.
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.claim_text import body_lines, claim_key
from domain.context import CandidatePage
from domain.facts import fact_of, replaces
from domain.plan import LineSources, NewSection, Plan, SectionUpdate


def mark_supersessions(sections: Sequence[NewSection | SectionUpdate], page_names: Sequence[str],
                       known_facts: Sequence[str] = ()) -> None:
    """Add to each section's `line_sources` the lines its fact lines replace (in place)."""
    for section in sections:
        body = section.proposed_body_md if isinstance(section, SectionUpdate) else section.body_md
        lines = body_lines(body)
        stating = [line for line in lines if fact_of(line) is not None]
        if not stating:
            continue
        own = {claim_key(entry.text): entry for entry in section.line_sources}
        for line in stating:
            replaced = [fact for fact in known_facts if replaces(line, fact, page_names)]
            replaced += [other for other in stating if other != line and replaces(line, other, page_names)]
            if not replaced:
                continue
            entry = own.get(claim_key(line))
            if entry is None:
                entry = LineSources(text=line, refs=list(section.source_refs))
                section.line_sources.append(entry)
                own[claim_key(line)] = entry
            entry.supersedes = list(dict.fromkeys([*entry.supersedes, *replaced]))


def mark_plan(plan: Plan, pages: Sequence[CandidatePage]) -> Plan:
    """The plan with its fact lines marked: updates against their page's shown facts and each other,
    a new or promoted page's lines against each other."""
    by_id = {str(page.id): page for page in pages}
    for update in plan.pageUpdates:
        page = by_id.get(update.pageId)
        names = [page.title, *page.aliases] if page is not None else []
        mark_supersessions(update.sections, [*names, *update.aliases],
                           [fact.text for fact in page.facts] if page is not None else [])
    for new_page in plan.newPages:
        mark_supersessions(new_page.sections, [new_page.title, *new_page.aliases])
    for promotion in plan.promotions:
        page = next((p for p in pages if (p.type, p.slug) == (promotion.type, promotion.slug)), None)
        mark_supersessions(promotion.sections, [promotion.title, *(page.aliases if page else [])],
                           [fact.text for fact in page.facts] if page is not None else [])
    return plan
