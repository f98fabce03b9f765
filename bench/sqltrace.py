"""Run a server with every SQL statement it sends to SQLite or PostgreSQL written to a file.

    python bench/sqltrace.py TRACE_FILE -m anonbox serve --port 8000
    python bench/sqltrace.py TRACE_FILE bench/floor.py --database-url ... --port 8001

``bench/run.py --check-sql`` starts anonbox and the floor this way, sends each scenario's
request once, and compares what each sent to the database for it: the floor claims the
same statements as anonbox, and this is how that claim is checked rather than believed.

The hooks sit in the drivers, below anything anonbox or the floor does: every connection
``sqlite3.connect`` opens (aiosqlite's included) gets a trace callback, which sees each
statement as SQLite runs it (BEGIN and COMMIT too); every asyncpg ``Connection`` method
that sends a query logs it (a transaction's BEGIN and COMMIT go through ``execute``).
A line is ``<monotonic ns> <statement on one line>``.
"""

from __future__ import annotations

import functools
import re
import runpy
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

_SPACES = re.compile(r"\s+")


def install(path: str) -> None:
    out = open(path, "a", buffering=1)  # noqa: SIM115 - open for the life of the process
    lock = threading.Lock()

    def record(sql: str) -> None:
        line = _SPACES.sub(" ", sql).strip()
        with lock:
            out.write(f"{time.monotonic_ns()} {line}\n")

    connect = sqlite3.connect

    @functools.wraps(connect)
    def traced_connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)
        conn.set_trace_callback(record)
        return conn

    sqlite3.connect = traced_connect  # type: ignore[assignment]

    try:
        from asyncpg.connection import Connection
    except ImportError:
        return

    def logged(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        async def call(self: Any, query: str, *args: Any, **kwargs: Any) -> Any:
            record(query)
            return await method(self, query, *args, **kwargs)

        return call

    for name in ("execute", "executemany", "fetch", "fetchrow", "fetchval", "fetchmany"):
        setattr(Connection, name, logged(getattr(Connection, name)))


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    install(sys.argv[1])
    if sys.argv[2] == "-m":
        sys.argv = [sys.argv[3], *sys.argv[4:]]
        runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
    else:
        sys.argv = sys.argv[2:]
        sys.path.insert(0, str(__import__("pathlib").Path(sys.argv[0]).resolve().parent))
        runpy.run_path(sys.argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
