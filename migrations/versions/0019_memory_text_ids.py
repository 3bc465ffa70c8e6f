"""Memories found by the text of their id.

The wiki cites a memory by the text of its id (`wiki_claim_sources.memory_id`,
`wiki_section_sources.source_ref`, link and sighting refs), and reads that cite it join
`memory_units` on `id::text`. The primary key is on the uuid itself, so each such join scanned every
memory of the scope: apply's read of a touched page's claims with the moments of their memories
scanned the scope once per claim (1.8 s at 10,000 memories and 540 claims). An index on the id's
text makes each of them one index probe.

Revision ID: 0019_memory_text_ids
Revises: 0018_forget_everywhere
Create Date: 2026-11-28
"""

from alembic import op

revision = "0019_memory_text_ids"
down_revision = "0018_forget_everywhere"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("CREATE INDEX memory_units_id_text ON memory_units (tenant_id, owner_id, (id::text))")


def downgrade() -> None:
    op.execute("DROP INDEX memory_units_id_text")
