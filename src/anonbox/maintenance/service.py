"""The rules of backup, restore and move: what is checked first, what is refused, and
that every table of the schema arrives whole.

All three are one copy: every table the catalog lists, parents before the tables whose
keys point to them, read in one snapshot of the source and written in one transaction of
the target, then counted on both sides. A backup is that copy into a new SQLite file at
the same schema revision; a restore is the copy out of such a file; a move, out of the
SQLite database the service ran on into PostgreSQL. The source is never written.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from anonbox.core.database import driver_url
from anonbox.maintenance.repository import (
    BACKUP_APPLICATION_ID,
    BACKUP_FORMAT,
    BOOKKEEPING,
    PostgresSide,
    SQLiteSide,
    Table,
    driver_errors,
    open_reading,
    open_writing,
)
from anonbox.maintenance.schemas import (
    Copied,
    DriverRefused,
    MaintenanceError,
    NoProgress,
    Progress,
)
from anonbox.migrations import head_revision, upgrade

Side = SQLiteSide | PostgresSide

# Rows per read and per write: big enough that a statement's cost is spread thin, small
# enough that a batch of messages at their longest stays a few megabytes.
BATCH = 5_000


def in_key_order(tables: Iterable[Table]) -> list[Table]:
    """Every table after the tables its foreign keys point to (by name among equals)."""
    waiting = {table.name: table for table in tables}
    ordered: list[Table] = []
    placed: set[str] = set()
    while waiting:
        ready = sorted(name for name, table in waiting.items() if table.parents <= placed | {name})
        if not ready:
            raise MaintenanceError(f"the foreign keys of {', '.join(sorted(waiting))} form a cycle")
        for name in ready:
            ordered.append(waiting.pop(name))
            placed.add(name)
    return ordered


def data_tables(tables: Iterable[Table]) -> dict[str, Table]:
    return {table.name: table for table in tables if table.name not in BOOKKEEPING}


def _head() -> str:
    head = head_revision()
    if head is None:
        raise MaintenanceError("this anonbox's migrations have no single newest revision")
    return head


MIGRATE_FIRST = "run `anonbox migrate` on it first, or the anonbox version that made it"
RESTORE_WITH_ITS_VERSION = "restore it with the anonbox version that made it"


async def _require_head(side: Side, what: str, hint: str = MIGRATE_FIRST) -> str:
    head, revision = _head(), await side.revision()
    if revision != head:
        raise MaintenanceError(
            f"{what} is at schema revision {revision or 'none'}, and this anonbox's is "
            f"{head}: {hint}"
        )
    return head


async def _migrate(url: str) -> None:
    try:
        await asyncio.to_thread(upgrade, url)
    except Exception as exc:  # Alembic's and the drivers' errors alike: one line
        raise MaintenanceError(f"could not bring the target to the schema: {exc}") from exc


async def _refuse_unless_empty(side: Side) -> None:
    for table in sorted(data_tables(await side.tables())):
        if await side.has_rows(table):
            raise MaintenanceError(
                f"the target database is not empty (table {table} has rows): "
                "restore and move write only into an empty database, and changed nothing"
            )


def _is_new_file(url: str) -> bool:
    """Whether ``url`` names an SQLite file not made yet (empty, and nothing to open)."""
    dialect, target = driver_url(url)
    return dialect == "sqlite" and not Path(target).exists()


async def _check_target_empty(url: str) -> None:
    """Before anything is written, migrations included."""
    side = await open_reading(url)
    try:
        await _refuse_unless_empty(side)
    finally:
        await side.close()


async def copy_tables(source: Side, target: Side, progress: Progress) -> Copied:
    """Every table from ``source`` (a snapshot already begun) into ``target`` (a write
    transaction already begun), then the counts compared."""
    theirs, ours = data_tables(await source.tables()), data_tables(await target.tables())
    _refuse_unless_same_schema(theirs, ours, "the target")
    order = in_key_order(ours.values())
    counts = {table.name: await source.count(table.name) for table in order}
    progress.begin(sum(counts.values()))
    paused = await target.pause_triggers()  # the indexes built once, after the rows
    for table in order:  # the source's rows in the target's column order
        async for rows in source.rows(table, BATCH):
            await target.insert(table, rows)
            progress.advance(len(rows))
    await target.resume_triggers(paused)
    await target.advance_sequences()
    for table in order:
        arrived = await target.count(table.name)
        if arrived != counts[table.name]:
            raise MaintenanceError(
                f"table {table.name}: {counts[table.name]} rows read, {arrived} written"
            )
    problems = await target.check()
    if problems:
        raise MaintenanceError("the copy failed its checks: " + "; ".join(problems[:5]))
    return Copied(counts)


def _refuse_unless_same_schema(
    theirs: dict[str, Table], ours: dict[str, Table], ours_are: str
) -> None:
    if set(theirs) != set(ours):
        raise MaintenanceError(
            f"the two schemas differ: only in the source {sorted(set(theirs) - set(ours))}, "
            f"only in {ours_are} {sorted(set(ours) - set(theirs))}"
        )
    for name, table in ours.items():
        if set(table.columns) != set(theirs[name].columns):
            raise MaintenanceError(f"the two schemas differ in the columns of table {name}")


async def _head_schema() -> dict[str, Table]:
    """The tables this anonbox's migrations make, read from a scratch SQLite file migrated
    in a temporary directory of its own (a second, a few hundred kilobytes). Both databases
    have the same tables and columns (a backup and a move compare them), so it is the
    reference for a PostgreSQL target too."""
    with tempfile.TemporaryDirectory(prefix="anonbox-schema-") as scratch:
        path = Path(scratch) / "schema.db"
        await _migrate(f"sqlite:///{path}")
        side = SQLiteSide.reading(path)
        try:
            return data_tables(await side.tables())
        finally:
            await side.close()


async def _schema_of_target(url: str, *, new: bool) -> tuple[dict[str, Table], str]:
    """The tables the target will have once migrated: its own, read without a change, when
    it is at this anonbox's revision already (the migration will do nothing; a table added
    beside the migrations counts), else this anonbox's."""
    if not new:
        side = await open_reading(url)
        try:
            if await side.revision() == _head():
                return data_tables(await side.tables()), "the target"
        finally:
            await side.close()
    return await _head_schema(), "this anonbox's"


async def _copy_into(url: str, source: Side, progress: Progress, *, new: bool) -> Copied:
    """Into the empty database at ``url`` (``new``: an SQLite file not made yet). Every
    refusal that the source or the target's contents decide is made before the target is
    created or migrated: the source's tables against this anonbox's, then the target
    checked empty. A new file is written beside its name and renamed once whole, so a copy
    that fails later (a row the target will not take) leaves no file either."""
    ours, ours_are = await _schema_of_target(url, new=new)
    _refuse_unless_same_schema(data_tables(await source.tables()), ours, ours_are)
    if new:
        path = Path(driver_url(url)[1])
        if not path.parent.is_dir():
            raise MaintenanceError(f"no directory {path.parent} to restore the database into")
        partial = _new_private_partial(path)
        try:
            copied = await _migrate_and_fill(f"sqlite:///{partial}", source, progress)
            _put_in_place(partial, path)
            return copied
        finally:
            _remove_partial(partial)
    await _check_target_empty(url)
    return await _migrate_and_fill(url, source, progress)


async def _migrate_and_fill(url: str, source: Side, progress: Progress) -> Copied:
    """Migrated, then filled in one transaction (which finds it empty again before it writes)."""
    await _migrate(url)
    target = await open_writing(url)
    try:
        await _require_head(target, "the target database")
        await target.begin_write()
        await _refuse_unless_empty(target)
        await source.begin_snapshot()
        copied = await copy_tables(source, target, progress)
        await target.commit()
        return copied
    finally:
        await target.close()


# --- the files a backup and a restore write -----------------------------------------------
#
# A backup holds every e-mail address, webhook secret and session hash: its file is the
# owner's alone (0600) from the moment it exists, whatever the umask, and not chmod'ed
# afterwards, which would leave a moment in which anyone on the machine may open it and keep
# it open. SQLite gives its journal the mode of the database file. A database a restore
# creates holds the same, and is made the same way.

_SIDE_FILES = ("-journal", "-wal", "-shm")


def _new_private_partial(path: Path) -> Path:
    """An empty file beside ``path``, which only its owner may read or write."""
    partial = path.parent / f".{path.name}.partial"
    _remove_partial(partial)  # left by a copy that was killed
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise MaintenanceError(f"cannot create {partial}: {exc.strerror}") from exc
    try:
        os.fchmod(fd, 0o600)  # a umask such as 0277 would have taken the owner's write
    finally:
        os.close(fd)
    return partial


def _put_in_place(partial: Path, path: Path) -> None:
    """The whole file under its name, on disk; never over a file made meanwhile."""
    with partial.open("rb") as written:
        os.fsync(written.fileno())
    if path.exists():
        raise MaintenanceError(f"{path} was made meanwhile by something else: name a new file")
    partial.replace(path)


def _remove_partial(partial: Path) -> None:
    for name in (partial.name, *(partial.name + side for side in _SIDE_FILES)):
        (partial.parent / name).unlink(missing_ok=True)


def backup(database_url: str, out: Path, progress: Progress | None = None) -> Copied:
    """A consistent copy of the whole database into a new SQLite file ``out``, while the
    service goes on writing. The file appears whole, or not at all."""
    if out.exists():
        raise MaintenanceError(f"{out} exists already: name a new file")
    if not out.parent.is_dir():
        raise MaintenanceError(f"no directory {out.parent} to write the backup into")
    partial = _new_private_partial(out)
    try:
        with driver_errors():
            copied = asyncio.run(_backup(database_url, partial, progress or NoProgress()))
        _put_in_place(partial, out)
        return copied
    finally:
        _remove_partial(partial)


async def _backup(database_url: str, partial: Path, progress: Progress) -> Copied:
    source = await open_reading(database_url)
    try:
        revision = await _require_head(source, "the database")
        await _migrate(f"sqlite:///{partial}")
        target = SQLiteSide.writing(partial)
        try:
            await target.begin_write()
            await source.begin_snapshot()
            copied = await copy_tables(source, target, progress)
            await target.describe_backup(
                {
                    "format": str(BACKUP_FORMAT),
                    "revision": revision,
                    "source": source.dialect,
                    "taken_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "counts": json.dumps(copied.counts, sort_keys=True),
                }
            )
            await target.commit()
            return copied
        finally:
            await target.close()
    finally:
        await source.close()


async def check_backup(path: Path) -> SQLiteSide:
    """Open a backup file for reading once it has shown it is one, whole, of this schema."""
    try:
        side = SQLiteSide.reading(path)
    except MaintenanceError as exc:
        if _header_says_backup(path):  # its first page is whole, a later one is not
            raise MaintenanceError(f"{path} is damaged: {exc}") from exc
        raise MaintenanceError(f"{path} is not an anonbox backup: {exc}") from exc
    try:
        with driver_errors():  # a page too damaged to read, wherever the check meets it
            await _check_opened_backup(side, path)
    except DriverRefused as exc:
        await side.close()
        raise MaintenanceError(f"{path} is damaged: {exc}") from exc
    except BaseException:
        await side.close()
        raise
    return side


def _header_says_backup(path: Path) -> bool:
    """Whether the file's header is an SQLite one marked with a backup's application id
    (bytes 68 to 71, big-endian), read without SQLite, which refuses a damaged schema."""
    with path.open("rb") as file:
        header = file.read(72)
    return (
        len(header) == 72
        and header.startswith(b"SQLite format 3\x00")
        and int.from_bytes(header[68:72], "big") == BACKUP_APPLICATION_ID
    )


async def _check_opened_backup(side: SQLiteSide, path: Path) -> None:
    if await side.backup_marks() != (BACKUP_APPLICATION_ID, BACKUP_FORMAT):
        raise MaintenanceError(f"{path} is not an anonbox backup (made by `anonbox backup`)")
    problems = await side.check()
    if problems:
        # integrity_check's lines may hold line breaks of their own: one line says it all
        said = "; ".join(" ".join(problem.split()) for problem in problems[:5])
        raise MaintenanceError(f"{path} is damaged: {said}")
    facts = await side.backup_facts()
    await _require_head(side, f"the backup {path}", RESTORE_WITH_ITS_VERSION)
    recorded = json.loads(facts.get("counts", "{}"))
    tables = data_tables(await side.tables())
    if set(recorded) != set(tables):
        raise MaintenanceError(f"{path} is damaged: its tables are not those it recorded")
    for name in sorted(tables):
        if await side.count(name) != recorded[name]:
            raise MaintenanceError(
                f"{path} is damaged: table {name} does not hold the rows it recorded"
            )


def restore(database_url: str, path: Path, progress: Progress | None = None) -> Copied:
    """The backup at ``path`` into the empty database of ``database_url``."""
    if not path.is_file():
        raise MaintenanceError(f"no backup file at {path}")
    new = _is_new_file(database_url)
    with driver_errors():
        return asyncio.run(_restore(database_url, path, progress or NoProgress(), new=new))


async def _restore(database_url: str, path: Path, progress: Progress, *, new: bool) -> Copied:
    source = await check_backup(path)
    try:
        return await _copy_into(database_url, source, progress, new=new)
    finally:
        await source.close()


def move(database_url: str, to: str, progress: Progress | None = None) -> Copied:
    """Everything in the SQLite database of ``database_url`` into the empty PostgreSQL
    database at ``to``; the SQLite file is only read."""
    dialect, path = driver_url(database_url)
    if dialect != "sqlite":
        raise MaintenanceError(
            "move copies an SQLite database to PostgreSQL, and ANONBOX_DATABASE_URL is not SQLite"
        )
    if driver_url(to)[0] != "postgresql":
        raise MaintenanceError("--to must be a postgresql:// URL")
    if not Path(path).is_file():
        raise MaintenanceError(f"no SQLite database at {path} (ANONBOX_DATABASE_URL)")
    with driver_errors():
        return asyncio.run(_move(Path(path), to, progress or NoProgress()))


async def _move(path: Path, to: str, progress: Progress) -> Copied:
    source = SQLiteSide.reading(path)
    try:
        await _require_head(source, "the SQLite database")
        return await _copy_into(to, source, progress, new=False)
    finally:
        await source.close()
