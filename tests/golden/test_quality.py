"""The compiled wiki's quality on a slice of the sample with hostile lines: exact provenance, no repeated
lines, safe bodies, and the same rows after compiling again and after `wiki rebuild`.

The figures are `tests.golden.quality.measure`, which `python -m tests.golden.quality` prints for the
whole 700-memory sample.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from domain.memory import MemoryIn
from store.memories import store_memories
from tests.compile.helpers import retain_sample, test_settings
from tests.golden.dump import first_difference
from tests.golden.quality import compile_again_and_rebuild, measure

TENANT, OWNER = "quality", "alice"
SAMPLE = 250
HOSTILE_DAY = datetime(2026, 10, 2, 19, 0, tzinfo=UTC)


def hostile(n: int, content: str, name: str = "Odd Duck") -> MemoryIn:
    place = {"name": name, "city": "Austin", "address": "1201 S Lamar Blvd, Austin, TX 78704, USA"}
    return MemoryIn(content=content, occurred_at=HOSTILE_DAY + timedelta(days=n),
                    metadata={"entities": [{"name": name, "type": "entity", "kind": "restaurant"}], "place": place})


HOSTILE = [
    hostile(0, "<script>alert('x')</script> Dinner at Odd Duck; see [the menu](https://evil.example/menu)."),
    hostile(1, "Dinner at Odd Duck. ![pixel](https://evil.example/p.png) <img src=x onerror=alert(1)>"),
    hostile(2, "Dinner at Odd Duck.", name="ODD DUCK"),
    hostile(3, "Lunch at <b>Odd Duck</b>, booked on www.evil.example.", name="<b>Odd Duck</b>"),
]


async def test_the_wiki_is_exact_safe_and_rebuilt_identically(client, engine) -> None:
    settings = test_settings()
    await retain_sample(engine, TENANT, OWNER, SAMPLE)
    await store_memories(engine, TENANT, OWNER, HOSTILE)
    first, again, rebuilt = await compile_again_and_rebuild(client, engine, settings, TENANT, OWNER)

    assert first_difference(first, again) is None, "compiling again changed the wiki"
    assert first_difference(first, rebuilt) is None, "the rebuild differs from the first compile"
    figures = measure(first)
    assert figures["archived_pages"] == 0 and figures["oversize_pages"] == 0
    assert figures["repeated_lines"] == 0
    # Every memory with a name is cited by a section or held by an open mention; every citation is a
    # memory; every section cites something; rollups cite only their members' memories.
    assert figures["memories_uncited"] == 0
    assert figures["memories_cited"] + figures["memories_held_open"] + figures["memories_without_hints"] \
        == SAMPLE + len(HOSTILE)
    assert figures["sources_not_a_memory"] == 0 and figures["sections_without_sources"] == 0
    assert figures["rollup_sources_of_non_members"] == 0
    assert figures["condensed_counts_off"] == 0  # each condensed section says how many memories it cites
    assert figures["raw_html_bodies"] == 0 and figures["links_outside_wiki"] == 0
    assert figures["web_addresses_in_bodies"] == 0
    assert figures["retain_dates_in_bodies"] == 0

    [odd_duck] = [page for page in first["pages"] if page["slug"] == "odd-duck"]
    assert odd_duck["title"] == "Odd Duck"  # the best-attested spelling, not "ODD DUCK"
    assert "&lt;script>" in odd_duck["body_md"] and "<script" not in odd_duck["body_md"]
    assert "evil.example" not in odd_duck["body_md"]  # the address stays in the memory, not on the page
    assert all("<" not in page["title"].replace("&lt;", "") for page in first["pages"])
    notes = next(s for s in first["sections"] if s["page_id"] == odd_duck["id"] and s["section_slug"] == "notes")
    cited = {source["source_ref"] for source in first["sources"] if source["section_id"] == notes["id"]}
    hostile_ids = {m["id"] for m in first["memories"] if m["content"] in {h.content for h in HOSTILE[:3]}}
    assert hostile_ids <= cited
