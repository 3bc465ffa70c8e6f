"""Every patch id the workflows pass to Temporal's `patched` or `deprecate_patch`, with the
release it came in and what runs of the release before it do.

The rule (docs/ARCHITECTURE.md, "Rolling out a workflow change"): a patch that comes in release N keeps both
branches in N, only `workflow.deprecate_patch(id)` and the new code in N + 1, and is gone, call and
entry, in N + 2. tests/test_release_rule.py holds the workflows, this table, CHANGELOG.md and
tests/histories/ to it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Patch:
    release: str  # the version in pyproject.toml when the patch came in
    old_branch: str  # what a run started on the release before it does, in words


# Empty at 0.1.0: the first release has one path through every workflow.
PATCHES: dict[str, Patch] = {}
