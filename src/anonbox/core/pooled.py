"""What an asyncpg connection through PgBouncer in transaction mode needs
(``ANONBOX_DATABASE_POOLER=transaction``): nothing may span two transactions, since each
may run on another server connection.

- No statement cache: asyncpg then uses the unnamed statement, described with Flush (no
  Sync, so PgBouncer keeps the server connection) and parsed again with its execution.
- No session-level ``jit`` toggle around asyncpg's type introspection: asyncpg turns JIT
  off with ``set_config('jit', 'off', false)``, introspects, then turns it back on, in
  three exchanges that may meet three server connections. It left JIT off on one, and
  ran the introspection (a recursive catalog query) with JIT on elsewhere: 0.3 to 2 s of
  JIT compiling a time, with every post of a group commit waiting on it (``make bench``
  wrote 40 posts a second through the pooler before this, docs/decisions.md).
- The array types anonbox binds (``text[]``, ``bigint[]``, ``int[]``) are introspected
  once as each connection opens, in one transaction with ``SET LOCAL jit = off``, so no
  request pays for it.
"""

from __future__ import annotations

from typing import Any

import asyncpg


class PooledConnection(asyncpg.Connection):  # type: ignore[misc]  # asyncpg is untyped
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._server_caps = self._server_caps._replace(jit=False)  # type: ignore[has-type]


async def _introspect_arrays(conn: asyncpg.Connection) -> None:
    async with conn.transaction():
        await conn.execute("SET LOCAL jit = off")
        await conn.fetchrow("SELECT $1::text[] AS t, $2::bigint[] AS b, $3::int[] AS i", [], [], [])


def pooler_options() -> dict[str, Any]:
    """``asyncpg.create_pool``'s options for connections through the pooler."""
    return {
        "statement_cache_size": 0,
        "connection_class": PooledConnection,
        "init": _introspect_arrays,
    }
