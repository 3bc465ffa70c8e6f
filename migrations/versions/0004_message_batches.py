"""Message Batches: each leaf plan request sent in a batch, kept until its result is read.

A batched plan is answered minutes to hours after its prompt was built, possibly by another worker
after a restart: the row keeps the prompt's handles (to map the reply back to ids) and the batch
it travels in, so history carries only the batch id and the plan id.

Revision ID: 0004_message_batches
Revises: 0003_scoped_memory_ids
Create Date: 2026-11-24
"""

from alembic import op

revision = "0004_message_batches"
down_revision = "0003_scoped_memory_ids"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
        CREATE TABLE wiki_llm_batch_requests (
            custom_id text PRIMARY KEY,
            batch_id text,
            tenant_id text NOT NULL,
            owner_id text NOT NULL,
            run_id text NOT NULL,
            plan_id uuid NOT NULL,
            model_id text NOT NULL,
            memory_ids uuid[] NOT NULL,
            call jsonb NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            collected_at timestamptz
        )
    """)
    op.execute("CREATE INDEX wiki_llm_batch_requests_batch ON wiki_llm_batch_requests (batch_id)")


def downgrade() -> None:
    op.execute("DROP TABLE wiki_llm_batch_requests")
