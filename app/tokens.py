"""Bearer tokens for the HTTP API and the MCP server over HTTP: one scope each, only a token's hash
stored (domain/tokens.py). `wiki token` issues, lists and revokes them; the servers look up the scope
of the token a request bears.
"""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from pydantic import BaseModel
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app.reads import Database, connection
from domain.tokens import DEFAULT_RIGHTS, new_token
from store import api_tokens
from store.api_tokens import TokenRow, TokenScope


class IssuedToken(BaseModel):
    row: TokenRow
    token: str  # the secret, shown once: only its hash is stored


async def token_table_ready(engine: AsyncEngine) -> bool:
    """Whether the database has its tokens table (a database never migrated has not)."""
    try:
        async with engine.connect() as conn:
            return await api_tokens.tokens_table_ready(conn)
    except DBAPIError:
        return False


async def issue_token(conn: AsyncConnection, tenant: str, owner: str, name: str = "",
                      rights: str = DEFAULT_RIGHTS, expires_at: datetime | None = None) -> IssuedToken:
    token = new_token()
    return IssuedToken(row=await api_tokens.create_token(conn, tenant, owner, token, name, rights, expires_at),
                       token=token)


async def list_tokens(conn: AsyncConnection, tenant: str | None = None, owner: str | None = None) -> list[TokenRow]:
    """Every token (never its secret), of one tenant or owner when given, live and revoked."""
    return await api_tokens.list_tokens(conn, tenant, owner)


async def revoke_token(conn: AsyncConnection, token_id: UUID) -> TokenRow | None:
    """Revoke the token; None when there is no such token."""
    return await api_tokens.revoke_token(conn, token_id)


async def scope_of_token(db: Database, token: str) -> TokenScope | None:
    """The scope and rights a token grants; None for anything but a live or expired token (malformed,
    unknown or revoked). An expired one comes back with `expired` set, for the caller to refuse."""
    async with connection(db) as conn:
        return await api_tokens.scope_of_token(conn, token)


async def tokens_matching(conn: AsyncConnection, reference: str, limit: int = 3) -> list[TokenRow]:
    """Tokens whose id, or shown start, begins with `reference` (what `wiki token list` shows)."""
    return await api_tokens.tokens_matching(conn, reference, limit)
