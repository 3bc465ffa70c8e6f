"""Nothing secret or private reaches a log or a terminal: URL passwords are masked in every form,
engines never print statement parameters, and the embedded Postgres wants a password over TCP."""

from __future__ import annotations

import ast
import stat
from pathlib import Path

import asyncpg
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from runtime.database import engine_for
from runtime.devservices import EmbeddedPostgres
from runtime.settings import get_settings, mask_secrets
from tests.test_cli import cli_env, wiki  # noqa: F401 - the CLI tests' environment fixture

ROOT = Path(__file__).resolve().parents[2]
# What a password may hold inside a URL (in either form): unreserved characters, some sub-delimiters
# and percent escapes.
passwords = st.lists(st.sampled_from([*"abcXYZ019-._~!$'()*+,=", "%40", "%2F", "%3A", "%25", "%26"]),
                     min_size=6, max_size=30).map("".join).filter(lambda p: "*" not in p)
URL_FORMS = [
    "postgresql://wiki:{pw}@db.internal:5432/wiki",
    "postgres://wiki:{pw}@db.internal/wiki?sslmode=require",
    "postgresql+asyncpg://wiki:{pw}@[::1]:5432/wiki",
    "postgresql://wiki@db.internal/wiki?password={pw}",
    "postgresql://wiki@db.internal/wiki?sslmode=require&password={pw}&application_name=x",
    "postgresql://wiki@db.internal/wiki?PASSWORD={pw}",
    "cannot connect to the database at postgresql://wiki:{pw}@db.internal/wiki: connection refused",
]


@given(password=passwords, form=st.sampled_from(URL_FORMS))
def test_every_url_password_is_masked_wherever_the_url_stands(password, form):
    shown = mask_secrets(form.format(pw=password))
    assert password not in shown and "***" in shown
    assert "db.internal" in shown or "[::1]" in shown  # the rest stays readable


def test_a_settings_error_never_echoes_a_url_password():
    from runtime.database import to_asyncpg_url
    from runtime.settings import ConfigError

    with pytest.raises(ConfigError) as error:
        to_asyncpg_url("postgresql://wiki:hunter22@db:notaport/wiki")
    assert "hunter22" not in str(error.value)


async def test_dev_status_masks_a_query_password(cli_env, monkeypatch):  # noqa: F811
    monkeypatch.setenv("DATABASE_URL", "postgresql://wiki@127.0.0.1:9/wiki?sslmode=disable&password=hunter22")
    get_settings.cache_clear()
    result = await wiki("dev", "status")
    assert result.exit_code == 0, result.output
    assert "hunter22" not in result.output and "password=***" in result.stdout


async def test_a_failed_statement_never_shows_its_parameters(database_url):
    engine = engine_for(database_url)
    try:
        async with engine.connect() as conn:
            with pytest.raises(DBAPIError) as error:
                await conn.execute(text("SELECT CAST(:memory AS integer)"), {"memory": "Lena's secret diagnosis"})
    finally:
        await engine.dispose()
    assert "secret diagnosis" not in str(error.value) and "hidden" in str(error.value)


def test_every_engine_is_made_by_engine_for():
    """engine_for sets hide_parameters; an engine made any other way could log memory text."""
    offenders = []
    for path in ROOT.rglob("*.py"):
        if ".venv" in path.parts or path == ROOT / "runtime" / "database.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in (
                    "create_async_engine", "AsyncEngine"):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


async def test_the_embedded_postgres_wants_its_password_over_tcp(postgres_server: EmbeddedPostgres):
    password_file = postgres_server.password_path
    assert stat.S_IMODE(password_file.stat().st_mode) == 0o600
    password = password_file.read_text().strip()
    assert len(password) >= 24 and f":{password}@" in postgres_server.url()
    with pytest.raises(asyncpg.InvalidPasswordError):
        await asyncpg.connect(host=postgres_server.host, port=postgres_server.port, user="postgres",
                              database="postgres", password="not-the-password")
    with pytest.raises((asyncpg.InvalidPasswordError, asyncpg.ClientCannotConnectError, ValueError)):
        await asyncpg.connect(host=postgres_server.host, port=postgres_server.port, user="postgres",
                              database="postgres", password="")
    connection = await asyncpg.connect(host=postgres_server.host, port=postgres_server.port, user="postgres",
                                       database="postgres", password=password)
    await connection.close()


async def test_a_cluster_that_trusted_tcp_is_made_to_want_the_password(postgres_server: EmbeddedPostgres):
    hba = postgres_server.pgdata / "pg_hba.conf"

    def tcp_rules() -> list[str]:
        return [line.split()[-1] for line in hba.read_text().splitlines() if line.startswith("host")]

    assert set(tcp_rules()) == {"scram-sha-256"}
    # As a cluster initialised by an older version: every TCP connection trusted.
    hba.write_text("\n".join(line.replace("scram-sha-256", "trust") if line.startswith("host") else line
                             for line in hba.read_text().splitlines()) + "\n")
    postgres_server._command("pg_ctl", "-D", str(postgres_server.pgdata), "reload")
    assert set(tcp_rules()) == {"trust"}
    postgres_server._require_password(set_password=False)
    assert set(tcp_rules()) == {"scram-sha-256"}
    with pytest.raises(asyncpg.InvalidPasswordError):
        await asyncpg.connect(host=postgres_server.host, port=postgres_server.port, user="postgres",
                              database="postgres", password="not-the-password")
