"""The merge judge through the real anthropic SDK against the Claude simulator: one forced-tool call
for a batch's ambiguous pairs, its decisions applied by the resolver and counted in the ledger."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from tests.compile.helpers import compile_scope, ledger, ledger_total
from tests.compile.test_model_path import OWNER, TENANT, model_worker, retain_trip
from tests.sim_helpers import shown


def lisbon(user: str) -> dict[str, Any]:
    handles = [f"m{i + 1}" for i in range(len(shown(user).memories))]
    return {"pageUpdates": [], "unresolvedMentions": [], "promotions": [], "pageLinks": [], "newPages": [{
        "type": "entity", "slug": "lisbon", "title": "Lisbon", "summary": "A city in Portugal.",
        "source_refs": handles,
        "sections": [{"slug": "overview", "heading": "Overview", "body_md": "Trams.", "source_refs": handles}]}]}


def lisbon_in_portugal(user: str) -> dict[str, Any]:
    """A plan that proposes "Lisbon, Portugal" as a new page, beside the Lisbon page of batch one."""
    handles = [f"m{i + 1}" for i in range(len(shown(user).memories))]
    return {"pageUpdates": [], "unresolvedMentions": [], "promotions": [], "pageLinks": [], "newPages": [{
        "type": "entity", "slug": "lisbon-portugal", "title": "Lisbon, Portugal", "summary": "A city in Portugal.",
        "source_refs": handles,
        "sections": [{"slug": "overview", "heading": "Overview", "body_md": "Sardines again.",
                      "source_refs": handles}]}]}


def judged_same(user: str) -> dict[str, Any]:
    assert "Lisbon, Portugal" in user and '"Lisbon"' in user
    assert "### Pair p1" in user and "### Pair p2" not in user
    return {"decisions": [{"pair": "p1", "same": True, "reason": "the same city"},
                          {"pair": "p9", "same": True, "reason": "a pair the prompt never had"}]}


async def test_the_model_judges_a_qualified_name_into_the_page_it_names(client, engine, sim):
    sim.answer_next("planner", lisbon)
    sim.answer_next("planner", lisbon_in_portugal)
    sim.answer_next("judge", judged_same)
    async with model_worker(client, engine, "anthropic", WIKI_RECORD_PAGE_SIZE=3) as settings:
        await retain_trip(engine, 3)
        await compile_scope(client, settings, TENANT, OWNER)
        await retain_trip(engine, 6)
        await compile_scope(client, settings, TENANT, OWNER)

    async with engine.connect() as conn:
        pages = (await conn.execute(text("SELECT slug FROM wiki_pages WHERE tenant_id = :t"), {"t": TENANT})).all()
        aliases = {row.alias for row in await conn.execute(text(
            "SELECT a.alias FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id WHERE p.tenant_id = :t"),
            {"t": TENANT})}
    assert [row.slug for row in pages] == ["lisbon"]
    assert "lisbon portugal" in aliases
    assert len(sim.of_kind("judge")) == 1
    rows = await ledger(engine, TENANT, OWNER)
    assert ledger_total(rows, "merge_questions") == 1 and ledger_total(rows, "judged_merges") == 1
    assert ledger_total(rows, "merge_judge_calls") == 1
