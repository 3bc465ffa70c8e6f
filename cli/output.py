"""What commands print: the console, tables, JSON, and where a workflow can be watched."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from pydantic_core import to_jsonable_python
from rich.console import Console
from rich.table import Table

from runtime.devservices import DevTemporal
from runtime.settings import Settings

# Consoles resolve sys.stdout / sys.stderr at each print, so CliRunner's captured streams work.
out = Console(highlight=False, markup=False, emoji=False)


def table(title: str, columns: Iterable[str], rows: Iterable[Iterable[Any]]) -> Table:
    result = Table(title=title, title_justify="left")
    for column in columns:
        result.add_column(column, overflow="fold")  # URLs and paths shown whole, never cut
    for row in rows:
        result.add_row(*(str(cell) for cell in row))
    return result


def print_json(data: Any) -> None:
    """Machine-readable output on stdout, whole (never wrapped by the console)."""
    if dataclasses.is_dataclass(data) and not isinstance(data, type):
        data = dataclasses.asdict(data)
    elif isinstance(data, list):
        data = [dataclasses.asdict(item) if dataclasses.is_dataclass(item) else item for item in data]
    sys.stdout.write(json.dumps(to_jsonable_python(data), indent=2, ensure_ascii=False) + "\n")


def workflow_ui_url(settings: Settings, workflow_id: str) -> str | None:
    """The workflow's page in the embedded Temporal UI; None for an external cluster (its UI is unknown)."""
    if settings.temporal_address:
        return None
    base = DevTemporal.from_settings(settings).ui_url
    return f"{base}/namespaces/{quote(settings.temporal_namespace, safe='')}/workflows/{quote(workflow_id, safe=':@')}"


def print_workflow_location(settings: Settings, workflow_id: str) -> None:
    url = workflow_ui_url(settings, workflow_id)
    if url:
        out.print(f"Temporal UI: {url}", soft_wrap=True)
    else:
        out.print(f"Temporal UI: workflow {workflow_id} in namespace {settings.temporal_namespace} "
                  "(open it in your cluster's Web UI)", soft_wrap=True)
