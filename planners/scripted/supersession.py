"""The scripted planner's supersession rule: a line stating a new value of a single-valued attribute
(or ending one) marks the line it replaces, in the direction of when their memories happened.

For every section a plan writes, each line the offline rules read (domain/facts.py: where someone
lives or works, a partner, a meeting's time, a status, a phone number, …, or an ending such as "no
longer lives in Denver") is compared with the page's current claims and with the section's other
lines. When the two are rivals, the newer one (by the date its line carries: a memory's own dated
line) replaces the older: `supersedes` on the new line, or `superseded_by` when the shown claim is
the newer (its memory arrived late). Apply checks each mark against the memories' real dates.
Two lines of one holder that share only a verb the rules know to be confused ("joined a pottery
class", "joined a support group") are never marked: they go to `unsure`, both stay current, and
the lint names the pair.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from domain.claim_text import body_lines, claim_key
from domain.context import CandidatePage
from domain.facts import confusable, rivals
from domain.plan import LineSources, NewSection, Plan, SectionUpdate

_DATE_LEAD = re.compile(r"^\s*(?:[-*+]\s*)?(\d{4}-\d{2}-\d{2})\s*:")


def _day(line: str, fallback: str = "") -> str:
    match = _DATE_LEAD.match(line)
    return match.group(1) if match else fallback


def mark_supersessions(sections: Sequence[NewSection | SectionUpdate], page_names: Sequence[str],
                       known_facts: Sequence[tuple[str, str]] = ()) -> None:
    """Mark each section's fact lines (in place): against the page's current claims (text, day it
    began) and each other, the newer replacing the older."""
    for section in sections:
        body = section.proposed_body_md if isinstance(section, SectionUpdate) else section.body_md
        lines = body_lines(body)
        own = {claim_key(entry.text): entry for entry in section.line_sources}

        def entry_of(line: str, section: NewSection | SectionUpdate = section,
                     own: dict[str, LineSources] = own) -> LineSources:
            entry = own.get(claim_key(line))
            if entry is None:
                entry = own[claim_key(line)] = LineSources(text=line, refs=list(section.source_refs))
                section.line_sources.append(entry)
            return entry

        known = dict(known_facts)
        for line in lines:
            day = _day(line)
            others = [*((fact, since) for fact, since in known_facts if fact != line),
                      *((other, _day(other)) for other in lines if other != line)]
            for other, since in others:
                older = bool(day and since and day < since)
                if rivals(line, other, page_names):
                    if not older:
                        entry = entry_of(line)
                        entry.supersedes = list(dict.fromkeys([*entry.supersedes, other]))
                    elif other in known:  # the page's claim is the newer: it replaces this line
                        entry = entry_of(line)
                        entry.superseded_by = list(dict.fromkeys([*entry.superseded_by, other]))
                elif not older and confusable(line, other, page_names):
                    entry = entry_of(line)
                    entry.unsure = list(dict.fromkeys([*entry.unsure, other]))


def mark_plan(plan: Plan, pages: Sequence[CandidatePage]) -> Plan:
    """The plan with its fact lines marked: updates against their page's current claims and each
    other, a new or promoted page's lines against each other."""
    by_id = {str(page.id): page for page in pages}

    def facts_of(page: CandidatePage | None) -> list[tuple[str, str]]:
        if page is None:
            return []
        return [(fact.text, fact.since.date().isoformat() if fact.since else _day(fact.text)) for fact in page.facts]

    for update in plan.pageUpdates:
        page = by_id.get(update.pageId)
        names = [page.title, *page.aliases] if page is not None else []
        mark_supersessions(update.sections, [*names, *update.aliases], facts_of(page))
    for new_page in plan.newPages:
        mark_supersessions(new_page.sections, [new_page.title, *new_page.aliases])
    for promotion in plan.promotions:
        page = next((p for p in pages if (p.type, p.slug) == (promotion.type, promotion.slug)), None)
        mark_supersessions(promotion.sections, [promotion.title, *(page.aliases if page else [])], facts_of(page))
    return plan
