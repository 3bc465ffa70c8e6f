"""What is wrong with a model reply, said without a word of the reply.

A reply that fails validation is reported in an error message, which is logged by the worker and kept
in the workflow's history and sometimes the ledger; the reply may quote memories, so the message must
hold none of its text. Pydantic's own message shows the values it rejected (`input_value=…`) and a
validator's message may quote them too: `reply_problem` keeps only where the problem is (the field
path, with list positions) and its kind (`missing`, `string_type`, `value_error`, …). A path part
that is not a field name of the reply's model (a key the reply made up) is shown as `?`.
"""

from __future__ import annotations

import functools
import json
import typing
from typing import Any

from pydantic import BaseModel, ValidationError

MAX_PROBLEMS = 5


@functools.lru_cache(maxsize=256)
def field_names(model: type[BaseModel]) -> frozenset[str]:
    """The field names and aliases of `model` and of every model its fields hold, at any depth."""
    names: set[str] = set()
    seen: set[type] = set()
    stack: list[Any] = [model]
    while stack:
        current = stack.pop()
        if isinstance(current, type) and issubclass(current, BaseModel):
            if current in seen:
                continue
            seen.add(current)
            for name, info in current.model_fields.items():
                names.add(name)
                if info.alias:
                    names.add(info.alias)
                stack.append(info.annotation)
        else:
            stack.extend(typing.get_args(current))
    return frozenset(names)


def reply_problem(error: Exception, model: type[BaseModel] | None = None) -> str:
    """Where and how a reply failed to parse or validate, quoting none of it."""
    if isinstance(error, ValidationError):
        known = field_names(model) if model is not None else frozenset()
        items = error.errors(include_url=False, include_input=False, include_context=False)
        shown = [f"{'.'.join(_part(p, known) for p in item['loc']) or 'reply'}: {item['type']}"
                 for item in items[:MAX_PROBLEMS]]
        more = len(items) - len(shown)
        return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")
    if isinstance(error, json.JSONDecodeError):
        return f"invalid JSON at line {error.lineno} column {error.colno}"
    message = str(error)
    if message.startswith("model reply:"):  # domain/guards.py JsonResponseError: quotes nothing
        return message
    return type(error).__name__


def _part(part: object, known: frozenset[str]) -> str:
    if isinstance(part, int):
        return str(part)
    return str(part) if str(part) in known else "?"
