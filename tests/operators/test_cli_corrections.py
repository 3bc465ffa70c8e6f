"""The corrections and the facts' options of the `wiki` CLI: what they print, and their bad input as
one error line with nothing changed."""

from __future__ import annotations

import json

import pytest

from tests.operators import helpers as db
from tests.operators.cli import one_error_line, scope, wiki

TENANT = "correctcli"


async def test_each_correction_command_says_what_it_did_and_scope_show_lists_them(settings, engine):
    page = await db.page(engine, TENANT, "alice", "alexandra-reyes", title="Alexandra Reyes")
    await db.alias(engine, page, "alex")
    for args, said in [
        (["alias", "add", "Alexandra Reyes", "Lexi"], "entity/alexandra-reyes has the alias 'lexi'"),
        (["alias", "remove", "entity/alexandra-reyes", "Alex"], "no longer has the alias 'alex'"),
        (["mention", "ignore", "Zorblax"], "'zorblax' is ignored (0 open mention(s) closed)"),
        (["page", "keep-section", "entity/alexandra-reyes", "notes"], "section 'notes' of entity/alexandra-reyes "
                                                                       "stays on its page"),
        (["scope", "pause"], f"{TENANT}/alice paused"),
        (["links", "rollback", "--deterministic"], "dropped 0 deterministic and co-mention link(s)"),
    ]:
        result = await wiki(*args, *scope(TENANT))
        assert result.exit_code == 0, (args, result.output)
        assert said in result.stdout, (args, result.stdout)
    shown = json.loads((await wiki("scope", "show", "--json", *scope(TENANT))).stdout)
    assert shown == {"paused": True, "deterministic_links_off": True,
                     "aliases_added": ["entity/alexandra-reyes: lexi"],
                     "aliases_removed": ["entity/alexandra-reyes: alex"], "ignored_names": ["Zorblax"],
                     "blocked_sections": ["entity/alexandra-reyes#notes"]}


@pytest.mark.parametrize(("args", "code", "message"), [
    (["alias", "add", "entity/nobody", "N"], 1, "no page entity/nobody in this wiki (correctcli/alice)"),
    (["alias", "add", "Nobody", "N"], 1, "no page named 'Nobody'"),
    (["alias", "add", "entity/nobody", "..."], 2, "alias must contain a letter or digit"),
    (["alias", "remove", "entity/nobody", " "], 2, "alias must not be empty"),
    (["mention", "ignore", "x" * 300], 2, "name must be at most 200 characters"),
    (["page", "keep-section", "entity/nobody", "notes"], 1, "no page entity/nobody"),
    (["links", "rollback"], 2, "say which links: --deterministic"),
    (["page", "show", "entity/nobody", "--as-of", "last week"], 2, "as_of must be an ISO 8601 date-time"),
])
async def test_bad_corrections_are_one_error_line_and_change_nothing(settings, args, code, message):
    one_error_line(await wiki(*args, *scope(TENANT)), code, message)
    shown = json.loads((await wiki("scope", "show", "--json", *scope(TENANT))).stdout)
    assert not any(shown.values())
