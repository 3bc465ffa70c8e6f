"""What forgetting or editing memories does to the lines, aliases and mentions that rest on them.

Pure rules, no I/O. A forget removes memories; an edit keeps a memory under a new text. Either way
each claim citing one of them falls in one of three groups:

- it cites nothing else and the memory is forgotten: the line goes (`dropped`);
- it cites other memories too, or the memory was edited: the line is re-derived by a writer call
  from the memories it still rests on (`redo`);
- it cites none of them: the line is left exactly as written (`kept`).

A section left without lines goes, and a page left without sections goes (a hard delete). An alias
goes when the forgotten memories named it and none of the page's remaining memories does; a
mention sighting goes with its memory. The offline writer re-derives a line the way the scripted
section writer writes one: a line made only of words its remaining memories hold stays as it is,
any other becomes the dated lines of a few of those memories that share a word with it, or goes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from domain.aliases import normalize_alias
from domain.attribution import dated_line_sources
from domain.evidence import Evidence
from domain.grounding import words_held
from domain.line_formats import dated_line

LineFate = Literal["kept", "redo", "dropped"]


def line_fate(refs: Sequence[str], forgotten: set[str], edited: set[str]) -> LineFate:
    """What happens to a claim citing `refs` when the memories `forgotten` go and `edited` change."""
    hit = [r for r in refs if r in forgotten or r in edited]
    if not hit:
        return "kept"
    if all(r in forgotten for r in refs):
        return "dropped"
    return "redo"


class RederiveMemory(BaseModel):
    """A memory a re-derived line may rest on: its id, text and day (the day in `YYYY-MM-DD`)."""

    id: str
    content: str
    day: str | None = None


class RederiveLine(BaseModel):
    """One line of the section: shown as it is, or to be re-derived from `memory_ids`."""

    text: str
    redo: bool = False
    memory_ids: list[str] = Field(default_factory=list)


class RederiveTask(BaseModel):
    """A section whose lines citing a forgotten or edited memory must be written again: only the
    `redo` lines change; every other line is shown for context and kept byte for byte."""

    section_id: str
    page_title: str
    page_type: str
    slug: str
    heading: str
    lines: list[RederiveLine]
    memories: list[RederiveMemory] = Field(default_factory=list)

    def memory(self, memory_id: str) -> RederiveMemory | None:
        return next((m for m in self.memories if m.id == memory_id), None)


def memory_line(memory: RederiveMemory, text: str) -> str:
    """A memory's own line: dated when it has a day (domain/line_formats.py), else a plain bullet."""
    return dated_line(memory.day, text) if memory.day else f"- {text}"


# A re-derived line that no longer holds becomes at most this many of its memories' own lines.
MAX_QUOTED = 3


def _content_words(text: str) -> set[str]:
    return {w for w in normalize_alias(text).split() if len(w) >= 4 and not w[0].isdigit()}


def offline_replacement(line: RederiveLine, task: RederiveTask, evidence: dict[str, Evidence],
                        quote: dict[str, str]) -> list[str]:
    """The offline writer's lines for one `redo` line: the line itself when its remaining memories
    hold all of its words (or it quotes one of them); else the dated lines (`quote`: a memory's id to
    its first sentence) of the latest few of its memories that share a word with it; none when no
    memory does (a count or span over memories some of which are gone: it no longer holds)."""
    held = [evidence[m] for m in line.memory_ids if m in evidence]
    if held and (dated_line_sources(line.text, held) or words_held(line.text, held, [task.page_title])):
        return [line.text]
    words = _content_words(line.text)
    sharing = [m for m in (task.memory(i) for i in line.memory_ids)
               if m is not None and quote.get(m.id) and words & _content_words(m.content)]
    sharing.sort(key=lambda m: (m.day or "", m.id))
    return [memory_line(m, quote[m.id]) for m in sharing[-MAX_QUOTED:]]


def splice(task: RederiveTask, replacements: dict[int, list[str]]) -> str:
    """The section's new body: every line not re-derived as it was, each re-derived line replaced by
    its writer's lines (none: it goes); a replacement repeating a line already in the body, or another
    replacement, is written once."""
    out: list[str] = []
    seen: set[str] = {line.text.rstrip() for line in task.lines if not line.redo}
    for index, line in enumerate(task.lines):
        new = replacements.get(index, []) if line.redo else [line.text]
        for text in new:
            text = text.rstrip()
            if not text.strip():
                continue
            if line.redo:
                if text in seen:
                    continue
                seen.add(text)
            out.append(text)
    return "\n".join(out)


@dataclass(frozen=True)
class AliasEvidence:
    """A page alias and whether the remaining and the forgotten memories of its page name it."""

    alias: str
    named_by_forgotten: bool
    named_by_remaining: bool


def names(alias: str, evidence: Evidence) -> bool:
    key = normalize_alias(alias)
    return bool(key) and f" {key} " in evidence.text


def alias_goes(alias: str, title: str, forgotten: Sequence[Evidence], remaining: Sequence[Evidence]) -> bool:
    """An alias only the forgotten memories supported: they name it, no remaining memory of its page
    does, and it is not the page's own title."""
    if normalize_alias(alias) == normalize_alias(title):
        return False
    return any(names(alias, e) for e in forgotten) and not any(names(alias, e) for e in remaining)


def remaining_sightings(samples: Sequence[object], touched: set[str]) -> tuple[list[object], int]:
    """A mention's sample contexts without the touched memories', and how many it lost."""
    kept = [s for s in samples if not (isinstance(s, dict) and str(s.get("source_ref") or "") in touched)]
    return kept, len(samples) - len(kept)


_TOKEN = re.compile(r"[^\W_]+")
MIN_GONE_WORD = 3  # shorter words say too little to single out a memory


def word_tokens(value: str | None) -> set[str]:
    """The words of a text as forgetting compares them: normalised (lowercase, accents folded), split at
    anything not a letter or digit, at least MIN_GONE_WORD characters."""
    return {w for w in _TOKEN.findall(normalize_alias(value or "")) if len(w) >= MIN_GONE_WORD}


def surface_forms(raw: str, words: frozenset[str]) -> set[str]:
    """How the text `raw` writes each of `words` (before normalising): "João" for "joao"."""
    return {token for token in _TOKEN.findall(raw) if token.lower() not in words and (word_tokens(token) & words)}


def like_pattern(value: str) -> str:
    """A LIKE pattern matching `value` anywhere (its own `%`, `_` and `\\` taken literally)."""
    return "%" + value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


@dataclass(frozen=True)
class GoneWords:
    """The words only the forgotten memories had in their scope: no remaining memory holds them, so any
    text of the scope holding one was derived from a forgotten memory. `surfaces`: how those memories
    wrote them, for a database pre-filter (`patterns`) that the exact test (`holds`) then confirms."""

    words: frozenset[str] = frozenset()
    surfaces: frozenset[str] = frozenset()

    @property
    def patterns(self) -> list[str]:
        return [like_pattern(w) for w in sorted(self.words | self.surfaces)]

    def holds(self, *values: str | None) -> bool:
        return bool(self.words) and any(word_tokens(value) & self.words for value in values if value)
