"""Facts that change: every assertion opens its own interval, and marks keep their reason.

A claim may hold more than once ("lives in Denver" in 2020, replaced in 2023, asserted again in
2025): `valid_during` holds every interval in which it held, and `as_of` reads ask it. Existing
claims hold in the one interval their columns say. A mark (`wiki_claim_supersessions`) keeps the
planner's reason, and its kind: `replaces` (the line replaces the older one) or `unsure` (a pair the
offline rules could not tell apart, kept both current for the lint to name).

Revision ID: 0016_fact_intervals
Revises: 0012_recall_speed
Create Date: 2026-11-28
"""

from alembic import op

revision = "0016_fact_intervals"
down_revision = "0015_memory_vectors"
branch_labels = None
depends_on = None

UPGRADE = [
    "ALTER TABLE wiki_section_claims ADD COLUMN valid_during tstzmultirange",
    "UPDATE wiki_section_claims SET valid_during = tstzmultirange(tstzrange(valid_from, valid_to, '[)'))",
    "ALTER TABLE wiki_claim_supersessions ADD COLUMN reason text",
    "ALTER TABLE wiki_claim_supersessions ADD COLUMN kind text NOT NULL DEFAULT 'replaces' "
    "CONSTRAINT wiki_claim_supersessions_kind_check CHECK (kind IN ('replaces', 'unsure'))",
]

DOWNGRADE = [
    "ALTER TABLE wiki_claim_supersessions DROP COLUMN IF EXISTS kind",
    "ALTER TABLE wiki_claim_supersessions DROP COLUMN IF EXISTS reason",
    "ALTER TABLE wiki_section_claims DROP COLUMN IF EXISTS valid_during",
]


def upgrade() -> None:
    for statement in UPGRADE:
        op.execute(statement)


def downgrade() -> None:
    for statement in DOWNGRADE:
        op.execute(statement)
