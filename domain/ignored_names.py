"""Names an operator told the compiler to ignore (`wiki mention ignore NAME`): never a page.

A plan may still propose a page under such a name (the planner is no longer shown the mention, but a
batch can name it twice): the proposal is held as a mention instead, which apply closes as ignored,
so the name's memories stay cited by whatever other pages they inform and the name never becomes a
page of its own. A link to the dropped proposal goes with it.
"""

from __future__ import annotations

from collections.abc import Set

from domain.aliases import normalize_alias
from domain.plan import NewPage, Plan, UnresolvedMention


def _ignored(names: Set[str], *written: str) -> bool:
    return any(normalize_alias(name) in names for name in written if name)


def _held(page: NewPage) -> list[UnresolvedMention]:
    refs = list(dict.fromkeys([*page.source_refs, *(r for s in page.sections for r in s.source_refs)]))
    return [UnresolvedMention(alias=page.title, suggestedType=page.type, source_ref=ref) for ref in refs]


def without_ignored(plan: Plan, names: Set[str]) -> Plan:
    """The plan with no new page, promotion or section promotion under an ignored name."""
    if not names:
        return plan
    out = plan.model_copy(deep=True)
    dropped: set[tuple[str, str]] = set()
    kept_pages = []
    for page in out.newPages:
        if _ignored(names, page.title, *page.aliases):
            dropped.add((page.type, page.slug))
            out.unresolvedMentions += _held(page)
        else:
            kept_pages.append(page)
    out.newPages = kept_pages
    for promotion in [p for p in out.promotions if _ignored(names, p.title)]:
        dropped.add((promotion.type, promotion.slug))
    out.promotions = [p for p in out.promotions if not _ignored(names, p.title)]
    out.sectionPromotions = [p for p in out.sectionPromotions if not _ignored(names, p.newPage.title)]
    out.pageLinks = [link for link in out.pageLinks
                     if (link.fromType, link.fromSlug) not in dropped and (link.toType, link.toSlug) not in dropped]
    out._dropped_links = plan.dropped_links  # noqa: SLF001 - the model's malformed links, counted once
    return out
