"""What tests script the Claude simulator with: the brain's reading of a leaf prompt and its plan,
for a request carrying the product's own system prompt and reply schema (a scripted answer gets
only the user message)."""

from __future__ import annotations

from typing import Any

from claude_sim import leaf_planning
from claude_sim.leaf_reading import LeafRequest, read_leaf
from planners.compact_plan import PLANNER_REPLY_SCHEMA
from planners.leaf_prompt import PLANNER_SYSTEM


def shown(user: str) -> LeafRequest:
    """What a leaf prompt shows, by handle, as the simulated model reads it."""
    return read_leaf(PLANNER_SYSTEM, user, PLANNER_REPLY_SCHEMA)


def leaf_plan(user: str) -> dict[str, Any]:
    """The simulated model's compact plan for a leaf prompt, its sections as objects."""
    return leaf_planning.plan(shown(user))
