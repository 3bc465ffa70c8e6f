"""Conversations: a memory may be a turn, with its speaker, its role, its conversation and its position.

`speaker` is who said it (a person's name), `speaker_role` is `user` or `assistant` when the message was
sent with that role, `conversation_id` and `position` place the turn in its conversation. A turn is
unique at its place (the retain derives its id from it too); the user's name of a scope is the speaker
of its `user` turns, found through a partial index; the turns around a turn are read by conversation and
position. Memories that are no turns keep the four columns empty.

Revision ID: 0013_conversations
Revises: 0012_recall_speed
Create Date: 2026-11-28
"""

from alembic import op

revision = "0013_conversations"
down_revision = "0012_recall_speed"
branch_labels = None
depends_on = None

UPGRADE = [
    "ALTER TABLE memory_units ADD COLUMN speaker text",
    "ALTER TABLE memory_units ADD COLUMN speaker_role text",
    "ALTER TABLE memory_units ADD COLUMN conversation_id text",
    "ALTER TABLE memory_units ADD COLUMN position integer",
    """ALTER TABLE memory_units ADD CONSTRAINT memory_units_turn_shape CHECK (
           (conversation_id IS NULL) = (position IS NULL)
           AND (conversation_id IS NULL OR speaker IS NOT NULL)
           AND (speaker_role IS NULL OR speaker_role IN ('user', 'assistant'))
           AND (position IS NULL OR position >= 0)
           AND (speaker IS NULL OR length(speaker) BETWEEN 1 AND 64)
           AND (conversation_id IS NULL OR length(conversation_id) BETWEEN 1 AND 128))""",
    """CREATE UNIQUE INDEX memory_units_turn ON memory_units (tenant_id, owner_id, conversation_id, position)
           WHERE conversation_id IS NOT NULL""",
    """CREATE INDEX memory_units_user_turns ON memory_units (tenant_id, owner_id, created_at)
           WHERE speaker_role = 'user'""",
]

DOWNGRADE = [
    "DROP INDEX memory_units_user_turns",
    "DROP INDEX memory_units_turn",
    "ALTER TABLE memory_units DROP CONSTRAINT memory_units_turn_shape",
    "ALTER TABLE memory_units DROP COLUMN position",
    "ALTER TABLE memory_units DROP COLUMN conversation_id",
    "ALTER TABLE memory_units DROP COLUMN speaker_role",
    "ALTER TABLE memory_units DROP COLUMN speaker",
]


def upgrade() -> None:
    for statement in UPGRADE:
        op.execute(statement)


def downgrade() -> None:
    for statement in DOWNGRADE:
        op.execute(statement)
