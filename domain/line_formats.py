"""The lines the compiler writes itself, each format defined once: written here, read back here.

The planners write these lines (planners/derived_lines.py, planners/section_fold.py,
planners/scripted/condense.py, the scripted leaf plan, the compact contract's `@m4` quote, the
aggregation pass's page lists in domain/render.py) and the claim rules read them back (which lines
are derived, which memories a dated line quotes, which figures a recount must find). Both sides
import the functions below, so a format changed here changes everywhere it is written and read.

A memory's own line, dated by the day it happened:  "- 2026-03-01: Lunch at Uchi."
   led by the name it is about (a place, a page):     "- 2026-03-01: **Uchi**: Lunch with Sam."
Derived lines (figures computed in code from the section's memories or pages):
   a count of memories                                "- 3 new memories."
   how many memories and the days they span           "- 3 memories, 2026-03-01 to 2026-03-09."
   visits                                             "- Visited 3 times, 2026-03-01 to 2026-03-09."
                                                      "- Visited once, on 2026-03-01."
                                                      "- By month: 2026-03 (2), 2026-04 (1)."
                                                      "- Latest: 2026-03-09, 2026-03-04 (2)."
                                                      "- Visited on 2026-03-01."
   a fold of the oldest dated lines                   "- Earlier: 14 notes, 2026-01-03 to 2026-02-20."
   the names its memories mention most                "- Often together with: **Lena** (3), **Sam** (2)."
                                                      "- Most mentioned: **Uchi** (4)."
   a sentence several memories say alike              "- Closed on Sundays. (2 times, 2026-03-01 to 2026-03-09)"
   the one address its memories give                  "Address: 801 S Lamar Blvd, Austin, TX."
   a hub's count of pages and its list of pages       "- Restaurants: 4 pages."
                                                      "- [**Uchi**](/wiki/entity/uchi) — Sushi in Austin."
                                                      "See: [Uchi](/wiki/entity/uchi)"
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

DAY = r"\d{4}-\d{2}-\d{2}"
MONTH = r"\d{4}-\d{2}"


def plural(count: int, one: str, many: str) -> str:
    return one if count == 1 else many


def span(first: str, last: str) -> str:
    """The days a figure covers: "on 2026-03-01", or "2026-03-01 to 2026-03-09"."""
    return f"on {first}" if first == last else f"{first} to {last}"


# ------------------------------------------------------------------ a memory's own dated line

_DATED = re.compile(rf"^\s*[-*]\s*({DAY})\s*:\s*(.+)$")
# Apply links a name in bold to its page ("**Uchi**" becomes "[**Uchi**](/wiki/entity/uchi)"): the
# formats are read with those links undone.
_LINKED_BOLD = re.compile(r"\[(\*\*[^*\]]+\*\*)\]\(/wiki/[^)\s]*\)")


def unlinked(line: str) -> str:
    """The line with the page links apply adds to bold names taken off again."""
    return _LINKED_BOLD.sub(r"\1", line)
_LEAD = re.compile(r"^\*\*([^*]+)\*\*:\s+(.+)$")


def dated_line(day: str, text: str, lead: str = "") -> str:
    """A memory's line: its day, then (led by the name it is about) its text."""
    return f"- {day}: **{lead}**: {text}" if lead else f"- {day}: {text}"


def led(lead: str, text: str) -> str:
    """A line's text led by the name it is about (a city page's line names its place)."""
    return f"**{lead}**: {text}"


@dataclass(frozen=True)
class Dated:
    day: str
    lead: str  # "" when the line names no lead
    text: str  # after the day and the lead, as written


def parse_dated(line: str) -> Dated | None:
    """The day, lead and text of a dated line `- YYYY-MM-DD: …`, or None for any other line."""
    match = _DATED.match(unlinked(line))
    if match is None:
        return None
    day, rest = match.groups()
    lead = _LEAD.match(rest.strip())
    if lead is not None:
        return Dated(day=day, lead=lead.group(1), text=lead.group(2))
    return Dated(day=day, lead="", text=rest.strip())


# ------------------------------------------------------------------ derived lines: memories counted


def count_line(count: int) -> str:
    return f"- {count} new {plural(count, 'memory', 'memories')}."


def span_line(count: int, first: str, last: str) -> str:
    return f"- {count} {plural(count, 'memory', 'memories')}, {span(first, last)}."


def visited_on_line(day: str) -> str:
    return f"- Visited on {day}."


def visits_line(count: int, first: str, last: str) -> str:
    if count == 1:
        return f"- Visited once, on {first}."
    return f"- Visited {count} times, {f'all on {first}' if first == last else f'{first} to {last}'}."


BY_MONTH = "By month"
LATEST = "Latest"


def by_month_line(months: Iterable[tuple[str, int]]) -> str:
    return f"- {BY_MONTH}: " + ", ".join(f"{month} ({count})" for month, count in months) + "."


def latest_line(days: Iterable[tuple[str, int]]) -> str:
    return f"- {LATEST}: " + ", ".join(day if count == 1 else f"{day} ({count})" for day, count in days) + "."


EARLIER = "Earlier"


def fold_line(count: int, first: str, last: str, visits: bool) -> str:
    noun = ("visit" if visits else "note") + plural(count, "", "s")
    return f"- {EARLIER}: {count} {noun}, {span(first, last)}."


@dataclass(frozen=True)
class Fold:
    count: int
    first: str
    last: str
    visits: bool


_FOLD = re.compile(rf"^- {EARLIER}: (\d+) (notes?|visits?), (?:on ({DAY})|({DAY}) to ({DAY}))\.$")


def parse_fold(line: str) -> Fold | None:
    match = _FOLD.match(line.strip())
    if match is None:
        return None
    count, noun, on, first, last = match.groups()
    return Fold(int(count), on or first, on or last, noun.startswith("visit"))


_VISITED_ON = re.compile(rf"^[-*] Visited on ({DAY})\.$")


def parse_visited_on(line: str) -> str | None:
    """The day of a "- Visited on D." line, or None."""
    match = _VISITED_ON.match(line.strip())
    return match.group(1) if match else None


OFTEN_TOGETHER_LABEL = "Often together with"
MOST_MENTIONED_LABEL = "Most mentioned"


def mentions_line(label: str, ranked: Iterable[tuple[str, int]]) -> str:
    """The names most of the memories mention, each with how many do: `label` is OFTEN_TOGETHER_LABEL or
    MOST_MENTIONED_LABEL."""
    return f"- {label}: " + ", ".join(f"**{name}** ({count})" for name, count in ranked) + "."


def recurring_line(text: str, times: int, first: str, last: str) -> str:
    """A sentence several memories say alike, with how many and when."""
    return f"- {text} ({times} times, {span(first, last)})"


ADDRESS = "Address"


def address_line(address: str) -> str:
    text = f"{ADDRESS}: {address.strip()}"
    return text if text[-1] in ".!?…" else text + "."


_ADDRESS_IN_TEXT = re.compile(rf"\b{ADDRESS}: ([^\n]+?)\.?(?:\n|$)")


def addresses_in(text: str) -> list[str]:
    """The addresses the address lines within a text state ("Address: 12 Oak St, Denver, CO.")."""
    return [match.group(1) for match in _ADDRESS_IN_TEXT.finditer(text)]


def page_count_line(heading: str, count: int) -> str:
    """A hub's count of the pages of one group."""
    return f"- {heading}: {count} {plural(count, 'page', 'pages')}."


def rollup_line(title: str, href: str, sentence: str) -> str:
    """One page of a rollup list: its linked title, and the first sentence of its summary."""
    return f"- [**{title}**]({href})" + (f" — {sentence}" if sentence else "")


def see_line(title: str, href: str) -> str:
    return f"See: [{title}]({href})"


# The labels a derived line starts with: structure, never a name. The figures after them are still
# checked, by recounting; the words after "Trip:" and the other summary labels are checked as names.
DERIVED_LABELS = ("latest", "by month", "visited", "most mentioned", "often together with", "earlier", "trip")


# ------------------------------------------------------------------ which derived shape a line has

_COUNT = re.compile(r"^- (\d+) new memor(?:y|ies)\.$")
_SPAN = re.compile(rf"^- (\d+) memor(?:y|ies), (?:on ({DAY})|({DAY}) to ({DAY}))\.$")
_VISITS = re.compile(rf"^- Visited (?:once, on ({DAY})|(\d+) times, (?:all on ({DAY})|({DAY}) to ({DAY})))\.$")
_BY_MONTH = re.compile(rf"^- {BY_MONTH}: ({MONTH} \(\d+\)(?:, {MONTH} \(\d+\))*)\.$")
_LATEST = re.compile(rf"^- {LATEST}: ({DAY}(?: \(\d+\))?(?:, {DAY}(?: \(\d+\))?)*)\.$")
_MENTIONS = re.compile(rf"^- (?:{OFTEN_TOGETHER_LABEL}|{MOST_MENTIONED_LABEL}): (\*\*[^*]+\*\* \(\d+\)(?:, \*\*[^*]+\*\* \(\d+\))*)\.$")
_RECURRING = re.compile(rf"^- (.+) \((\d+) times, (?:on ({DAY})|({DAY}) to ({DAY}))\)$")
_ADDRESS = re.compile(rf"^{ADDRESS}: (.+)$")
_PAGE_COUNT = re.compile(r"^- [^:\[\]*]{1,80}: \d+ pages?\.$")
_ROLLUP = re.compile(r"^- \[\*\*[^*\]]+\*\*\]\(/wiki/[^)\s]+\)(?: — .*)?$")
_SEE = re.compile(r"^See: \[[^\]]+\]\(/wiki/[^)\s]+\)$")


@dataclass(frozen=True)
class Shape:
    """A derived line read back: its kind, and what a recount must find in its memories.
    `counts`: figures that count memories; `days`: days its memories must have happened on;
    `sentence`: for a recurring line, the sentence its memories say (counted); `address`: the
    metadata value an address line states; `pages`: True when it counts or lists pages, which no
    memory can recount."""

    kind: str
    counts: tuple[int, ...] = ()
    days: tuple[str, ...] = ()
    sentence: str = ""
    address: str = ""
    pages: bool = False
    at_most: bool = False  # the count is bounded by the recount, not equal (a fold of some lines)


def _days(*groups: str | None) -> tuple[str, ...]:
    return tuple(g for g in groups if g)


def shape_of(line: str) -> Shape | None:
    """The derived shape of a line, or None when it is not one of the compiler's derived lines."""
    written = line.strip()
    text = unlinked(written)
    if (m := _COUNT.match(text)) is not None:
        return Shape("count", counts=(int(m.group(1)),))
    if (m := _SPAN.match(text)) is not None:
        return Shape("span", counts=(int(m.group(1)),), days=_days(m.group(2), m.group(3), m.group(4)))
    if (m := _VISITS.match(text)) is not None:
        count = 1 if m.group(1) else int(m.group(2))
        return Shape("visits", counts=(count,), days=_days(m.group(1), m.group(3), m.group(4), m.group(5)))
    if (day := parse_visited_on(text)) is not None:
        return Shape("visited", days=(day,))
    if (m := _BY_MONTH.match(text)) is not None:
        pairs = re.findall(rf"({MONTH}) \((\d+)\)", m.group(1))
        return Shape("by_month", counts=tuple(int(n) for _, n in pairs), days=tuple(month for month, _ in pairs))
    if (m := _LATEST.match(text)) is not None:
        pairs = re.findall(rf"({DAY})(?: \((\d+)\))?", m.group(1))
        return Shape("latest", counts=tuple(int(n) for _, n in pairs if n), days=tuple(day for day, _ in pairs))
    if (fold := parse_fold(text)) is not None:
        return Shape("fold", counts=(fold.count,), days=(fold.first, fold.last), at_most=True)
    if (m := _MENTIONS.match(text)) is not None:
        return Shape("mentions", counts=tuple(int(n) for n in re.findall(r"\((\d+)\)", m.group(1))))
    if (m := _RECURRING.match(text)) is not None:
        return Shape("recurring", counts=(int(m.group(2)),), days=_days(m.group(3), m.group(4), m.group(5)),
                     sentence=m.group(1))
    if (m := _ADDRESS.match(text)) is not None:
        return Shape("address", address=m.group(1).rstrip("."))
    if _PAGE_COUNT.match(text) or _ROLLUP.match(written) or _SEE.match(written):
        return Shape("pages", pages=True)
    return None


_TRAILING_NOTE = re.compile(r"\s*\([^()]*\)\s*\.?\s*$")
_BOLD_OR_LINK = re.compile(r"\*\*([^*]+)\*\*|\[([^\]]+)\]\(")


def without_note(text: str) -> str:
    """The text without a trailing parenthetical note (a recurring line's "(2 times, …)")."""
    return _TRAILING_NOTE.sub("", text)


def emphasised_names(line: str) -> list[str]:
    """The names a line sets in bold or as a link (the compiler writes names so: apply links them)."""
    return [bold or link for bold, link in _BOLD_OR_LINK.findall(line)]


def mentioned_names(line: str) -> list[str]:
    """The names a mentions line counts, in order ("**Lena** (3)" -> "Lena")."""
    return re.findall(r"\*\*([^*]+)\*\* \(\d+\)", unlinked(line))
