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




async def test_memory_show_reads_a_turn_with_the_turns_around_it(settings, engine, tmp_path: Path):
    from domain.conversation import conversation_turns, parse_conversation

    talk = {"id": "long-chat", "messages": [{"speaker": "Ana" if i % 2 else "Ben", "text": f"Line {i} about Lisbon."}
                                            for i in range(12)]}
    file = tmp_path / "long.json"
    file.write_text(json.dumps(talk))
    assert (await wiki("retain", *scope("talk-show"), "--conversation", str(file), "--no-compile")).exit_code == 0
    turns = conversation_turns(parse_conversation(talk), None)
    middle = turns[6].resolved_id("talk-show", "alice")
    shown = await wiki("memory", "show", str(middle), *scope("talk-show"))
    assert shown.exit_code == 0, shown.output
    assert "In conversation long-chat, turn 6" in shown.stdout
    around = [line for line in shown.stdout.splitlines() if line[:1] in "> " and ". " in line and "Line" in line]
    assert [line.split(".")[0].strip(" >") for line in around] == ["3", "4", "5", "6", "7", "8", "9"]
    assert "> 6. Ana: Line 6 about Lisbon." not in shown.stdout and "> 6. Ben: Line 6 about Lisbon." in shown.stdout
    first = await wiki("memory", "show", str(turns[0].resolved_id("talk-show", "alice")), *scope("talk-show"),
                       "--json")
    payload = json.loads(first.stdout)
    assert [t["position"] for t in payload["around"]] == [0, 1, 2, 3] and payload["around"][0]["this"]
