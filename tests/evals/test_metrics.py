"""The eval's scoring, on hand-made snapshots: what counts as a duplicate, a wrong merge, a miss."""

from __future__ import annotations

import uuid

from evals.corpus import Mention, TenantCorpus, Thing, TruthMemory
from evals.metrics import score
from evals.snapshot import Page, Section, Snapshot, rows_for_identity

M1, M2, M3 = (uuid.UUID(int=n) for n in (1, 2, 3))


def corpus() -> TenantCorpus:
    uchi = Thing(key="venue:uchi", type="entity", kind="restaurant", name="Uchi", variants=[("Uchi (Austin)", "qualifier")])
    uchiko = Thing(key="venue:uchiko", type="entity", kind="restaurant", name="Uchiko")
    truth = [
        TruthMemory(id=M1, mentions=[Mention(thing=uchi.key, written="Uchi", variant="canonical")], supports=[uchi.key]),
        TruthMemory(id=M2, mentions=[Mention(thing=uchi.key, written="Uchi (Austin)", variant="qualifier")],
                    supports=[uchi.key]),
        TruthMemory(id=M3, mentions=[Mention(thing=uchiko.key, written="Uchiko", variant="canonical")],
                    supports=[uchiko.key]),
    ]
    return TenantCorpus(tenant="t", owner="o", memories=[{}, {}, {}], truth=truth,
                        things={uchi.key: uchi, uchiko.key: uchiko},
                        must_not_merge=[(uchi.key, uchiko.key)], secret="sk-t")


def page(title: str, aliases: list[str], refs: list[uuid.UUID], body: str = "- a line") -> Page:
    return Page(id=str(uuid.uuid4()), type="entity", slug=title.lower(), title=title, summary=None, body_md="",
                status="active", parent_page_id=None, aliases=aliases,
                sections=[Section(id=str(uuid.uuid4()), slug="notes", heading="Notes", body_md=body,
                                  sources=[str(r) for r in refs])])


def test_a_variant_on_its_own_page_is_a_duplicate_and_a_miss() -> None:
    snapshot = Snapshot(pages=[page("Uchi", ["uchi"], [M1]), page("Uchi (Austin)", ["uchi austin"], [M2]),
                               page("Uchiko", ["uchiko"], [M3])], links=[], mentions=[])
    m = score(corpus(), snapshot, other_secrets=[])
    assert m.duplicate_pairs == 1 and m.wrong_merges == 0
    assert (m.merge_recall.hits, m.merge_recall.total) == (0, 1)
    assert m.provenance["entity"].precision.value == 1.0 and m.provenance["entity"].recall.value == 1.0


def test_one_page_for_two_things_is_a_wrong_merge_and_leaks_are_counted() -> None:
    snapshot = Snapshot(pages=[page("Uchi", ["uchi", "uchi austin", "uchiko"], [M1, M2, M3],
                                    body="- same line\n- same line\n<script>x</script> sk-other [a](https://x.example)")],
                        links=[], mentions=[])
    m = score(corpus(), snapshot, other_secrets=["sk-other"])
    assert m.wrong_merges == 1 and m.must_not_merge_violations
    assert m.repeated_lines == 1 and m.raw_html_sections == 1 and m.outside_links == 1 and m.secret_leaks == 1


def test_identity_rows_ignore_archived_pages() -> None:
    live, archived = page("Uchi", ["uchi"], [M1]), page("Old", ["old"], [M2])
    archived.status = "archived"
    assert rows_for_identity(Snapshot(pages=[live, archived], links=[], mentions=[])) == \
        rows_for_identity(Snapshot(pages=[live], links=[], mentions=[]))


def test_a_share_of_nothing_reads_as_the_figure_the_eval_chose():
    from evals.metrics import share

    assert share(3, 4, 1.0) == 0.75
    assert share(0, 0, 1.0) == 1.0 and share(5, 0, 0.0) == 0.0 and share(0, 0, None) is None
