"""A newcomer's own memories, plain sentences with no `metadata.entities`, become pages offline: the
scripted planner reads the names from the text, `wiki search` finds their pages, each page cites the
memories that name it, and `wiki retain` says in one line what the offline planner did with them."""

from __future__ import annotations

import json
import uuid

import pytest

from tests.compile.helpers import running_worker
from tests.operators.cli import scope, wiki

pytestmark = pytest.mark.usefixtures("settings")

PLAIN_MEMORIES = [
    "Lunch at Franklin Barbecue with Lena: brisket again.",
    "Lena and Marco flew to Kyoto for the Gion Festival.",
    "Walked around Kyoto with Marco; the temples were quiet in the rain.",
    "Dinner with Priya at Uchi in Austin, the omakase was worth it.",
    "Priya said Uchi has the best sushi in Austin.",
    "Swam at Barton Springs Pool with Lena before work.",
    "Barton Springs Pool was freezing, and Marco refused to get in.",
    "Met Dr. Patel on Webster St about my knee.",
    "Follow-up with Dr. Patel: the knee is healing well.",
    "Picked up brisket at Franklin Barbecue for Priya's birthday.",
]
# What each name's page must be found by, and the memories (by position) that name it.
EXPECTED = {
    "Franklin Barbecue": [0, 9], "Lena": [0, 1, 5], "Marco": [1, 2, 6], "Kyoto": [1, 2], "Priya": [3, 4, 9],
    "Uchi": [3, 4], "Austin": [3, 4], "Barton Springs Pool": [5, 6], "Dr. Patel": [7, 8],
}


async def test_ten_plain_memories_give_cited_pages_found_by_search(settings, client, engine, tmp_path):
    ids = [str(uuid.uuid4()) for _ in PLAIN_MEMORIES]
    lines = [json.dumps({"id": i, "content": text, "occurred_at": f"2026-10-{n + 1:02d}T12:00:00Z"})
             for n, (i, text) in enumerate(zip(ids, PLAIN_MEMORIES, strict=True))]
    async with running_worker(client, engine, settings):
        retained = await wiki("retain", *scope("plain"), "-", stdin="\n".join(lines) + "\n")
        assert retained.exit_code == 0, retained.output
        note = [line for line in retained.stdout.splitlines() if "metadata.entities" in line]
        assert len(note) == 1 and note[0].startswith("10 of 10 memories list no metadata.entities: the "
                                                     "offline planner read "), retained.stdout
        compiled = await wiki("compile", *scope("plain"))
        assert compiled.exit_code == 0, compiled.output
        # The scripted planner costs nothing: no dollar figure, no token estimate passed off as a cost.
        assert "scripted, no model cost" in compiled.stdout
        assert "$" not in compiled.stdout and "cost_usd" not in compiled.stdout and "tokens" not in compiled.stdout
        status = await wiki("status", *scope("plain"))
        assert status.exit_code == 0 and "scripted" in status.stdout and "$" not in status.stdout, status.output

    for name, positions in EXPECTED.items():
        found = await wiki("search", name, *scope("plain"), "--json")
        assert found.exit_code == 0, found.output
        hits = json.loads(found.stdout)
        page = next((h for h in hits if h["title"] == name), None)
        assert page is not None, f"no page titled {name!r}: {[h['title'] for h in hits]}"
        shown = await wiki("page", "show", f"{page['type']}/{page['slug']}", *scope("plain"), "--sources",
                           "--json")
        assert shown.exit_code == 0, shown.output
        cited = {source["id"] for sources in json.loads(shown.stdout)["sources"].values() for source in sources}
        assert {ids[p] for p in positions} <= cited, f"{name} cites {cited}"

    # Names seen once are held, and listed with their counts.
    held = await wiki("mention", "list", *scope("plain"), "--json")
    assert held.exit_code == 0, held.output
    listed = json.loads(held.stdout)
    assert listed["open"] == len(listed["mentions"]) >= 1
    assert all(m["mention_count"] >= 1 and m["quote"] for m in listed["mentions"])
    assert "Gion Festival" in {m["alias"] for m in listed["mentions"]}
    text = await wiki("mention", "list", *scope("plain"))
    assert "Gion Festival" in text.stdout and "open; a name seen 3 times" in text.stdout, text.output
    assert "no open mention in nobody/alice" in (await wiki("mention", "list", *scope("nobody"))).stdout

    # The walkthrough's own memory is cited by a page, as `wiki memory pages` shows.
    citing = await wiki("memory", "pages", ids[0], *scope("plain"), "--json")
    assert citing.exit_code == 0 and json.loads(citing.stdout), citing.output


async def test_retain_says_when_plain_memories_name_nothing_it_can_read(settings):
    retained = await wiki("retain", *scope("plainnone"), "--no-compile", "-",
                          stdin=json.dumps({"content": "slept badly, long day at work."}) + "\n")
    assert retained.exit_code == 0, retained.output
    assert "1 of 1 memories list no metadata.entities and name nothing the offline planner can read" \
        in retained.stdout


async def test_retain_says_nothing_when_every_memory_lists_its_entities(settings):
    memory = {"content": "Lunch.", "metadata": {"entities": [{"name": "Lena", "type": "entity", "kind": "person"}]}}
    retained = await wiki("retain", *scope("plainall"), "--no-compile", "-", stdin=json.dumps(memory) + "\n")
    assert retained.exit_code == 0 and "metadata.entities" not in retained.stdout, retained.output
