from dataclasses import dataclass

import pytest

from domain.render import (
    first_sentence,
    render_body_markdown,
    render_promoted_parent_section,
    render_rollup_list,
)


@dataclass
class _Section:
    heading: str
    body_md: str
    position: int


@dataclass
class _Child:
    type: str
    slug: str
    title: str
    summary: str | None


class TestRenderBodyMarkdown:
    def test_orders_sections_by_position_with_h2_headings(self) -> None:
        sections = [_Section("Second", "b2", 2), _Section("First", "b1", 1)]
        assert render_body_markdown(sections) == "## First\n\nb1\n\n## Second\n\nb2"

    def test_is_deterministic(self) -> None:
        sections = [_Section("One", "a", 1), _Section("Two", "b", 2)]
        assert render_body_markdown(sections) == render_body_markdown(list(sections))

    def test_each_section_is_trimmed_and_an_empty_body_leaves_the_heading(self) -> None:
        sections = [_Section("Notes", "", 1), _Section("Visits", "  went twice \n\n", 2)]
        assert render_body_markdown(sections) == "## Notes\n\n## Visits\n\n  went twice"

    def test_equal_positions_keep_input_order(self) -> None:
        sections = [_Section("B", "b", 1), _Section("A", "a", 1)]
        assert render_body_markdown(sections) == "## B\n\nb\n\n## A\n\na"

    def test_no_sections_render_an_empty_body(self) -> None:
        assert render_body_markdown([]) == ""


class TestFirstSentence:
    @pytest.mark.parametrize(
        ("summary", "expected"),
        [
            (None, ""),
            ("   ", ""),
            ("BBQ joint in Austin, TX. Lines are long.", "BBQ joint in Austin, TX."),
            ("Wow! Great food.", "Wow!"),
            ("Open late? Yes.", "Open late?"),
            ("  Korean-inspired restaurant in Toronto.  ", "Korean-inspired restaurant in Toronto."),
            ("Version 2.5 shipped. Then more.", "Version 2.5 shipped."),
            ("No terminator at all", "No terminator at all"),
            # An abbreviation ends no sentence.
            ("St. Louis has great BBQ.", "St. Louis has great BBQ."),
            ("Met Sam on Webster St with Dr. Patel. Then lunch.", "Met Sam on Webster St with Dr. Patel."),
        ],
    )
    def test_cuts_at_the_first_terminator_followed_by_space_or_end(
        self, summary: str | None, expected: str
    ) -> None:
        assert first_sentence(summary) == expected

    def test_does_not_cross_a_line_break(self) -> None:
        # Line 1 has no terminator, so there is no match and the whole (short) text comes back.
        assert first_sentence("First line\nSecond line. End.") == "First line\nSecond line. End."
        assert first_sentence("First line.\nSecond line.") == "First line."

    def test_long_text_without_terminator_is_cut_at_160_characters(self) -> None:
        text = "word " * 40  # 200 characters, no terminator
        assert first_sentence(text) == ("word " * 32).strip() + "…"

    def test_exactly_160_characters_is_not_cut(self) -> None:
        text = "x" * 160
        assert first_sentence(text) == text


class TestRenderRollupList:
    def test_renders_the_seed_example_exactly(self) -> None:
        children = [
            _Child("entity", "franklin-barbecue", "Franklin Barbecue", "BBQ joint in Austin, TX. Cash only."),
            _Child("entity", "momofuku-daisho", "Momofuku Daishō", "Korean-inspired restaurant in Toronto."),
        ]
        assert render_rollup_list(children) == (
            "- [**Franklin Barbecue**](/wiki/entity/franklin-barbecue) — BBQ joint in Austin, TX.\n"
            "- [**Momofuku Daishō**](/wiki/entity/momofuku-daisho)"
            " — Korean-inspired restaurant in Toronto."
        )

    def test_omits_the_tail_without_a_summary(self) -> None:
        assert (
            render_rollup_list([_Child("topic", "austin", "Austin", None)])
            == "- [**Austin**](/wiki/topic/austin)"
        )
        assert (
            render_rollup_list([_Child("topic", "austin", "Austin", "  ")])
            == "- [**Austin**](/wiki/topic/austin)"
        )

    def test_escapes_href_parts_like_encode_uri_component(self) -> None:
        assert render_rollup_list([_Child("entity", "café & co", "Café & Co", None)]) == (
            "- [**Café & Co**](/wiki/entity/caf%C3%A9%20%26%20co)"
        )

    def test_no_children_render_nothing(self) -> None:
        assert render_rollup_list([]) == ""


class TestRenderPromotedParentSection:
    def test_summary_highlights_and_see_link_are_joined_by_blank_lines(self) -> None:
        body = render_promoted_parent_section(
            "  Twenty restaurants, now on their own page.  ",
            ["Franklin Barbecue", "Uchi", "Suerte"],
            "Austin Restaurants",
            "topic",
            "austin-restaurants",
        )
        assert body == (
            "Twenty restaurants, now on their own page.\n\n"
            "- Franklin Barbecue\n- Uchi\n- Suerte\n\n"
            "See: [Austin Restaurants](/wiki/topic/austin-restaurants)\n"
        )

    def test_leading_dashes_bullets_and_spaces_of_highlights_are_stripped(self) -> None:
        body = render_promoted_parent_section(
            "", ["- Uchi", "• Suerte", " -•- Odd Duck", "Loro - tacos"], "T", "topic", "t"
        )
        assert body == "- Uchi\n- Suerte\n- Odd Duck\n- Loro - tacos\n\nSee: [T](/wiki/topic/t)\n"

    def test_empty_summary_and_no_highlights_leave_only_the_see_link(self) -> None:
        assert render_promoted_parent_section("   ", [], "Austin Parks", "topic", "austin-parks") == (
            "See: [Austin Parks](/wiki/topic/austin-parks)\n"
        )

    def test_the_href_is_escaped_and_the_link_text_is_not_bold(self) -> None:
        body = render_promoted_parent_section("S.", [], "Café & Co", "topic", "café & co")
        assert body == "S.\n\nSee: [Café & Co](/wiki/topic/caf%C3%A9%20%26%20co)\n"
