"""The whole leaf pass on the sample, against the real Temporal dev server and Postgres."""

from __future__ import annotations

from tests.compile.helpers import (
    compile_scope,
    ledger,
    ledger_total,
    retain_sample,
    running_worker,
    test_settings,
    wiki_snapshot,
)


async def test_sample_compiles_into_a_wiki(client, engine):
    settings = test_settings()
    await retain_sample(engine, "t1", "alice", 200)
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, "t1", "alice")
    snapshot = await wiki_snapshot(engine, "t1", "alice")
    rows = await ledger(engine, "t1", "alice")
    for row in rows:
        m = row["metrics"]
        print(row["status"], {k: m[k] for k in ("records_read", "pages_created", "sections_rewritten", "unresolved_upserted",
              "unresolved_promoted", "alias_dedup_merged", "fuzzy_dedupe_merges", "links_upserted",
              "links_written_deterministic", "links_written_co_mention", "sections_skipped", "dropped_invalid_ids")}, m.get("cap_hit"))
    print(len(snapshot["pages"]), len(snapshot["links"]), len(snapshot["mentions"]))
    assert ledger_total(rows, "records_read") == 200
