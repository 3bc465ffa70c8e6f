"""The simulated aggregation planner and merge judge, read from their prompts.

Aggregation: the prompt shows recently changed pages (handle, type, slug, title, summary, sections
with their rollup status) and derived parent candidates (a parent title, its slug, the section a
rollup would go in, the records behind it). Following the system prompt's evidence rules, a page
belongs under a parent only when its own title or summary names the parent; a parent with fewer
than three such pages is left alone; an existing hub (a topic page with the parent's slug) gets its
rollup section refreshed unless that section was promoted; a missing hub is created only with at
least five member pages. Each hub links to its members.

Merge judge: each pair shows two pages' names, types, summaries and evidence lines. Two pages are one
thing when they have the same type and either one name is the other plus a qualifier (", Portugal",
"(Austin)") that the other page's evidence or summary supports, or the names are one spelling apart
and their evidence shares a place. A name inside another with words of its own ("The Driskill Bar"
beside "The Driskill") is a place inside it; anything undecided is kept apart, as the prompt asks.
"""

from __future__ import annotations

import re
from typing import Any

from rapidfuzz.distance import Levenshtein

from claude_sim.reading import Confused, fields, fold, items, parts

AGGREGATION_KEYS = ("parentSectionUpdates", "sectionPromotions", "newPages", "pageLinks")
MIN_MEMBERS, NEW_HUB_MEMBERS = 3, 5


def _contains(text: str, name: str) -> bool:
    return bool(name) and f" {fold(name)} " in f" {fold(text)} "


def aggregation_plan(system: str, user: str, schema: dict[str, Any] | None) -> dict[str, Any]:
    properties = (schema or {}).get("properties") or {}
    if any(key not in properties or key not in system for key in AGGREGATION_KEYS):
        raise Confused("the aggregation reply tool or output shape lacks the keys the prompt names")
    shown = parts(user)
    pages_part = next((body for name, body in shown.items() if name.startswith("Recently changed pages")), None)
    candidates_part = next((body for name, body in shown.items() if name.startswith("Derived parent candidates")),
                           None)
    if pages_part is None or candidates_part is None:
        raise Confused("the aggregation request lacks its pages or its parent candidates")
    pages = []
    for head, rest in items(pages_part):
        f = fields(head)
        summary = next((fields(line).get("summary") for line in rest if line.startswith("summary=")), None)
        sections = {fields(line[2:]).get("section"): fields(line[2:]) for line in rest if line.startswith("· section=")}
        pages.append({**f, "summary": summary or "", "sections": sections})
    out: dict[str, Any] = {key: [] for key in AGGREGATION_KEYS}
    for head, _ in items(candidates_part):
        candidate = fields(head)
        parent, slug, section = str(candidate.get("parent", "")), str(candidate.get("slug", "")), \
            str(candidate.get("section", ""))
        if not parent or not slug or not section:
            continue
        members = [p for p in pages if p.get("slug") != slug and p.get("type") != "topic"
                   and (_contains(str(p.get("title", "")), parent) or _contains(p["summary"], parent))]
        if len(members) < MIN_MEMBERS:
            continue
        ends = [f"{p['type']}/{p['slug']}" for p in members]
        records = [r for r in candidate.get("records") or [] if isinstance(r, str)]
        hub = next((p for p in pages if p.get("slug") == slug and p.get("type") == "topic"), None)
        heading = section.replace("_", " ").replace("-", " ").capitalize()
        if hub is not None:
            if (hub["sections"].get(section) or {}).get("status") == "promoted":
                continue
            out["parentSectionUpdates"].append({
                "pageId": hub["id"], "sectionSlug": section, "heading": heading, "proposed_body_md": "",
                "rationale": f"{len(members)} pages name {parent}.",
                "linked_page_slugs": [{"type": p["type"], "slug": p["slug"]} for p in members],
                "source_refs": records, "observed_tags": list(candidate.get("tags") or [])})
            out["pageLinks"].append([f"topic/{slug}", ends, f"Part of {parent}."])
        elif len(members) >= NEW_HUB_MEMBERS:
            out["newPages"].append({
                "type": "topic", "slug": slug, "title": parent, "summary": f"Topic: {parent}.", "aliases": [],
                "source_refs": records, "sections": [{"slug": section, "heading": heading, "source_refs": records,
                                                      "body_md": "\n".join(f"- {p['title']}" for p in members)}]})
            out["pageLinks"].append([f"topic/{slug}", ends, f"Part of {parent}."])
    return out


# ------------------------------------------------------------------ the merge judge

_SIDE = re.compile(r'^(proposed page|existing page): "(.*)" \(([a-z]+)\)$')


def _side(lines: list[str], label: str) -> dict[str, Any]:
    start = next((n for n, line in enumerate(lines) if line.startswith(f"{label}: ")), None)
    if start is None or (match := _SIDE.match(lines[start])) is None:
        raise Confused(f"a pair without its {label}")
    side: dict[str, Any] = {"title": match.group(2), "type": match.group(3), "evidence": []}
    for line in lines[start + 1:]:
        if not line.startswith("  "):
            break
        key, _, value = line.strip().partition(": ")
        if key == "evidence":
            side["evidence"].append(value)
        elif key in ("summary", "also written"):
            side[key] = value
    return side


def _qualifier(longer: str, shorter: str) -> str | None:
    """What `longer` adds to `shorter` as a qualifier (", Portugal", " (Austin)"), if that is all."""
    for pattern in (rf"^{re.escape(shorter)},\s*(.+)$", rf"^{re.escape(shorter)}\s*\((.+)\)$"):
        match = re.match(pattern, longer, re.IGNORECASE)
        if match:
            return match.group(1).strip()
    return None


def _said(side: dict[str, Any]) -> str:
    return " ".join([side.get("summary", ""), *side["evidence"]])


def decide(proposed: dict[str, Any], existing: dict[str, Any]) -> tuple[bool, str]:
    if proposed["type"] != existing["type"]:
        return False, "different page types"
    for longer, shorter in ((proposed, existing), (existing, proposed)):
        qualifier = _qualifier(longer["title"], shorter["title"])
        if qualifier is not None:
            if _contains(_said(shorter), qualifier):
                return True, f"the {shorter['title']} page is in {qualifier}"
            return False, f"nothing shows the {shorter['title']} page is in {qualifier}"
    a, b = fold(proposed["title"]), fold(existing["title"])
    if set(a.split()) < set(b.split()) or set(b.split()) < set(a.split()):
        return False, "one name inside the other: a part, not the same thing"
    if Levenshtein.distance(a, b) <= max(1, min(len(a), len(b)) // 10):
        shared = set(fold(_said(proposed)).split()) & set(fold(_said(existing)).split())
        if any(len(word) > 3 and not word.isdigit() for word in shared):
            return True, "one spelling apart, the same place in the evidence"
    return False, "the evidence does not decide it"


def judged_pairs(system: str, user: str) -> dict[str, Any]:
    if "same" not in system or "decisions" not in user:
        raise Confused("the merge judge's request states no decisions contract")
    blocks = re.split(r"^### Pair (p\d+)$", user, flags=re.MULTILINE)[1:]
    decisions = []
    for pair, body in zip(blocks[::2], blocks[1::2], strict=True):
        lines = body.strip("\n").splitlines()
        same, reason = decide(_side(lines, "proposed page"), _side(lines, "existing page"))
        decisions.append({"pair": pair, "same": same, "reason": reason})
    return {"decisions": decisions}
