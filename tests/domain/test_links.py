from domain.links import (
    CO_MENTION_DIRECTED_EDGE_CAP,
    co_mention_context,
    co_mention_pairs,
    deterministic_link_context,
)


class TestCoMentionPairs:
    def test_two_pages_give_two_reciprocal_edges(self) -> None:
        pairs = co_mention_pairs({"mem-1": [("aaa", "page-a"), ("bbb", "page-b")]})
        assert pairs == [("page-a", "page-b", "mem-1"), ("page-b", "page-a", "mem-1")]

    def test_three_pages_give_six_edges_in_nested_loop_order(self) -> None:
        pairs = co_mention_pairs({"mem-1": [("c", "C"), ("a", "A"), ("b", "B")]})
        assert [(f, t) for f, t, _ in pairs] == [
            ("A", "B"),
            ("A", "C"),
            ("B", "A"),
            ("B", "C"),
            ("C", "A"),
            ("C", "B"),
        ]

    def test_caps_at_ten_directed_edges_in_slug_order(self) -> None:
        pages = [("zz", "p6"), ("aa", "p1"), ("bb", "p2"), ("cc", "p3"), ("dd", "p4"), ("ee", "p5")]
        pairs = co_mention_pairs({"mem-1": pages})
        assert len(pairs) == CO_MENTION_DIRECTED_EDGE_CAP == 10
        assert {f for f, _, _ in pairs} == {"p1", "p2"}
        assert pairs[-1] == ("p2", "p6", "mem-1")

    def test_four_pages_lose_the_last_two_edges_so_reciprocity_is_not_guaranteed(self) -> None:
        pairs = co_mention_pairs({"m": [("a", "A"), ("b", "B"), ("c", "C"), ("d", "D")]})
        assert len(pairs) == 10
        assert ("D", "B", "m") not in pairs and ("D", "C", "m") not in pairs
        assert ("B", "D", "m") in pairs

    def test_custom_cap(self) -> None:
        assert len(co_mention_pairs({"m": [("a", "A"), ("b", "B"), ("c", "C")]}, cap=3)) == 3

    def test_a_single_page_gives_nothing(self) -> None:
        assert co_mention_pairs({"mem-1": [("a", "A")]}) == []
        assert co_mention_pairs({"mem-1": []}) == []

    def test_the_same_page_cited_from_several_sections_counts_once(self) -> None:
        pairs = co_mention_pairs({"mem-1": [("a", "A"), ("a", "A"), ("b", "B")]})
        assert pairs == [("A", "B", "mem-1"), ("B", "A", "mem-1")]

    def test_each_memory_is_independent_and_ordered_by_memory_id(self) -> None:
        pairs = co_mention_pairs({"mem-2": [("c", "C"), ("d", "D")], "mem-1": [("a", "A"), ("b", "B")]})
        assert pairs == [
            ("A", "B", "mem-1"),
            ("B", "A", "mem-1"),
            ("C", "D", "mem-2"),
            ("D", "C", "mem-2"),
        ]

    def test_the_cap_applies_per_memory(self) -> None:
        six = [(f"s{i}", f"p{i}") for i in range(6)]
        assert len(co_mention_pairs({"m1": six, "m2": six})) == 20

    def test_equal_slugs_are_ordered_by_page_id(self) -> None:
        pairs = co_mention_pairs({"m": [("same", "P2"), ("same", "P1")]})
        assert pairs[0] == ("P1", "P2", "m")

    def test_no_memories(self) -> None:
        assert co_mention_pairs({}) == []


def test_context_tags() -> None:
    assert deterministic_link_context("city", "toronto") == "deterministic:city:toronto"
    assert deterministic_link_context("journal", "summer-2025") == "deterministic:journal:summer-2025"
    assert co_mention_context("mem-1") == "co_mention:mem-1"
