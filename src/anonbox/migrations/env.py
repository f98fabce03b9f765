"""Alembic environment: runs migrations through SQLAlchemy's async engine."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy import pool, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

# Any constant: PostgreSQL advisory locks are keyed by a number.
_MIGRATION_LOCK = 0x616E6F6E626F78


def _run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=None, render_as_batch=True)
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
        context.run_migrations()


async def _migrate() -> None:
    url = context.config.attributes["sqlalchemy_url"]
    engine = create_async_engine(url, poolclass=pool.NullPool)
    async with engine.connect() as connection:
        await connection.run_sync(_run)
    await engine.dispose()


asyncio.run(_migrate())
