"""Safe bodies: what of untrusted text may reach a page's stored or rendered markdown.

Memory text, model output and names are untrusted. Whatever a renderer makes of a body, it must not
run markup from them or follow a link out of the wiki. The rule, applied to every section body,
heading and summary as it is stored and again to every body as it is rendered:

1. No raw HTML. A `<` that could open a tag, a comment, a declaration, a processing instruction or
   an autolink (`<` followed by a letter, `/`, `!` or `?`) becomes `&lt;`, which markdown shows as
   the character itself. `<3` and `a < b` stay as written.
2. Links only to wiki routes. The only link a body may hold is `[text](/wiki/<type>/<slug>)`, the
   form the compiler itself writes; every other square bracket is escaped (`\\[`), so no inline link,
   image, reference link or link definition can form from memory text.
3. No bare web addresses that a renderer would turn into links (`https://…`, `http://…`, `ftp://…`,
   `www.…`): each is put in a code span, so it reads as written and is never followed.

Wiki routes carry no tenant or owner: a route resolves within the scope of the page it is on, so a
link in a body can never reach another scope. Code spans are left alone by rules 2 and 3 (markdown
shows their content literally); rule 1 applies everywhere, even there, because a renderer that
disagrees about where a code span ends must still find no tag to run. The rules are idempotent:
applying them to their own output changes nothing.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

_HTML_OPENER = re.compile(r"<(?=[A-Za-z/!?])")
# `[text](/wiki/<type>/<slug>)`, the only link kept: the slug as page_href writes it (no space,
# slash, bracket or parenthesis), text without brackets or line breaks.
_WIKI_LINK = re.compile(r"\[([^\[\]\n]+)\]\(/wiki/(?:entity|topic|decision)/([^\s()\[\]/]+)\)")
_WEB_ADDRESS = re.compile(r"(?:\b(?:https?|ftp)://|(?<![\w.@/-])www\.)[^\s<>`]+", re.IGNORECASE)
_BACKTICKS = re.compile(r"`+")


def neutralise_html(text: str) -> str:
    """Rule 1 alone, for plain text such as a title: `<tag` becomes `&lt;tag`."""
    return _HTML_OPENER.sub("&lt;", text)


def safe_markdown(markdown: str | None) -> str:
    """The body with raw HTML neutralised, links only to wiki routes and web addresses unlinked."""
    if not markdown:
        return ""
    return "\n".join(_safe_line(line) for line in neutralise_html(markdown).split("\n"))


def _safe_line(line: str) -> str:
    parts = []
    for is_code, part in _code_spans(line):
        parts.append(part if is_code else _unlink(part))
    return "".join(parts)


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
    """Rules 2 and 3 on text outside code spans: wiki links kept, other brackets escaped, addresses
    in code spans."""
    kept: list[tuple[int, int]] = [(m.start(), m.end()) for m in _WIKI_LINK.finditer(text)
                                   if _is_route_slug(m.group(2)) and not _escaped(text, m.start())]
    out: list[str] = []
    cursor = 0
    for start, end in kept:
        out.append(_escape_outside_links(text[cursor:start]))
        # The link's text is shown, not followed: escape brackets inside it would have been refused
        # by the pattern, so it is kept whole.
        out.append(text[start:end])
        cursor = end
    out.append(_escape_outside_links(text[cursor:]))
    return "".join(out)


def _escape_outside_links(text: str) -> str:
    escaped = []
    for index, char in enumerate(text):
        if char in "[]" and not _escaped(text, index):
            escaped.append("\\" + char)
        else:
            escaped.append(char)
    return _WEB_ADDRESS.sub(_code_address, "".join(escaped))


def _code_address(match: re.Match[str]) -> str:
    # Trailing punctuation belongs to the sentence, not the address ("see https://x.com.").
    address = match.group(0)
    kept = address.rstrip(".,;:!?'\")")
    return f"`{kept}`{address[len(kept):]}"
