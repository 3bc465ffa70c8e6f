"""Guards applied at the boundary between model output and the wiki: ids, links, edits, citations, JSON.

Model output is untrusted: ids may be truncated or invented, prose may carry `[[wikilinks]]`,
citations may name records outside the batch, and the JSON may come wrapped in prose or fences.
Everything here is pure and total: it drops or rewrites, it never writes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, Protocol
from urllib.parse import quote
from uuid import UUID

from pydantic import BaseModel, ConfigDict

_UUID_SHAPE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_WIKILINK = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]")
_WHITESPACE_RUN = re.compile(r"\s+")
_JSON_FENCE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL)
# encodeURIComponent leaves these unescaped besides ASCII letters, digits and "-_.~".
_URI_COMPONENT_SAFE = "!*'()"
MEANINGFUL_CHANGE_RATIO = 0.05


class PageRef(BaseModel):
    """A page the linkifier may point at: its type, slug and exact title."""

    model_config = ConfigDict(frozen=True)

    type: str
    slug: str
    title: str


class _PageLike(Protocol):
    @property
    def type(self) -> str: ...
    @property
    def slug(self) -> str: ...
    @property
    def title(self) -> str: ...


class JsonResponseError(ValueError):
    """The model's text held no parseable JSON; messages start with `model reply:`."""


def is_valid_uuid(value: object) -> bool:
    """Whether `value` is a UUID in canonical 8-4-4-4-12 hex form, any case.

    No version or variant check; surrounding whitespace or quotes reject; non-strings reject, except
    `uuid.UUID` instances, which are valid by construction.
    """
    if isinstance(value, UUID):
        return True
    return isinstance(value, str) and _UUID_SHAPE.fullmatch(value) is not None


def strip_wikilinks(markdown: str | None) -> str:
    """Unwrap `[[Title]]` to `Title` and `[[Title|Shown]]` to `Shown`.

    `[[A|B|C]]` keeps "B|C"; `[[]]` and `[[A|]]` are not wikilinks and stay as written.
    """
    if not markdown:
        return ""
    return _WIKILINK.sub(lambda m: (m.group(2) if m.group(2) is not None else m.group(1)).strip(), markdown)


def page_href(page_type: str, slug: str) -> str:
    """The wiki route of a page, `/wiki/<type>/<slug>`, each part escaped like encodeURIComponent."""
    return f"/wiki/{quote(page_type, safe=_URI_COMPONENT_SAFE)}/{quote(slug, safe=_URI_COMPONENT_SAFE)}"


def _as_page_ref(ref: _PageLike | tuple[str, str, str]) -> PageRef:
    if isinstance(ref, tuple):
        page_type, slug, title = ref
        return PageRef(type=page_type, slug=slug, title=title)
    return PageRef(type=ref.type, slug=ref.slug, title=ref.title)


def linkify_known_entities(body: str | None, refs: Iterable[_PageLike | tuple[str, str, str]]) -> str:
    """Turn `**Title**` of a known page into `[**Title**](/wiki/<type>/<slug>)`.

    `refs` are objects with `type`, `slug` and `title` (a `PageRef`, a candidate page...) or
    `(type, slug, title)` tuples. Exact, case-sensitive titles; only bold mentions; longest title
    first so "Austin Nature & Science Center" is not shadowed by "Austin"; a mention already inside
    `[**…**](` is left alone, so running it twice changes nothing. The title is inserted literally
    (never read as a replacement pattern): "Cash $$ Money" stays "Cash $$ Money".
    """
    if not body:
        return ""
    ordered = sorted((_as_page_ref(ref) for ref in refs), key=lambda ref: len(ref.title), reverse=True)
    linked = body
    for ref in ordered:
        if not ref.title or f"**{ref.title}**" not in linked:
            continue  # the pattern needs this literal text: skip the regex (apply runs this per section)
        mention = re.compile(r"(?<!\[)\*\*" + re.escape(ref.title) + r"\*\*(?!\]\()")
        link = f"[**{ref.title}**]({page_href(ref.type, ref.slug)})"

        def literal(_match: re.Match[str], link: str = link) -> str:
            return link  # as written: a replacement string would read its backslashes as escapes

        linked = mention.sub(literal, linked)
    return linked


_WIKI_ROUTE_LINK = re.compile(r"\[([^\[\]\n]+)\]\(/wiki/[^\s()]+\)")


def unlinkify(markdown: str | None) -> str:
    """The text before linkification: `[**Title**](/wiki/<type>/<slug>)` back to `**Title**` (any
    link to a wiki route back to its text), so a stored line compares equal to the line it came from."""
    if not markdown:
        return ""
    return _WIKI_ROUTE_LINK.sub(lambda match: match.group(1), markdown)


_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_WORDY = re.compile(r"\w")


def without_repeated_lines(markdown: str | None) -> str:
    """The body with each line that says something (a word character in it) kept only the first time it
    occurs, compared un-linkified and trimmed; blank lines, rules and code blocks are left alone."""
    if not markdown:
        return ""
    seen: set[str] = set()
    kept: list[str] = []
    in_code = False
    for line in markdown.split("\n"):
        if _FENCE.match(line):
            in_code = not in_code
        key = unlinkify(line).strip()
        if not in_code and _WORDY.search(key) and not _FENCE.match(line):
            if key in seen:
                continue
            seen.add(key)
        kept.append(line)
    return "\n".join(kept)


def _collapse_whitespace(text: str) -> str:
    return _WHITESPACE_RUN.sub(" ", text.strip())


def _edit_distance_lower_bound(a: str, b: str) -> int:
    # Common prefix, then common suffix not overlapping it; what is left is a lower bound on the edit.
    shorter = min(len(a), len(b))
    prefix = 0
    while prefix < shorter and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < shorter - prefix and a[len(a) - 1 - suffix] == b[len(b) - 1 - suffix]:
        suffix += 1
    return max(len(a) - prefix - suffix, len(b) - prefix - suffix, abs(len(a) - len(b)))


def is_meaningful_change(existing: str | None, proposed: str | None) -> bool:
    """Whether a proposed section body differs enough from the stored one to rewrite it.

    Both sides are trimmed and whitespace-collapsed. Equal -> False; from empty to something -> True;
    to empty -> False; otherwise True only when the prefix/suffix edit-distance lower bound exceeds
    5% of the longer body (exactly 5% is not enough). Lengths are Python string lengths.
    """
    a = _collapse_whitespace(existing or "")
    b = _collapse_whitespace(proposed or "")
    if a == b:
        return False
    if not a:
        return True
    if not b:
        return False
    return _edit_distance_lower_bound(a, b) / max(len(a), len(b)) > MEANINGFUL_CHANGE_RATIO


def cited_memory_ids(refs: Iterable[object], allowed: Iterable[str]) -> list[str]:
    """The citations that name an allowed memory (one of the batch, or a sighting held earlier).

    Each ref is trimmed and lower-cased before the comparison; the result keeps citation order and
    names each memory once. Anything else is dropped and there is no fallback to "every memory of
    the batch": a section that cites nothing of the batch gets no provenance.
    """
    known = set(allowed)
    cited: list[str] = []
    for ref in refs:
        normalized = str(ref).strip().lower()
        if normalized in known and normalized not in cited:
            cited.append(normalized)
    return cited


def _reject_non_json_constant(name: str) -> Any:
    # JSON has no NaN or Infinity; Python's json would accept them, and a model may write them.
    raise ValueError(f"invalid JSON constant {name}")


def _loads(text: str) -> Any:
    return json.loads(text, parse_constant=_reject_non_json_constant)


def _loads_or_raise(text: str) -> Any:
    try:
        return _loads(text)
    except ValueError as exc:
        raise JsonResponseError(f"model reply: invalid JSON: {exc}") from exc


def parse_json_response(text: str) -> Any:
    """The JSON value in a model's text answer, without repair.

    Tries, in order: the trimmed text; the first ```/```json fenced block; the span from the first
    `{` or `[` to the last matching closer. Raises `JsonResponseError` with "model reply: empty
    response", "model reply: no JSON found in a reply of N characters", or, for a fenced block or span
    that is not valid JSON, "model reply: invalid JSON: <where>" (no text of the reply in any of them).
    NaN and Infinity are not JSON.
    """
    trimmed = text.strip()
    if not trimmed:
        raise JsonResponseError("model reply: empty response")
    try:
        return _loads(trimmed)
    except ValueError:
        pass
    fence = _JSON_FENCE.search(trimmed)
    if fence and fence.group(1):
        return _loads_or_raise(fence.group(1))
    openers = [index for index in (trimmed.find("{"), trimmed.find("[")) if index != -1]
    if openers:
        start = min(openers)
        closer = "}" if trimmed[start] == "{" else "]"
        end = trimmed.rfind(closer)
        if end > start:
            return _loads_or_raise(trimmed[start : end + 1])
    # Never a quote of the reply: the message is logged and kept in workflow history, and a reply can
    # carry memory text.
    raise JsonResponseError(f"model reply: no JSON found in a reply of {len(trimmed)} characters")
