"""Claim statuses that name the check: quoted, verified, derived, unverified; confidence only where a
memory was shown to support the line.

A claim's status was `verified` or `unverified`, and `verified` covered a memory's own line, a line
made of its memories' words in any order, and a line an offline word-overlap judge or a model judge
passed; confidence counted every memory the line cited. Now (domain/claims.py):

- `wiki_section_claims.status` is one of quoted, verified, derived, unverified; `confidence` is NULL
  for derived and unverified lines (a check enforces it), and rests on `supporters`, the memories
  that each support the line on their own;
- `wiki_claim_sources.support` says how a cited memory supports its claim: 'quote', 'judge',
  'together', or NULL (only cited);
- `wiki_compile_section_drafts.line_claims` keeps the claim judge's verdicts on a section writer's
  own lines until apply writes them.

Existing rows are labelled by what can be checked now, honestly: a derived line stays derived (no
confidence); a line that is word for word whole sentences of a memory it cites becomes quoted, its
confidence counted over the memories it quotes; every other line becomes unverified, with no
confidence, whatever it was labelled: no record says a judge read it. The next compile that writes
its section decides again (a line proposed again goes to the judge), and `wiki rebuild` has every
line judged again.

Revision ID: 0014_claim_statuses
Revises: 0012_recall_speed
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections import defaultdict

from alembic import op
from sqlalchemy import text

from domain.claim_checks import quoted_in
from domain.claims import confidence
from domain.evidence import evidence_of

revision = "0014_claim_statuses"
down_revision = "0013_conversations"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE wiki_section_claims DROP CONSTRAINT IF EXISTS wiki_section_claims_status_check")
    op.execute("ALTER TABLE wiki_section_claims ALTER COLUMN confidence DROP NOT NULL")
    op.execute("ALTER TABLE wiki_section_claims ADD COLUMN supporters integer NOT NULL DEFAULT 0")
    op.execute("ALTER TABLE wiki_claim_sources ADD COLUMN support text")
    op.execute("ALTER TABLE wiki_compile_section_drafts ADD COLUMN line_claims jsonb NOT NULL DEFAULT '{}'")
    op.execute("""ALTER TABLE wiki_claim_sources ADD CONSTRAINT wiki_claim_sources_support
                      CHECK (support IN ('quote', 'judge', 'together'))""")
    _relabel()
    op.execute("""ALTER TABLE wiki_section_claims ADD CONSTRAINT wiki_section_claims_status_check
                      CHECK (status IN ('quoted', 'verified', 'derived', 'unverified'))""")
    op.execute("""ALTER TABLE wiki_section_claims ADD CONSTRAINT wiki_section_claims_confidence_shown
                      CHECK ((confidence IS NOT NULL) = (status IN ('quoted', 'verified')))""")
    op.execute("ALTER TABLE wiki_section_claims ADD CONSTRAINT wiki_section_claims_supporters CHECK (supporters >= 0)")


def _relabel() -> None:
    conn = op.get_bind()
    claims = conn.execute(text("""
        SELECT c.id, c.text, c.kind, p.tenant_id, p.owner_id,
               coalesce((SELECT array_agg(cs.memory_id ORDER BY cs.memory_id) FROM wiki_claim_sources cs
                         WHERE cs.claim_id = c.id), '{}') AS refs
        FROM wiki_section_claims c JOIN wiki_page_sections s ON s.id = c.section_id
        JOIN wiki_pages p ON p.id = s.page_id
    """)).all()
    by_scope: dict[tuple[str, str], list] = defaultdict(list)
    for claim in claims:
        by_scope[(claim.tenant_id, claim.owner_id)].append(claim)
    for (tenant, owner), scope_claims in by_scope.items():
        wanted = sorted({ref for c in scope_claims if c.kind != "derived" for ref in c.refs})
        memories = conn.execute(text("""
            SELECT id::text AS id, content, metadata, created_at FROM memory_units
            WHERE tenant_id = :tenant AND owner_id = :owner AND id::text = ANY(CAST(:ids AS text[]))
        """), {"tenant": tenant, "owner": owner, "ids": wanted}).all()
        evidence = {m.id: evidence_of(m.id, m.content, m.metadata, m.created_at) for m in memories}
        for claim in scope_claims:
            if claim.kind == "derived":
                conn.execute(text("""UPDATE wiki_section_claims SET status = 'derived', confidence = NULL,
                                         supporters = 0 WHERE id = :id"""), {"id": claim.id})
                continue
            quoting = quoted_in(claim.text, [evidence[r] for r in claim.refs if r in evidence])
            status = "quoted" if quoting else "unverified"
            conn.execute(text("""UPDATE wiki_section_claims SET status = :status, confidence = :confidence,
                                     supporters = :supporters WHERE id = :id"""),
                         {"id": claim.id, "status": status, "confidence": confidence(len(quoting), status),
                          "supporters": len(quoting)})
            if quoting:
                conn.execute(text("""UPDATE wiki_claim_sources SET support = 'quote'
                                     WHERE claim_id = :id AND memory_id = ANY(CAST(:refs AS text[]))"""),
                             {"id": claim.id, "refs": quoting})


def downgrade() -> None:
    # Back to two statuses: only what a check passed (quoted, verified) reads as verified; a confidence
    # is needed again, the old schedule over every memory the line cites.
    op.execute("ALTER TABLE wiki_section_claims DROP CONSTRAINT wiki_section_claims_supporters")
    op.execute("ALTER TABLE wiki_section_claims DROP CONSTRAINT wiki_section_claims_confidence_shown")
    op.execute("ALTER TABLE wiki_section_claims DROP CONSTRAINT wiki_section_claims_status_check")
    op.execute("""UPDATE wiki_section_claims SET
                      status = CASE WHEN status IN ('quoted', 'verified', 'derived') THEN 'verified' ELSE 'unverified' END,
                      confidence = CASE WHEN corroboration <= 0 THEN 0
                                        ELSE least(1.0, 0.7 + 0.1 * (corroboration - 1)) END""")
    # The update's scope-revision bumps are deferred triggers: run them now, before an earlier
    # migration's downgrade drops their table in this same transaction.
    op.execute("SET CONSTRAINTS ALL IMMEDIATE")
    op.execute("ALTER TABLE wiki_section_claims ALTER COLUMN confidence SET NOT NULL")
    op.execute("""ALTER TABLE wiki_section_claims ADD CONSTRAINT wiki_section_claims_status_check
                      CHECK (status IN ('verified', 'unverified'))""")
    op.execute("ALTER TABLE wiki_compile_section_drafts DROP COLUMN line_claims")
    op.execute("ALTER TABLE wiki_claim_sources DROP CONSTRAINT wiki_claim_sources_support")
    op.execute("ALTER TABLE wiki_claim_sources DROP COLUMN support")
    op.execute("ALTER TABLE wiki_section_claims DROP COLUMN supporters")
