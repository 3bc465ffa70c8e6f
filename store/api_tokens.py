"""Per-scope API tokens: create (hash only), list, revoke, and the lookup every request makes."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.tokens import DEFAULT_RIGHTS, looks_like_token, shown_prefix, token_hash

_COLUMNS = "id, tenant_id, owner_id, name, token_prefix, rights, created_at, expires_at, revoked_at"


class TokenScope(BaseModel):
    token_id: uuid.UUID
    tenant: str
    owner: str
    rights: str
    expired: bool = False  # past its expiry: refused like an unknown token, with its own message
    expires_at: datetime | None = None  # for a cached lookup to tell when it has expired since


class TokenRow(BaseModel):
    id: uuid.UUID
    tenant: str
    owner: str
    name: str
    prefix: str
    rights: str
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None


async def tokens_table_ready(conn: AsyncConnection) -> bool:
    """Whether the tokens table can be read (a database never migrated has none)."""
    try:
        await conn.execute(text("SELECT 1 FROM api_tokens LIMIT 0"))
    except DBAPIError:
        return False
    return True


async def create_token(conn: AsyncConnection, tenant: str, owner: str, token: str, name: str = "",
                       rights: str = DEFAULT_RIGHTS, expires_at: datetime | None = None) -> TokenRow:
    row = (await conn.execute(text(f"""
        INSERT INTO api_tokens (id, tenant_id, owner_id, name, token_hash, token_prefix, rights, expires_at)
        VALUES (:id, :tenant, :owner, :name, :hash, :prefix, :rights, :expires_at)
        RETURNING {_COLUMNS}
    """), {"id": uuid.uuid4(), "tenant": tenant, "owner": owner, "name": name, "hash": token_hash(token),
           "prefix": shown_prefix(token), "rights": rights, "expires_at": expires_at})).one()
    return _row(row)


async def list_tokens(conn: AsyncConnection, tenant: str | None = None, owner: str | None = None) -> list[TokenRow]:
    rows = await conn.execute(text(f"""
        SELECT {_COLUMNS} FROM api_tokens
        WHERE (CAST(:tenant AS text) IS NULL OR tenant_id = :tenant)
          AND (CAST(:owner AS text) IS NULL OR owner_id = :owner)
        ORDER BY tenant_id, owner_id, created_at, id
    """), {"tenant": tenant, "owner": owner})
    return [_row(row) for row in rows]


async def revoke_token(conn: AsyncConnection, token_id: uuid.UUID) -> TokenRow | None:
    """Revoke the token (idempotent: a revoked token keeps its first revocation time)."""
    row = (await conn.execute(text(f"""
        UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = :id
        RETURNING {_COLUMNS}
    """), {"id": token_id})).one_or_none()
    return None if row is None else _row(row)


async def tokens_matching(conn: AsyncConnection, reference: str, limit: int = 3) -> list[TokenRow]:
    """Tokens a reference names: the start of their id, or of what `wiki token list` shows of them
    (the token's first characters), at most `limit`."""
    rows = await conn.execute(text(f"""
        SELECT {_COLUMNS} FROM api_tokens
        WHERE starts_with(CAST(id AS text), lower(:ref)) OR starts_with(token_prefix, :ref)
           OR starts_with(:ref, token_prefix)
        ORDER BY created_at, id LIMIT :limit
    """), {"ref": reference, "limit": limit})
    return [_row(row) for row in rows]


async def scope_of_token(conn: AsyncConnection, token: str) -> TokenScope | None:
    """The scope and rights a token grants; None for anything but a live or expired token (malformed,
    unknown or revoked). An expired one comes back with `expired` set, for the caller to refuse."""
    if not looks_like_token(token):
        return None
    row = (await conn.execute(text("""
        SELECT id, tenant_id, owner_id, rights, coalesce(expires_at <= now(), false) AS expired, expires_at
        FROM api_tokens WHERE token_hash = :hash AND revoked_at IS NULL
    """), {"hash": token_hash(token)})).one_or_none()
    if row is None:
        return None
    return TokenScope(token_id=row.id, tenant=row.tenant_id, owner=row.owner_id, rights=row.rights,
                      expired=row.expired, expires_at=row.expires_at)


def _row(row) -> TokenRow:
    return TokenRow(id=row.id, tenant=row.tenant_id, owner=row.owner_id, name=row.name, prefix=row.token_prefix,
                    rights=row.rights, created_at=row.created_at, expires_at=row.expires_at,
                    revoked_at=row.revoked_at)
