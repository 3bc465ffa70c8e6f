"""The merge judge through the real anthropic SDK (only the HTTP transport is faked): one forced-tool
call for a batch's ambiguous pairs, its decisions applied by the resolver and counted in the ledger."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from tests.compile.helpers import compile_scope, ledger, ledger_total
from tests.compile.test_model_path import (
    OWNER,
    TENANT,
    FakeMessagesApi,
    Prompt,
    empty_plan,
    model_worker,
    plan_reply,
    retain_days,
)


def lisbon_in_portugal(prompt: Prompt) -> dict[str, Any]:
    """A plan that proposes "Lisbon, Portugal" as a new page, beside the Lisbon page of batch one."""
    ids = prompt.memory_ids
    return empty_plan(newPages=[{
        "type": "entity", "slug": "lisbon-portugal", "title": "Lisbon, Portugal", "summary": "A city in Portugal.",
        "source_refs": ids,
        "sections": [{"slug": "overview", "heading": "Overview", "body_md": "Sardines again.", "source_refs": ids}]}])


def judged_same(prompt: Prompt) -> dict[str, Any]:
    assert "Lisbon, Portugal" in prompt.text and '"Lisbon"' in prompt.text
    assert "### Pair p1" in prompt.text and "### Pair p2" not in prompt.text
    return {"decisions": [{"pair": "p1", "same": True, "reason": "the same city"},
                          {"pair": "p9", "same": True, "reason": "a pair the prompt never had"}]}


async def test_the_model_judges_a_qualified_name_into_the_page_it_names(client, engine):
    api = FakeMessagesApi()
    api.planner.extend([api.default_planner, plan_reply(lisbon_in_portugal)])
    api.judge.append(plan_reply(judged_same))
    async with model_worker(client, engine, api, WIKI_RECORD_PAGE_SIZE=3) as settings:
        await retain_days(engine, 3)
        await compile_scope(client, settings, TENANT, OWNER)
        await retain_days(engine, 6)  # the same three days again (unchanged) and three new ones
        await compile_scope(client, settings, TENANT, OWNER)

    async with engine.connect() as conn:
        pages = (await conn.execute(text("SELECT slug FROM wiki_pages WHERE tenant_id = :t"), {"t": TENANT})).all()
        aliases = {row.alias for row in await conn.execute(text(
            "SELECT a.alias FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id WHERE p.tenant_id = :t"),
            {"t": TENANT})}
    assert [row.slug for row in pages] == ["lisbon"]
    assert "lisbon portugal" in aliases
    assert len(api.of_kind("judge")) == 1
    rows = await ledger(engine, TENANT, OWNER)
    assert ledger_total(rows, "merge_questions") == 1 and ledger_total(rows, "judged_merges") == 1
    assert ledger_total(rows, "merge_judge_calls") == 1
