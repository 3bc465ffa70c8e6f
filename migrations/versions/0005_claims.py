"""Claims: a section's lines as rows with their own citations, confidence and status; and the
claims the verification gate rejected.

Existing sections are converted: each non-blank body line becomes a claim, attributed by
`domain.attribution.attribute_body` with no plan and no earlier claims: a dated line `- YYYY-MM-DD: …`
cites the section's memories that happened that day and contain its text; any other line cites the
section's memories that vouch for its names and numbers, and a line the compiler computed (a count,
a span) is a derived claim citing the memories it counts. This table's two statuses hold what a
check passed as verified; 0014_claim_statuses labels each row by the check that gave it.

Revision ID: 0005_claims
Revises: 0004_message_batches
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections import defaultdict
from uuid import UUID

from alembic import op
from sqlalchemy import text

from domain import ids
from domain.attribution import attribute_body
from domain.evidence import evidence_of

revision = "0005_claims"
down_revision = "0004_message_batches"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
        CREATE TABLE wiki_section_claims (
            id uuid PRIMARY KEY,
            section_id uuid NOT NULL REFERENCES wiki_page_sections(id) ON DELETE CASCADE,
            position integer NOT NULL,
            text text NOT NULL CHECK (length(text) > 0),
            text_key text NOT NULL,
            kind text NOT NULL CHECK (kind IN ('fact', 'derived')),
            status text NOT NULL CHECK (status IN ('verified', 'unverified')),
            confidence numeric(3, 2) NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
            corroboration integer NOT NULL CHECK (corroboration >= 0),
            first_seen_at timestamptz,
            last_seen_at timestamptz,
            created_run_id text,
            updated_run_id text,
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now()
        )
    """)
    op.execute("CREATE INDEX wiki_section_claims_section ON wiki_section_claims (section_id, position)")
    op.execute("""
        CREATE TABLE wiki_claim_sources (
            claim_id uuid NOT NULL REFERENCES wiki_section_claims(id) ON DELETE CASCADE,
            tenant_id text NOT NULL,
            owner_id text NOT NULL,
            memory_id text NOT NULL CHECK (length(memory_id) > 0),
            PRIMARY KEY (claim_id, memory_id)
        )
    """)
    op.execute("CREATE INDEX wiki_claim_sources_memory ON wiki_claim_sources (tenant_id, owner_id, memory_id)")
    op.execute("""
        CREATE TABLE wiki_rejected_claims (
            id uuid PRIMARY KEY,
            tenant_id text NOT NULL,
            owner_id text NOT NULL,
            run_id text,
            plan_id uuid,
            page_ref text NOT NULL,
            section_slug text NOT NULL,
            text text NOT NULL,
            cited text[] NOT NULL DEFAULT '{}',
            stage text NOT NULL CHECK (stage IN ('grounding', 'judge')),
            reason text NOT NULL,
            scores jsonb,
            created_at timestamptz NOT NULL DEFAULT now()
        )
    """)
    op.execute("CREATE INDEX wiki_rejected_claims_scope ON wiki_rejected_claims (tenant_id, owner_id, created_at)")
    _convert_sections()


def _confidence(cited: int) -> float:
    # This table's schedule: 0.7 for one cited memory, +0.1 per further one (0014 replaces it).
    return round(min(1.0, 0.7 + 0.1 * (cited - 1)), 2) if cited > 0 else 0.0


def _convert_sections() -> None:
    conn = op.get_bind()
    sections = conn.execute(text("""
        SELECT s.id, s.body_md, p.tenant_id, p.owner_id, p.title,
               coalesce((SELECT array_agg(a.alias) FROM wiki_page_aliases a WHERE a.page_id = p.id), '{}') AS aliases,
               coalesce((SELECT array_agg(src.source_ref ORDER BY src.source_ref) FROM wiki_section_sources src
                         WHERE src.section_id = s.id AND src.source_kind = 'memory_unit'), '{}') AS refs
        FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id
    """)).all()
    by_scope: dict[tuple[str, str], list] = defaultdict(list)
    for section in sections:
        by_scope[(section.tenant_id, section.owner_id)].append(section)
    for (tenant, owner), scope_sections in by_scope.items():
        wanted = sorted({ref for s in scope_sections for ref in s.refs})
        memories = conn.execute(text("""
            SELECT id::text AS id, content, metadata, created_at FROM memory_units
            WHERE tenant_id = :tenant AND owner_id = :owner AND id::text = ANY(CAST(:ids AS text[]))
        """), {"tenant": tenant, "owner": owner, "ids": wanted}).all()
        evidence = {m.id: evidence_of(m.id, m.content, m.metadata, m.created_at) for m in memories}
        for section in scope_sections:
            sources = [evidence[r] for r in section.refs if r in evidence]
            claims = attribute_body(section.body_md, sources, {}, {}, [section.title, *section.aliases])
            for position, claim in enumerate(claims, 1):
                claim_id = ids.claim_id(UUID(str(section.id)), claim.key, claim.occurrence)
                days = [day for r in claim.refs if (day := evidence[r].happened) is not None]
                conn.execute(text("""
                    INSERT INTO wiki_section_claims (id, section_id, position, text, text_key, kind, status,
                        confidence, corroboration, first_seen_at, last_seen_at)
                    VALUES (:id, :section, :position, :text, :key, :kind, :status, :confidence, :corroboration,
                            :first, :last)
                """), {"id": claim_id, "section": section.id, "position": position, "text": claim.text,
                       "key": claim.key, "kind": claim.kind,
                       "status": "unverified" if claim.status == "unverified" else "verified",
                       "confidence": _confidence(len(claim.refs)), "corroboration": len(claim.refs),
                       "first": min(days) if days else None, "last": max(days) if days else None})
                for ref in claim.refs:
                    conn.execute(text("""
                        INSERT INTO wiki_claim_sources (claim_id, tenant_id, owner_id, memory_id)
                        VALUES (:claim, :tenant, :owner, :memory)
                    """), {"claim": claim_id, "tenant": tenant, "owner": owner, "memory": ref})


def downgrade() -> None:
    op.execute("DROP TABLE wiki_rejected_claims")
    op.execute("DROP TABLE wiki_claim_sources")
    op.execute("DROP TABLE wiki_section_claims")
