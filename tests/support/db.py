"""The test server's database, read (and now and then set up) straight, behind the API's
back: what it no longer shows (purged, erased, deleted rows) and what only time would do
(an expiry moved into the past) are checked and done here.

Through the service's own layer (``anonbox.core.database``), so one SQL text, with ``$1``
placeholders, runs on SQLite and PostgreSQL alike. Each call opens the database and
closes it again: the server process holds its own connections.
"""

from __future__ import annotations

import asyncio
from typing import Any

from anonbox.core.database import connect


def query(database_url: str, sql: str, *args: Any) -> list[dict[str, Any]]:
    """Rows straight from the database, as dicts."""

    async def run() -> list[dict[str, Any]]:
        db = await connect(database_url)
        try:
            return [dict(row) for row in await db.fetch(sql, *args)]
        finally:
            await db.close()

    return asyncio.run(run())


def execute(database_url: str, sql: str, *args: Any) -> int:
    """One statement straight on the database; how many rows it changed."""

    async def run() -> int:
        db = await connect(database_url)
        try:
            return await db.execute(sql, *args)
        finally:
            await db.close()

    return asyncio.run(run())
