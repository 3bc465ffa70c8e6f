"""Deterministic row ids from natural keys.

The same memories compiled twice (or an apply retried after a crash) produce the same ids, so the
wiki is identical row for row and every write can be an idempotent upsert.
"""

from __future__ import annotations

import uuid

_NAMESPACE = uuid.UUID("0d6f1f4e-8f0c-4c55-a2a4-7f35b0e6c2d1")


def _id(*parts: object) -> uuid.UUID:
    return uuid.uuid5(_NAMESPACE, "\x1f".join(str(part) for part in parts))


def page_id(tenant: str, owner: str, page_type: str, slug: str) -> uuid.UUID:
    return _id("page", tenant, owner, page_type, slug)


def section_id(page: uuid.UUID, section_slug: str) -> uuid.UUID:
    return _id("section", page, section_slug)


def alias_id(page: uuid.UUID, alias: str) -> uuid.UUID:
    return _id("alias", page, alias)


def link_id(from_page: uuid.UUID | str, to_page: uuid.UUID | str, kind: str) -> uuid.UUID:
    """Of page ids as UUIDs or in their canonical text form (the same id either way)."""
    return _id("link", from_page, to_page, kind)


def source_id(section: uuid.UUID, source_kind: str, source_ref: str) -> uuid.UUID:
    return _id("source", section, source_kind, source_ref)


def mention_id(tenant: str, owner: str, alias_normalized: str, generation: int) -> uuid.UUID:
    """`generation` counts earlier rows of the same alias (a promoted row, then a new open one)."""
    return _id("mention", tenant, owner, alias_normalized, generation)


def ledger_id(run_id: str) -> uuid.UUID:
    return _id("ledger", run_id)


def claim_id(section: uuid.UUID, claim_key: str, occurrence: int) -> uuid.UUID:
    # The occurrence tells apart lines of one section that normalise alike.
    return _id("claim", section, claim_key, occurrence)


def rejected_claim_id(plan: uuid.UUID, section_key: str, claim_key: str) -> uuid.UUID:
    return _id("rejected-claim", plan, section_key, claim_key)
