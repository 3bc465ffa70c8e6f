"""The section writer's draft passes the grounding check before it is stored.

A model writer's own lines (`domain/writer_grounding.py`) keep only the names, numbers and dates of
what it was shown; a line with any other is dropped from the draft and recorded among the scope's
rejected claims (stage `grounding`), as the plan's lines are. A writer that rebuilds a section in
code from all its memories (the scripted planner's condenser) derives its lines by construction and
is not checked. A draft left empty falls back to the shown body with the proposal appended, as a
writer reply that is not usable does.
"""

from __future__ import annotations

from uuid import UUID

from sqlalchemy.ext.asyncio import AsyncConnection

from domain.context import MemoryRecord
from domain.evidence import evidence_of
from domain.resolved_plan import SectionTask
from domain.writer_grounding import check_written_body
from messages.compile import Scope
from planners.rare_words import is_rare_word
from planners.section_edits import append_lines
from store.claims import RejectedClaim, record_rejected_claims
from store.plan_staging import plan_run_id


def checked_draft(task: SectionTask, body: str, cited: list[MemoryRecord]) -> tuple[str, list[RejectedClaim]]:
    """The draft without the writer's ungrounded lines, and those lines as rejected claims."""
    memories = [evidence_of(str(m.id), m.content, m.metadata, m.created_at) for m in cited]
    checked = check_written_body(body, [task.existing_body, task.proposed_body], memories, [task.page_title],
                                 is_rare_word)
    rejected = [RejectedClaim(page_ref=task.page_id, section_slug=task.slug, text=r.text,
                              cited=[str(m.id) for m in cited], stage="grounding", reason=r.reason)
                for r in checked.rejected]
    return (checked.body or append_lines(task.existing_body, task.proposed_body)), rejected


async def record_writer_rejections(conn: AsyncConnection, scope: Scope, plan_id: UUID, rejected: list[RejectedClaim]) -> None:
    if rejected:
        await record_rejected_claims(conn, scope.tenant, scope.owner, await plan_run_id(conn, plan_id, scope),
                                     plan_id, rejected)
