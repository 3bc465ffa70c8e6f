"""What commands print: the console, tables that fit the terminal, JSON, and where a workflow can be watched."""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal
from urllib.parse import quote

import typer
from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.segment import Segment
from rich.table import Table

if TYPE_CHECKING:  # imported where used: `wiki --help` and every command print through this module
    from runtime.settings import Settings

# Memory text, names and titles are untrusted: C0/C1 controls and bidirectional overrides could rewrite
# the terminal (an ESC sequence) or reorder what a reader sees. Tabs and newlines are kept.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def safe_text(value: str) -> str:
    """`value` with control and direction-override characters shown as U+FFFD; tabs and newlines kept."""
    return _UNSAFE.sub("\ufffd", value)


class SafeConsole(Console):
    """A console that never writes a control character it was given: whatever a command prints (a
    string, a table, a panel), the text of every segment is passed through `safe_text`. The console's
    own styling codes are separate control segments and pass unchanged."""

    def render(self, renderable, options=None):
        for segment in super().render(renderable, options):
            if segment.control is None and _UNSAFE.search(segment.text):
                yield Segment(safe_text(segment.text), segment.style)
            else:
                yield segment


# Consoles resolve sys.stdout / sys.stderr at each print, so CliRunner's captured streams work.
out = SafeConsole(highlight=False, markup=False, emoji=False)


def write_text(text: str) -> None:
    """Plain text on stdout as it is (no wrapping), control characters shown as U+FFFD."""
    sys.stdout.write(safe_text(text))

# `--wide`: lines as long as their content, for a wide terminal or a pipe into another tool.
WIDE_COLUMNS = 4096
# A wrapping column never gets narrower than its longest word, up to this many characters (a longer
# word is elided with "…" rather than cut across lines).
TEXT_MIN_CAP = 18
# When even that does not fit, identifying columns are elided down to this width, widest first.
KEY_MIN_WIDTH = 10


def set_wide(wide: bool) -> None:
    """Tables and lines as wide as their content (`--wide`), or as wide as the terminal."""
    # None: the terminal's width, or $COLUMNS, or 80 (Rich accepts it; its setter is annotated `int`).
    out.width = WIDE_COLUMNS if wide else None  # type: ignore[assignment]


def _wide_callback(value: bool) -> bool:
    set_wide(value)
    return value


WideOption = Annotated[bool, typer.Option("--wide", help="Do not fit tables to the terminal: every cell whole.",
                                          callback=_wide_callback)]


@dataclass(frozen=True)
class Col:
    """A table column.

    - key: an identifier (slug, scope, status): never wrapped; elided with "…" only as a last resort.
    - text: prose (titles, contexts, errors): wrapped between words, never inside one.
    - num: a number, right-aligned, never wrapped.
    """

    header: str
    kind: Literal["key", "text", "num"] = "text"


def _lines(value: str) -> list[str]:
    return value.split("\n") if value else [""]


def _natural(header: str, cells: list[str]) -> int:
    return max(cell_len(line) for value in [header, *cells] for line in _lines(value))


def _longest_word(header: str, cells: list[str]) -> int:
    words = [word for value in [header, *cells] for word in value.split()]
    return max((cell_len(word) for word in words), default=1)


def _fitted_widths(columns: Sequence[Col], cells: list[list[str]], room: int) -> list[int] | None:
    """Content widths that fit `room`, or None when every column fits at its natural width.

    Prose columns give way first (down to their longest word, capped); identifiers only when that is
    not enough, widest first and never below KEY_MIN_WIDTH.
    """
    natural = [_natural(spec.header, cells[i]) for i, spec in enumerate(columns)]
    if sum(natural) <= room:
        return None
    widths = list(natural)
    minimum = [min(natural[i], TEXT_MIN_CAP, _longest_word(spec.header, cells[i])) if spec.kind == "text"
               else natural[i] for i, spec in enumerate(columns)]
    text = [i for i, c in enumerate(columns) if c.kind == "text"]
    excess = sum(widths) - room
    # Prose: take from the widest prose column, one character at a time, while any can give.
    while excess > 0:
        candidates = [i for i in text if widths[i] > minimum[i]]
        if not candidates:
            break
        widest = max(candidates, key=lambda i: widths[i])
        widths[widest] -= 1
        excess -= 1
    keys = [i for i, c in enumerate(columns) if c.kind == "key"]
    while excess > 0:
        candidates = [i for i in keys if widths[i] > KEY_MIN_WIDTH]
        if not candidates:
            break
        widest = max(candidates, key=lambda i: widths[i])
        widths[widest] -= 1
        excess -= 1
    return widths


def table(title: str, columns: Iterable[str | Col], rows: Iterable[Iterable[Any]], *, boxed: bool = True,
          width: int | None = None) -> Table:
    """A table that fits the console's width (or `width`) without cutting a word across lines."""
    specs = [c if isinstance(c, Col) else Col(c) for c in columns]
    body = [[safe_text(str(cell)) for cell in row] for row in rows]
    cells = [[row[i] for row in body] for i in range(len(specs))]
    if boxed:
        result = Table(title=title, title_justify="left")
        overhead = 3 * len(specs) + 1  # a border and a space of padding on each side of every cell
    else:
        result = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        overhead = 3 * (len(specs) - 1)  # a separator and its padding between columns
    fitted = _fitted_widths(specs, cells, (width or out.width) - overhead)
    for index, spec in enumerate(specs):
        result.add_column(spec.header, no_wrap=spec.kind != "text", overflow="ellipsis",
                          justify="right" if spec.kind == "num" else "left",
                          width=fitted[index] if fitted else None)
    for row in body:
        result.add_row(*row)
    return result


def first_line(value: str, limit: int = 100) -> str:
    """The first non-blank line of `value`, spaces collapsed, cut at a word boundary with "…" if long."""
    line = next((line for line in value.splitlines() if line.strip()), "")
    line = " ".join(safe_text(line).split())
    if len(line) <= limit:
        return line
    cut = line[:limit].rsplit(" ", 1)[0] if " " in line[:limit] else line[:limit]
    return cut.rstrip(" ,;:.") + "…"


SCRIPTED_COST = "scripted, no model cost"
# What a run's metrics say only of model calls: with the scripted planner they are estimates of what
# Claude would have cost, not costs.
MODEL_ONLY_METRICS = ("cost_usd", "input_tokens", "output_tokens", "cache_creation_input_tokens",
                      "cache_read_tokens", "aggregation_input_tokens", "aggregation_output_tokens",
                      "aggregation_cost_usd")


UNPRICED_COST = "$0 (no price set for the model server: WIKI_LLM_PRICE_INPUT_PER_MTOK)"


def cost_text(cost_usd: float, settings: Settings) -> str:
    """A run's cost as the operator should read it: dollars for model calls, none for the scripted planner,
    and for a model server without a price, that no price was set (its tokens are still counted)."""
    if settings.llm == "scripted":
        return SCRIPTED_COST
    if settings.llm == "openai-compatible" and not (settings.llm_price_input_per_mtok or
                                                    settings.llm_price_output_per_mtok):
        return UNPRICED_COST
    return f"${cost_usd:.4f}"


def print_json(data: Any) -> None:
    """Machine-readable output on stdout, whole (never wrapped by the console)."""
    from pydantic_core import to_jsonable_python

    if dataclasses.is_dataclass(data) and not isinstance(data, type):
        data = dataclasses.asdict(data)
    elif isinstance(data, list):
        data = [dataclasses.asdict(item) if dataclasses.is_dataclass(item) and not isinstance(item, type) else item
                for item in data]
    text = json.dumps(to_jsonable_python(data), indent=2, ensure_ascii=False)
    # json escapes C0 controls itself; C1 controls and direction overrides it writes raw (they are
    # valid JSON), so they are escaped here: the document is the same, the terminal is safe.
    sys.stdout.write(_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n")


def workflow_ui_url(settings: Settings, workflow_id: str) -> str | None:
    """The workflow's page in the embedded Temporal UI; None for an external cluster (its UI is unknown)."""
    if settings.temporal_address:
        return None
    from runtime.devservices import DevTemporal

    base = DevTemporal.from_settings(settings).ui_url
    return f"{base}/namespaces/{quote(settings.temporal_namespace, safe='')}/workflows/{quote(workflow_id, safe=':@')}"


def print_workflow_location(settings: Settings, workflow_id: str) -> None:
    url = workflow_ui_url(settings, workflow_id)
    if url:
        out.print(f"Temporal UI: {url}", soft_wrap=True)
    else:
        out.print(f"Temporal UI: workflow {workflow_id} in namespace {settings.temporal_namespace} "
                  "(open it in your cluster's Web UI)", soft_wrap=True)
