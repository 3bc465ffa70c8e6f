from dataclasses import dataclass
from uuid import UUID

import pytest

from domain.guards import (
    JsonResponseError,
    PageRef,
    cited_memory_ids,
    is_meaningful_change,
    is_valid_uuid,
    linkify_known_entities,
    page_href,
    parse_json_response,
    strip_wikilinks,
    unlinkify,
    without_repeated_lines,
)


class TestIsValidUuid:
    @pytest.mark.parametrize(
        "value",
        [
            "f4a3f29b-efab-487e-b53f-33381163d168",
            "00000000-0000-0000-0000-000000000000",
            "F4A3F29B-EFAB-487E-B53F-33381163D168",
            UUID("f4a3f29b-efab-487e-b53f-33381163d168"),
        ],
    )
    def test_accepts_canonical_uuids(self, value: object) -> None:
        assert is_valid_uuid(value)

    @pytest.mark.parametrize(
        "value",
        [
            "814e6b70",
            "f4a3f29b-efab-487e-b53f",
            "not-a-uuid",
            None,
            123,
            {},
            " f4a3f29b-efab-487e-b53f-33381163d168",
            '"f4a3f29b-efab-487e-b53f-33381163d168"',
            "f4a3f29b-efab-487e-b53f-33381163d168\n",
            "f4a3f29befab487eb53f33381163d168",
        ],
    )
    def test_rejects_truncated_wrapped_and_non_string_ids(self, value: object) -> None:
        assert not is_valid_uuid(value)


class TestStripWikilinks:
    def test_empty_inputs_give_empty_string(self) -> None:
        assert strip_wikilinks(None) == ""
        assert strip_wikilinks("") == ""

    def test_unwraps_plain_brackets(self) -> None:
        assert strip_wikilinks("Visit [[Austin]] for BBQ.") == "Visit Austin for BBQ."

    def test_piped_form_keeps_the_display_text(self) -> None:
        assert strip_wikilinks("See [[Tom's Dive & Swim|the camp]] listing.") == "See the camp listing."

    def test_unwraps_several_in_one_body(self) -> None:
        body = (
            "- [[Tom's Dive & Swim]] – 10-week camp for 4-year-olds\n"
            "- [[Goldfish Swim School]] – Jump Start Clinics"
        )
        assert strip_wikilinks(body) == (
            "- Tom's Dive & Swim – 10-week camp for 4-year-olds\n- Goldfish Swim School – Jump Start Clinics"
        )

    def test_leaves_markdown_links_alone(self) -> None:
        assert strip_wikilinks("See [the docs](https://example.com)") == "See [the docs](https://example.com)"

    def test_edge_shapes(self) -> None:
        assert strip_wikilinks("[[A|B|C]]") == "B|C"
        assert strip_wikilinks("[[ Spaced ]]") == "Spaced"
        assert strip_wikilinks("[[A|]] and [[]]") == "[[A|]] and [[]]"


@dataclass
class _Candidate:
    type: str
    slug: str
    title: str


class TestLinkifyKnownEntities:
    REFS = [
        PageRef(type="entity", slug="austin", title="Austin"),
        PageRef(type="entity", slug="austin-nature-science-center", title="Austin Nature & Science Center"),
        PageRef(type="entity", slug="order-vqod414y", title="Order vqod414y"),
    ]

    def test_wraps_bold_known_titles(self) -> None:
        body = "- **Order vqod414y** – from FILM FLEET LLC"
        assert linkify_known_entities(body, self.REFS) == (
            "- [**Order vqod414y**](/wiki/entity/order-vqod414y) – from FILM FLEET LLC"
        )

    def test_longer_titles_win_over_their_prefixes(self) -> None:
        out = linkify_known_entities("Visit **Austin Nature & Science Center** and **Austin**.", self.REFS)
        assert out == (
            "Visit [**Austin Nature & Science Center**](/wiki/entity/austin-nature-science-center)"
            " and [**Austin**](/wiki/entity/austin)."
        )

    def test_unknown_bold_and_plain_mentions_stay(self) -> None:
        body = "- **Unknown Thing** near Austin, not **austin**"
        assert linkify_known_entities(body, self.REFS) == body

    def test_is_idempotent(self) -> None:
        once = linkify_known_entities("**Austin**", self.REFS)
        assert once == "[**Austin**](/wiki/entity/austin)"
        assert linkify_known_entities(once, self.REFS) == once

    def test_no_word_boundary_is_required(self) -> None:
        assert linkify_known_entities("x**Austin**y", self.REFS) == "x[**Austin**](/wiki/entity/austin)y"

    def test_empty_body_and_empty_refs(self) -> None:
        assert linkify_known_entities(None, self.REFS) == ""
        assert linkify_known_entities("", self.REFS) == ""
        assert linkify_known_entities("- **Austin** — not linked", []) == "- **Austin** — not linked"

    def test_escapes_regex_metacharacters(self) -> None:
        refs = [PageRef(type="entity", slug="johnson-s", title="Johnson's (Grocery)")]
        assert linkify_known_entities("Went to **Johnson's (Grocery)** yesterday.", refs) == (
            "Went to [**Johnson's (Grocery)**](/wiki/entity/johnson-s) yesterday."
        )

    def test_dollar_titles_are_inserted_literally(self) -> None:
        # Titles are inserted literally: as a replacement string, "$$" would become "$".
        refs = [PageRef(type="entity", slug="cash-money", title="Cash $$ Money $& Co $1")]
        assert linkify_known_entities("I like **Cash $$ Money $& Co $1**.", refs) == (
            "I like [**Cash $$ Money $& Co $1**](/wiki/entity/cash-money)."
        )

    def test_backslashes_in_titles_are_inserted_literally(self) -> None:
        refs = [PageRef(type="topic", slug="a-b", title=r"A\1B")]
        assert linkify_known_entities(r"**A\1B**", refs) == r"[**A\1B**](/wiki/topic/a-b)"

    def test_accepts_tuples_and_any_object_with_type_slug_title(self) -> None:
        body = "**Austin** and **Uchi**"
        refs = [("topic", "austin", "Austin"), _Candidate(type="entity", slug="uchi", title="Uchi")]
        assert (
            linkify_known_entities(body, refs)
            == "[**Austin**](/wiki/topic/austin) and [**Uchi**](/wiki/entity/uchi)"
        )

    def test_empty_titles_are_skipped(self) -> None:
        assert linkify_known_entities("****", [PageRef(type="entity", slug="x", title="")]) == "****"

    def test_href_parts_are_uri_component_escaped(self) -> None:
        refs = [PageRef(type="entity", slug="東京 tower/1", title="Tokyo")]
        assert linkify_known_entities("**Tokyo**", refs) == (
            "[**Tokyo**](/wiki/entity/%E6%9D%B1%E4%BA%AC%20tower%2F1)"
        )


def test_page_href_keeps_encode_uri_component_unreserved_characters() -> None:
    assert page_href("entity", "a-b_c.d!e~f*g'h(i)") == "/wiki/entity/a-b_c.d!e~f*g'h(i)"
    assert page_href("entity", "a&b?c#d") == "/wiki/entity/a%26b%3Fc%23d"


class TestIsMeaningfulChange:
    def test_identical_bodies_are_not_meaningful(self) -> None:
        assert not is_meaningful_change("Great pastrami.", "Great pastrami.")

    def test_whitespace_only_differences_are_not_meaningful(self) -> None:
        assert not is_meaningful_change("Great  pastrami.", "Great pastrami.")
        assert not is_meaningful_change("  Great\npastrami. ", "Great pastrami.")

    def test_empty_to_non_empty_is_meaningful(self) -> None:
        assert is_meaningful_change(None, "New body.")
        assert is_meaningful_change("   ", "New body.")

    def test_non_empty_to_empty_is_not(self) -> None:
        assert not is_meaningful_change("Old body.", "")
        assert not is_meaningful_change("Old body.", None)

    def test_substantive_changes_are_meaningful(self) -> None:
        assert is_meaningful_change("Great pastrami. Go early.", "Great pastrami. Go early; avoid Mondays.")

    def test_sub_five_percent_tweaks_are_not(self) -> None:
        assert not is_meaningful_change("a" * 200, "a" * 199 + "b")

    def test_exactly_five_percent_is_not_enough(self) -> None:
        # 5 of 100 characters changed: 0.05 is not strictly greater than 0.05.
        assert not is_meaningful_change("a" * 100, "a" * 95 + "b" * 5)
        assert is_meaningful_change("a" * 100, "a" * 94 + "b" * 6)

    def test_suffix_does_not_overlap_prefix(self) -> None:
        # "aaa" -> "aaaa": prefix 3, suffix bounded to 0, delta 1 of 4 = 25%.
        assert is_meaningful_change("aaa", "aaaa")


class TestCitedMemoryIds:
    BATCH = ["f4a3f29b-efab-487e-b53f-33381163d168", "0b1c2d3e-0000-4000-8000-000000000002"]

    def test_keeps_citation_order_and_drops_ids_outside_the_batch(self) -> None:
        first, second = self.BATCH
        assert cited_memory_ids([second, "nope", first], self.BATCH) == [second, first]

    def test_no_citations_means_no_provenance(self) -> None:
        assert cited_memory_ids([], self.BATCH) == []

    def test_citing_only_unknown_ids_gives_nothing_not_the_whole_batch(self) -> None:
        assert cited_memory_ids(["99999999-0000-4000-8000-000000000000"], self.BATCH) == []

    def test_ids_are_trimmed_lower_cased_and_named_once(self) -> None:
        memory_id = UUID(self.BATCH[0])
        assert cited_memory_ids([memory_id, f" {str(memory_id).upper()} ", self.BATCH[0]], self.BATCH) == [
            self.BATCH[0]]


class TestParseJsonResponse:
    def test_bare_object(self) -> None:
        assert parse_json_response('{"a":1}') == {"a": 1}

    def test_json_fence(self) -> None:
        assert parse_json_response('```json\n{"a":2}\n```') == {"a": 2}

    def test_plain_fence(self) -> None:
        assert parse_json_response('```\n{"a":3}\n```') == {"a": 3}

    def test_leading_prose(self) -> None:
        assert parse_json_response('Here is the plan:\n{"a":4}') == {"a": 4}

    def test_slices_from_the_first_opener_to_the_last_matching_closer(self) -> None:
        assert parse_json_response('Plan: [1, {"b": 2}] done') == [1, {"b": 2}]
        # No repair: a stray closer after the object is swallowed by the slice, which then fails.
        with pytest.raises(JsonResponseError, match=r"^model reply: invalid JSON"):
            parse_json_response('Plan: {"a": [1]} trailing } text')

    def test_empty_input(self) -> None:
        with pytest.raises(JsonResponseError, match=r"^model reply: empty response$"):
            parse_json_response("  \n ")

    def test_no_json(self) -> None:
        with pytest.raises(JsonResponseError, match=r"^model reply: no JSON found in a reply of 19 characters$"):
            parse_json_response("no json here at all")

    def test_the_error_quotes_nothing_of_the_reply(self) -> None:
        # The message is logged and kept in workflow history: a reply may carry memory text.
        for reply in ("x" * 300 + " zorblatt", '```json\n{"zorblatt": }\n```', 'Plan: {"zorblatt": 1,}'):
            with pytest.raises(JsonResponseError) as excinfo:
                parse_json_response(reply)
            assert "zorblatt" not in str(excinfo.value) and "xxx" not in str(excinfo.value)

    def test_broken_fenced_json_does_not_fall_back_to_slicing(self) -> None:
        with pytest.raises(JsonResponseError, match=r"^model reply: invalid JSON"):
            parse_json_response('```json\n{"a": }\n```\n{"b": 1}')

    def test_broken_sliced_json_raises(self) -> None:
        with pytest.raises(JsonResponseError, match=r"^model reply: invalid JSON"):
            parse_json_response('Plan: {"a": 1,}')

    def test_nan_is_not_json(self) -> None:
        with pytest.raises(JsonResponseError):
            parse_json_response('Plan: {"a": NaN}')

    def test_error_is_a_value_error(self) -> None:
        assert issubclass(JsonResponseError, ValueError)


def test_a_line_is_kept_once_per_body_whether_or_not_it_was_linkified():
    body = ("- [**Uchi**](/wiki/entity/uchi): Dinner at Uchi.\n- **Uchi**: Dinner at Uchi.\n\n"
            "---\n---\n```\nx = 1\nx = 1\n```\n- Dinner at Uchi.\n- Dinner at Uchi.")

    assert without_repeated_lines(body) == ("- [**Uchi**](/wiki/entity/uchi): Dinner at Uchi.\n\n"
                                            "---\n---\n```\nx = 1\nx = 1\n```\n- Dinner at Uchi.")


def test_unlinkify_undoes_the_linkifier():
    refs = [("entity", "uchi", "Uchi")]
    plain = "- **Uchi**: Dinner at **Uchi**."

    assert unlinkify(linkify_known_entities(plain, refs)) == plain
