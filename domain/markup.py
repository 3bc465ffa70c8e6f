"""Safe bodies: what of untrusted text may reach a page's stored or rendered markdown.

Memory text, model output and names are untrusted. Whatever a renderer (or an agent reading the
markdown) makes of a body, it must not run markup from them or be led out of the wiki. The rule,
applied to every section body, heading and summary as it is stored and again to every body as it is
rendered:

1. No raw HTML. A `<` that could open a tag, a comment, a declaration, a processing instruction or
   an autolink (`<` followed by a letter, `/`, `!` or `?`) becomes `&lt;`, which markdown shows as
   the character itself. `<3` and `a < b` stay as written.
2. Links only to wiki routes. The only link a body may hold is `[text](/wiki/<type>/<slug>)`, the
   form the compiler itself writes. Any other inline link or image (`[text](target)`,
   `![alt](target)`) keeps its text and loses its target, which becomes "(link removed)"; every other
   square bracket is escaped (`\\[`), so no reference link or link definition can form either.
3. No web address. Anything of the form `scheme://…` (`https://`, `ftp://`, `file://`, …) or `www.…`
   becomes "(link removed)", in code spans too: an address shown as text still points out of the
   wiki for a reader that follows it. The address stays in the memory the section cites, where
   `wiki memory show` and an agent's `get_sources` show it as retained.

Wiki routes carry no tenant or owner: a route resolves within the scope of the page it is on, so a
link in a body can never reach another scope. Code spans are left alone by rule 2 (markdown shows
their content literally); rules 1 and 3 apply everywhere, even there, because a renderer that
disagrees about where a code span ends must still find no tag to run and no address to follow. The
rules are idempotent: applying them to their own output changes nothing. `safe_title` applies rules 1
and 3 to a title (plain text).
"""

from __future__ import annotations

import re
from urllib.parse import unquote

_HTML_OPENER = re.compile(r"<(?=[A-Za-z/!?])")
# `[text](/wiki/<type>/<slug>)`, the only link kept: the slug as page_href writes it (no space,
# slash, bracket or parenthesis), text without brackets or line breaks.
_WIKI_LINK = re.compile(r"\[([^\[\]\n]+)\]\(/wiki/(?:entity|topic|decision)/([^\s()\[\]/]+)\)")
# A scheme and `://` (http, https, ftp, file, …), or `www.`, then everything up to a space, a
# bracket or a backtick; the sentence's own closing punctuation is given back (`_drop_address`).
_WEB_ADDRESS = re.compile(r"(?:(?<![\w.+-])[a-z][a-z0-9+.-]{0,31}://|(?<![\w.@/-])www\.)[^\s<>`\[\]]*",
                          re.IGNORECASE)
# An inline link or image that is not a wiki route (those are kept before this applies):
# `[text](target)` or `![alt](target)`, the text with one level of brackets inside ("[x [y]](z)"), the
# target without spaces and with one level of parentheses inside ("javascript:alert(1)"), an
# optional title.
_INLINE_LINK = re.compile(r"!?\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"
                          r"\(\s*((?:[^()\s]|\([^()\s]*\))*)(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)")
LINK_REMOVED = "(link removed)"
_DIRECTION_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_BODY_CONTROLS = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_DIRECTION_CONTROLS}]")
_TITLE_CONTROLS = re.compile("[\\x00-\\x1f\\x7f-\\x9f]")
_DIRECTION_ONLY = re.compile(f"[{_DIRECTION_CONTROLS}]")
_BACKTICKS = re.compile(r"`+")


def neutralise_html(text: str) -> str:
    """Rule 1 alone: `<tag` becomes `&lt;tag`."""
    return _HTML_OPENER.sub("&lt;", text)


def without_controls(text: str) -> str:
    """One line of plain text: controls (line breaks too) become spaces, direction overrides go."""
    return _DIRECTION_ONLY.sub("", _TITLE_CONTROLS.sub(" ", text))


def safe_title(text: str) -> str:
    """Rules 1 and 3, for a title (plain text, not markdown): one line, no control, no tag, no web address."""
    return _without_addresses(neutralise_html(without_controls(text)))


def safe_markdown(markdown: str | None) -> str:
    """The body without controls, with raw HTML neutralised, links only to wiki routes and no web address."""
    if not markdown:
        return ""
    markdown = _BODY_CONTROLS.sub("", markdown)
    return "\n".join(_safe_line(line) for line in neutralise_html(markdown).split("\n"))


def _safe_line(line: str) -> str:
    parts = []
    for is_code, part in _code_spans(line):
        parts.append(_without_addresses(part) if is_code else _unlink(part))
    return "".join(parts)


def _without_addresses(text: str) -> str:
    return _WEB_ADDRESS.sub(_drop_address, text)


def _drop_address(match: re.Match[str]) -> str:
    # Trailing punctuation and emphasis belong to the sentence, not the address ("see **https://x.com**.").
    address = match.group(0)
    kept = address.rstrip(".,;:!?'\")*")
    return f"{LINK_REMOVED}{address[len(kept):]}"


def _code_spans(line: str) -> list[tuple[bool, str]]:
    """The line cut into (is code span, text) parts: a run of backticks opens a code span that the
    next run of the same length closes; a run without a partner, or one after a backslash, is text."""
    parts: list[tuple[bool, str]] = []
    start = 0
    position = 0
    while True:
        opening = _BACKTICKS.search(line, position)
        if opening is None:
            break
        if _escaped(line, opening.start()):
            position = opening.start() + 1
            continue
        closing = next((m for m in _BACKTICKS.finditer(line, opening.end())
                        if len(m.group(0)) == len(opening.group(0))), None)
        if closing is None:
            break
        if opening.start() > start:
            parts.append((False, line[start:opening.start()]))
        parts.append((True, line[opening.start():closing.end()]))
        start = position = closing.end()
    if start < len(line):
        parts.append((False, line[start:]))
    return parts


def _escaped(text: str, index: int) -> bool:
    """Whether the character at `index` follows an odd number of backslashes."""
    count = 0
    while index - count - 1 >= 0 and text[index - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def _is_route_slug(slug: str) -> bool:
    decoded = unquote(slug)
    return decoded not in (".", "..") and "/" not in decoded


def _unlink(text: str) -> str:
    """Rules 2 and 3 on text outside code spans: wiki links kept, other links reduced to their text,
    other brackets escaped, addresses removed."""
    kept = [m for m in _WIKI_LINK.finditer(text) if _is_route_slug(m.group(2)) and not _escaped(text, m.start())]
    out: list[str] = []
    cursor = 0
    for link in kept:
        out.append(_escape_outside_links(text[cursor:link.start()]))
        # The link's text is shown, not followed: brackets inside it would have been refused by the
        # pattern, so only an address in it has to go.
        label = _without_addresses(link.group(1))
        out.append(f"[{label}]{text[link.end(1) + 1:link.end()]}")
        cursor = link.end()
    out.append(_escape_outside_links(text[cursor:]))
    return "".join(out)


def _escape_outside_links(text: str) -> str:
    text = _INLINE_LINK.sub(_link_text, text)
    if "[" not in text and "]" not in text:
        return _without_addresses(text)  # no bracket to escape: most lines, read by every page view
    escaped = []
    for index, char in enumerate(text):
        if char in "[]" and not _escaped(text, index):
            escaped.append("\\" + char)
        else:
            escaped.append(char)
    return _without_addresses("".join(escaped))


def _link_text(match: re.Match[str]) -> str:
    if _escaped(match.string, match.start()):
        return match.group(0)  # `\[text](x)` is no link: its brackets are text already
    label = match.group(1).strip()
    return f"{label} {LINK_REMOVED}" if label else LINK_REMOVED
