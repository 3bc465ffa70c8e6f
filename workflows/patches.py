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


PATCHES: dict[str, Patch] = {
    "forget": Patch(release="0.2.0", old_branch="no forget step: a run never serves forget or edit requests "
                    "(a 0.1.0 run is never woken with `forget`, so it never reaches the call)"),
    "batched_model_calls": Patch(release="0.2.0", old_branch="a bulk compile's section writer, aggregation "
                                 "planner and merge judge calls stay interactive (only its leaf plans go "
                                 "through Message Batches)"),
    "forget_everywhere": Patch(release="0.2.0", old_branch="a forget waits for a Message Batch in progress, "
                               "and leaves the scope's batches at the provider"),
    "writer_window": Patch(release="0.2.0", old_branch="a batch keeps up to section_writer_concurrency section "
                           "writes in flight, whatever its worker runs at once (no compile.worker_capacity step)"),
}
