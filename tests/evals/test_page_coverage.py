"""The page-coverage measure (evals/page_coverage.py) on a hand-made snapshot."""

from __future__ import annotations

from evals.page_coverage import coverage
from evals.snapshot import Page, Section, Snapshot


def _page(title: str, body: str, sources: list[str], status: str = "active") -> Page:
    return Page(id=title, type="entity", slug=title.lower(), title=title, summary="A person.", body_md=body,
                status=status, parent_page_id=None,
                sections=[Section(id=f"{title}-notes", slug="notes", heading="Notes", body_md=body, sources=sources)])


def test_a_memory_is_said_only_by_an_active_page_that_cites_it_and_holds_half_its_content_words() -> None:
    memories = {"m1": "Ilse adopted a grey kitten named Pixel.", "m2": "Ilse repainted the garden fence blue.",
                "m3": "Ilse baked rye bread for the neighbours.", "m4": "Ilse visited the glacier museum."}
    snapshot = Snapshot(pages=[
        _page("Ilse", "- 2026-01-01: Ilse adopted a grey kitten named Pixel.\n- Baked rye bread.", ["m1", "m2"]),
        _page("Bread", "- Ilse baked rye bread for the neighbours.", []),  # says m3 but does not cite it
        _page("Museum", "- Ilse visited the glacier museum.", ["m4"], status="archived"),
    ], links=[], mentions=[])

    result = coverage("scope", "generated", memories, snapshot)

    assert (result.said, result.memories) == (1, 4)  # m1 only: m2's words are not on its page
    assert result.largest_section == len("- 2026-01-01: Ilse adopted a grey kitten named Pixel.\n- Baked rye bread.")
    assert result.sections_over_budget == 0
    assert result.wiki_chars == sum(len(p.summary or "") + len(p.sections[0].body_md) for p in snapshot.active())
