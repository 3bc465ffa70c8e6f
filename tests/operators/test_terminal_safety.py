"""The CLI never writes a control character that came from data: a page stored with an ESC sequence
in its title (as text written under an older rule would be) is shown with U+FFFD in its place, in
tables, in markdown, in JSON and in errors."""

from __future__ import annotations

import io
import json
import re

from rich.table import Table

from cli.output import SafeConsole, print_json, table
from tests.operators import helpers as db
from tests.test_cli import cli_env, wiki  # noqa: F401 - the CLI tests' environment fixture

RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
EVIL = "Evil\x1b[2J\x1b]0;owned\x07 Corp\x9b31m\u202e"


async def test_no_command_prints_a_control_character_from_a_page(cli_env, engine):  # noqa: F811
    page_id = await db.page(engine, "t1", "alice", "evil-corp", title=EVIL, summary=f"About {EVIL}",
                            body=f"{EVIL} makes things.")
    await db.section(engine, page_id, "overview", f"{EVIL} is a company.", 1)
    outputs = []
    for args in (["search", "evil", "--tenant", "t1", "--owner", "alice"],
                 ["page", "list", "--tenant", "t1", "--owner", "alice"],
                 ["page", "show", "entity/evil-corp", "--tenant", "t1", "--owner", "alice"],
                 ["page", "show", "entity/evil-corp", "--tenant", "t1", "--owner", "alice", "--json"],
                 ["page", "show", f"entity/{EVIL}", "--tenant", "t1", "--owner", "alice"]):
        result = await wiki(*args)
        outputs.append((args, result.stdout + result.stderr))
    for args, output in outputs:
        stripped = output.replace("\n", "").replace("\t", "")
        assert not RAW_CONTROL.search(stripped), (args, output)
    assert any("Evil\ufffd[2J" in output for _, output in outputs)
    as_json = json.loads(outputs[3][1])
    assert as_json["title"] == EVIL  # JSON keeps the value, escaped


def test_console_tables_and_json_escape_controls(capsys):
    buffer = io.StringIO()
    console = SafeConsole(file=buffer, width=80, color_system=None, highlight=False, markup=False)
    console.print(EVIL)
    console.print(table("t", ["name"], [[EVIL]]))
    raw = Table("name")
    raw.add_row(EVIL)  # a table built without the helper is still written safely
    console.print(raw)
    assert not RAW_CONTROL.search(buffer.getvalue().replace("\n", ""))
    print_json({"title": EVIL})
    printed = capsys.readouterr().out
    assert not RAW_CONTROL.search(printed.replace("\n", "")) and json.loads(printed)["title"] == EVIL
