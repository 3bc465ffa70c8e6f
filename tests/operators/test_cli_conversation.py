"""`wiki retain --conversation FILE`: a conversation's messages stored as turns, once, all or nothing;
every problem one line on stderr, exit 2, nothing stored."""

from __future__ import annotations

import json
from pathlib import Path

from tests.operators import helpers as db
from tests.operators.cli import one_error_line, scope, wiki
from tests.servers.test_conversations import CONVERSATION


async def _turns(engine, tenant: str) -> list:
    return await db.rows(engine, "SELECT position FROM memory_units WHERE tenant_id = :t", t=tenant)


async def test_the_cli_reads_a_conversation_file_and_says_what_is_wrong_in_one_line(settings, engine, tmp_path: Path):
    good = tmp_path / "chat.json"
    good.write_text(json.dumps(CONVERSATION))
    stored = await wiki("retain", *scope("talk-cli"), "--conversation", str(good), "--no-compile")
    assert stored.exit_code == 0, stored.output
    assert "4 inserted" in stored.stdout and "conversation chat-1: 4 turns" in stored.stdout
    assert "0 inserted, 0 updated, 4 unchanged" in (await wiki("retain", *scope("talk-cli"), "--conversation",
                                                               str(good), "--no-compile")).stdout
    for text, starts in [
        ("{not json", f"{good.parent / 'bad.json'}: malformed JSON"),
        (json.dumps({**CONVERSATION, "messages": [{"speaker": "user", "text": "x", "time": "soon"}]}),
         f"{good.parent / 'bad.json'}: messages[0].time: time must be an ISO 8601"),
    ]:
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        one_error_line(await wiki("retain", *scope("talk-cli"), "--conversation", str(bad), "--no-compile"), 2, starts)
    renamed = tmp_path / "renamed.json"
    renamed.write_text(json.dumps({**CONVERSATION, "id": "chat-2", "user": "Mel"}))
    one_error_line(await wiki("retain", *scope("talk-cli"), "--conversation", str(renamed), "--no-compile"), 2,
                   "this wiki's user is named 'Priya'")
    one_error_line(await wiki("retain", *scope("talk-cli"), "--no-compile"), 2, "give a JSONL file of memories")
    assert len(await _turns(engine, "talk-cli")) == 4


