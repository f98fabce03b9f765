"""All of maintenance's SQL: the catalogs, a snapshot's rows, bulk writes, sequences.

The service's ``core.database`` serves requests; it has no snapshot transaction, no
``COPY`` and no read-only open of a file, which a copy of a whole database needs. So the
two sides here hold their drivers' connections themselves (sqlite3, asyncpg), for the
length of one command. Nothing names a table of anonbox: each side reads its tables, their
columns and their foreign keys from the database's own catalog (``pragma_table_list``,
``pg_catalog``), so a table a new migration adds is copied without a change here.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg

from anonbox.core.database import driver_url
from anonbox.maintenance.schemas import DriverRefused, MaintenanceError

# Tables that are not anonbox's data: Alembic's revision (each side is migrated itself
# and the two revisions are compared) and a backup file's own description of itself.
BOOKKEEPING = frozenset({"alembic_version", "anonbox_backup"})

# ``PRAGMA application_id`` of a backup file: "anbx". SQLite's own place for saying which
# program's file a database is (``file`` knows it too).
BACKUP_APPLICATION_ID = 0x616E6278
BACKUP_FORMAT = 1  # ``PRAGMA user_version`` of a backup file


@contextmanager
def driver_errors() -> Iterator[None]:
    """A driver's refusal met during a copy (a damaged file, a row the target will not
    take) as one line; the transaction it happened in is rolled back as its side closes."""
    try:
        yield
    except sqlite3.Error as exc:
        raise DriverRefused(f"SQLite: {exc}") from exc
    except UnicodeDecodeError as exc:  # a damaged page read as text
        raise DriverRefused(f"SQLite: text that is not UTF-8 ({exc.reason})") from exc
    except (asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        raise DriverRefused(f"PostgreSQL: {exc}") from exc


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[str, ...]
    types: tuple[str, ...]  # as the catalog names them, lower case
    parents: frozenset[str] = field(default_factory=frozenset)  # tables its keys point to


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _insert_sql(table: Table, marker: str) -> str:
    names = ", ".join(quoted(c) for c in table.columns)
    values = ", ".join(marker for _ in table.columns)
    return f"INSERT INTO {quoted(table.name)} ({names}) VALUES ({values})"  # noqa: S608


def _select_sql(table: Table) -> str:
    names = ", ".join(quoted(c) for c in table.columns)
    return f"SELECT {names} FROM {quoted(table.name)}"  # noqa: S608 - names from the catalog


# --- SQLite -------------------------------------------------------------------------------


class SQLiteSide:
    """One SQLite file, read in one read transaction (WAL: a snapshot, writers go on) or
    written in one write transaction."""

    dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path

    @classmethod
    def reading(cls, path: Path) -> SQLiteSide:
        """Open read-only: the file's bytes stay as they are."""
        if not path.is_file():
            raise MaintenanceError(f"no SQLite database at {path}")
        try:
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
            conn.execute("PRAGMA busy_timeout=10000")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:
            raise MaintenanceError(f"{path} is not an SQLite database ({exc})") from exc
        except UnicodeDecodeError as exc:  # its schema's text is junk: a damaged page
            raise MaintenanceError(f"{path} has text that is not UTF-8 ({exc.reason})") from exc
        return cls(conn, path)

    @classmethod
    def writing(cls, path: Path) -> SQLiteSide:
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("PRAGMA busy_timeout=10000")
        conn.execute("PRAGMA foreign_keys=ON")
        return cls(conn, path)

    async def begin_snapshot(self) -> None:
        self._conn.execute("BEGIN")
        self._conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # the snapshot

    async def begin_write(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    async def commit(self) -> None:
        self._conn.execute("COMMIT")

    async def rollback(self) -> None:
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    async def close(self) -> None:
        await self.rollback()
        self._conn.close()

    async def tables(self) -> list[Table]:
        """Every ordinary table (no SQLite internals, no full-text index: virtual tables
        and their shadow tables are refilled by the triggers on the tables they index)."""
        names = [
            row[0]
            for row in self._conn.execute(
                "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table'"
                " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
            )
        ]
        found = []
        for name in names:
            columns = self._conn.execute(
                "SELECT name, lower(type) FROM pragma_table_xinfo(?) WHERE hidden = 0 ORDER BY cid",
                (name,),
            ).fetchall()
            parents = self._conn.execute(
                'SELECT DISTINCT "table" FROM pragma_foreign_key_list(?)', (name,)
            ).fetchall()
            found.append(
                Table(
                    name,
                    tuple(c[0] for c in columns),
                    tuple(c[1] for c in columns),
                    frozenset(p[0] for p in parents if p[0] != name),
                )
            )
        return found

    async def revision(self) -> str | None:
        try:
            rows = self._conn.execute("SELECT version_num FROM alembic_version").fetchall()
        except sqlite3.OperationalError:  # no such table: never migrated
            return None
        return str(rows[0][0]) if len(rows) == 1 else None

    async def count(self, table: str) -> int:
        return int(self._conn.execute(f"SELECT count(*) FROM {quoted(table)}").fetchone()[0])  # noqa: S608

    async def has_rows(self, table: str) -> bool:
        sql = f"SELECT EXISTS (SELECT 1 FROM {quoted(table)})"  # noqa: S608
        return bool(self._conn.execute(sql).fetchone()[0])

    async def rows(self, table: Table, batch: int) -> AsyncIterator[Sequence[Sequence[Any]]]:
        cursor = self._conn.execute(_select_sql(table))
        while chunk := cursor.fetchmany(batch):
            yield chunk

    async def insert(self, table: Table, rows: Sequence[Sequence[Any]]) -> None:
        self._conn.executemany(_insert_sql(table, "?"), rows)

    async def pause_triggers(self) -> list[str]:
        """Drop every trigger, inside the write transaction, and hand back their SQL. The
        schema's triggers keep the full-text indexes: fired once a copied row they cost
        most of a copy's time, and ``resume_triggers`` builds each index in one pass
        instead. (A copy carries every row as it was, so no trigger has work to do.)"""
        found = self._conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name"
        ).fetchall()
        for name, _sql in found:
            self._conn.execute(f"DROP TRIGGER {quoted(name)}")
        return [sql for _name, sql in found]

    async def resume_triggers(self, triggers: Sequence[str]) -> None:
        """Put the triggers back and rebuild every full-text index from its table."""
        for sql in triggers:
            self._conn.execute(sql)
        for (name,) in self._conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL"
            " TABLE % USING fts5%' ORDER BY name"
        ).fetchall():
            rebuild = f"INSERT INTO {quoted(name)} ({quoted(name)}) VALUES ('rebuild')"  # noqa: S608 - a name from the catalog
            self._conn.execute(rebuild)

    async def advance_sequences(self) -> None:
        """Nothing to do: an AUTOINCREMENT table's ``sqlite_sequence`` follows the largest
        rowid inserted, given or not."""

    async def check(self) -> list[str]:
        """What ``integrity_check`` and ``foreign_key_check`` find wrong (nothing: [])."""
        try:
            found = self._conn.execute("PRAGMA integrity_check").fetchall()
            problems = [r[0] for r in found if r[0] != "ok"]
            if problems:  # the keys of a damaged file cannot be followed
                return problems
            return [
                f"{r[0]} row {r[1]} points to a missing {r[2]}"
                for r in self._conn.execute("PRAGMA foreign_key_check")
            ]
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:  # too damaged to check
            return [str(exc)]

    # A backup file's description of itself.

    async def backup_marks(self) -> tuple[int, int]:
        application = self._conn.execute("PRAGMA application_id").fetchone()[0]
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        return int(application), int(version)

    async def describe_backup(self, facts: dict[str, str]) -> None:
        self._conn.execute(f"PRAGMA application_id = {BACKUP_APPLICATION_ID}")
        self._conn.execute(f"PRAGMA user_version = {BACKUP_FORMAT}")
        self._conn.execute(
            "CREATE TABLE anonbox_backup (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
        )
        self._conn.executemany("INSERT INTO anonbox_backup VALUES (?, ?)", facts.items())

    async def backup_facts(self) -> dict[str, str]:
        try:
            rows = self._conn.execute("SELECT name, value FROM anonbox_backup").fetchall()
        except sqlite3.OperationalError:
            return {}
        return {str(name): str(value) for name, value in rows}


# --- PostgreSQL ---------------------------------------------------------------------------

_PG_TABLES = """
SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
ORDER BY c.relname
"""
_PG_COLUMNS = """
SELECT table_name, column_name, lower(data_type) AS type FROM information_schema.columns
WHERE table_schema = current_schema() AND is_generated = 'NEVER'
ORDER BY table_name, ordinal_position
"""
_PG_PARENTS = """
SELECT child.relname AS child, parent.relname AS parent
FROM pg_constraint k
JOIN pg_class child ON child.oid = k.conrelid
JOIN pg_class parent ON parent.oid = k.confrelid
JOIN pg_namespace n ON n.oid = child.relnamespace
WHERE k.contype = 'f' AND n.nspname = current_schema()
"""
# Serial and identity columns: the sequences behind them.
_PG_SEQUENCES = """
SELECT table_name, column_name,
       pg_get_serial_sequence(quote_ident(table_name), column_name) AS sequence
FROM information_schema.columns
WHERE table_schema = current_schema()
  AND pg_get_serial_sequence(quote_ident(table_name), column_name) IS NOT NULL
"""


async def _pg_connect(url: str) -> asyncpg.Connection:
    try:
        # No statement cache: these statements run once each, and a named prepared
        # statement would not outlive a transaction behind PgBouncer in transaction mode.
        return await asyncpg.connect(driver_url(url)[1], timeout=10, statement_cache_size=0)
    except (OSError, TimeoutError) as exc:
        raise MaintenanceError(
            f"cannot reach the PostgreSQL server of {_shown(url)}: {exc}"
        ) from exc
    except (asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        raise MaintenanceError(f"PostgreSQL refused {_shown(url)}: {exc}") from exc


def _shown(url: str) -> str:
    """The URL without its password."""
    scheme, _, rest = url.partition("://")
    credentials, at, place = rest.rpartition("@")
    if not at:
        return url
    return f"{scheme}://{credentials.split(':', 1)[0]}@{place}"


class PostgresSide:
    """One PostgreSQL database on one connection: a REPEATABLE READ, READ ONLY transaction
    reads one snapshot of every table; a plain transaction writes with ``COPY``."""

    dialect = "postgresql"

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn
        self._tx: Any = None

    @classmethod
    async def open(cls, url: str) -> PostgresSide:
        return cls(await _pg_connect(url))

    async def begin_snapshot(self) -> None:
        self._tx = self._conn.transaction(isolation="repeatable_read", readonly=True)
        await self._tx.start()

    async def begin_write(self) -> None:
        self._tx = self._conn.transaction()
        await self._tx.start()

    async def commit(self) -> None:
        await self._tx.commit()
        self._tx = None

    async def rollback(self) -> None:
        if self._tx is not None:
            await self._tx.rollback()
            self._tx = None

    async def close(self) -> None:
        await self.rollback()
        await self._conn.close()

    async def tables(self) -> list[Table]:
        columns: dict[str, list[tuple[str, str]]] = {}
        for row in await self._conn.fetch(_PG_COLUMNS):
            columns.setdefault(row["table_name"], []).append((row["column_name"], row["type"]))
        parents: dict[str, set[str]] = {}
        for row in await self._conn.fetch(_PG_PARENTS):
            if row["parent"] != row["child"]:
                parents.setdefault(row["child"], set()).add(row["parent"])
        return [
            Table(
                row["name"],
                tuple(c for c, _ in columns.get(row["name"], [])),
                tuple(t for _, t in columns.get(row["name"], [])),
                frozenset(parents.get(row["name"], ())),
            )
            for row in await self._conn.fetch(_PG_TABLES)
        ]

    async def revision(self) -> str | None:
        try:
            rows = await self._conn.fetch("SELECT version_num FROM alembic_version")
        except asyncpg.UndefinedTableError:
            return None
        return str(rows[0][0]) if len(rows) == 1 else None

    async def count(self, table: str) -> int:
        return int(await self._conn.fetchval(f"SELECT count(*) FROM {quoted(table)}"))  # noqa: S608

    async def has_rows(self, table: str) -> bool:
        sql = f"SELECT EXISTS (SELECT 1 FROM {quoted(table)})"  # noqa: S608
        return bool(await self._conn.fetchval(sql))

    async def rows(self, table: Table, batch: int) -> AsyncIterator[Sequence[Sequence[Any]]]:
        cursor = await self._conn.cursor(_select_sql(table))
        while chunk := await cursor.fetch(batch):
            yield [tuple(record) for record in chunk]

    async def insert(self, table: Table, rows: Sequence[Sequence[Any]]) -> None:
        # SQLite keeps a boolean as 0 or 1; COPY wants a bool for a boolean column.
        flags = [i for i, kind in enumerate(table.types) if kind == "boolean"]
        if flags:
            rows = [_as_bools(row, flags) for row in rows]
        await self._conn.copy_records_to_table(
            table.name, records=rows, columns=list(table.columns)
        )

    async def pause_triggers(self) -> list[str]:
        """Nothing to pause: anonbox's PostgreSQL schema keeps its indexes without triggers."""
        return []

    async def resume_triggers(self, triggers: Sequence[str]) -> None:
        """Nothing paused."""

    async def advance_sequences(self) -> None:
        """Set every serial or identity column's sequence past the largest value copied,
        so the next row the service adds does not take a copied row's number."""
        for row in await self._conn.fetch(_PG_SEQUENCES):
            table, column = quoted(row["table_name"]), quoted(row["column_name"])
            await self._conn.execute(
                f"SELECT setval($1, COALESCE((SELECT max({column}) FROM {table}), 0) + 1, false)",  # noqa: S608
                row["sequence"],
            )

    async def check(self) -> list[str]:
        return []  # PostgreSQL checks every key and constraint as the rows go in


def _as_bools(row: Sequence[Any], flags: list[int]) -> tuple[Any, ...]:
    values = list(row)
    for i in flags:
        if values[i] is not None:
            values[i] = bool(values[i])
    return tuple(values)


async def open_reading(url: str) -> SQLiteSide | PostgresSide:
    dialect, target = driver_url(url)
    if dialect == "sqlite":
        return SQLiteSide.reading(Path(target))
    return await PostgresSide.open(url)


async def open_writing(url: str) -> SQLiteSide | PostgresSide:
    dialect, target = driver_url(url)
    if dialect == "sqlite":
        return SQLiteSide.writing(Path(target))
    return await PostgresSide.open(url)
