"""Alembic migrations, run with the project's plain database URL.

``upgrade(url)`` is what ``anonbox migrate`` and ``anonbox serve`` call. On PostgreSQL the
upgrade holds an advisory lock, so instances starting together migrate one at a time.

A database already at the newest revision is recognised without Alembic: the revision
it records is read with the plain driver and compared with the newest file's in
``versions/``. Importing Alembic and SQLAlchemy and letting Alembic find nothing to do
took about half a second of CPU at every start; anything else (no database yet, an older
revision, a revision unknown here) goes through Alembic as before.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

from anonbox.core.database import driver_url

if TYPE_CHECKING:
    from alembic.config import Config

_log = logging.getLogger(__name__)
VERSIONS = Path(__file__).parent / "versions"
_REVISION = re.compile(r'^(down_revision|revision) = (?:"([^"]+)"|None)$', re.MULTILINE)


def sqlalchemy_url(url: str) -> str:
    dialect, target = driver_url(url)
    if dialect == "sqlite":
        return f"sqlite+aiosqlite:///{target}"
    return "postgresql+asyncpg://" + target.split("://", 1)[1]


def alembic_config(url: str) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent))
    config.attributes["sqlalchemy_url"] = sqlalchemy_url(url)
    return config


def head_revision() -> str | None:
    """The revision no migration file names as its ``down_revision``; None unless there is
    exactly one (Alembic decides then)."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in VERSIONS.glob("*.py"):
        for name, value in _REVISION.findall(path.read_text(encoding="utf-8")):
            if value:
                (revisions if name == "revision" else parents).add(value)
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 else None


def current_revision(url: str) -> str | None:
    """The revision the database records, read with the plain driver; None when there is
    none, or it cannot be read (Alembic then says why)."""
    dialect, target = driver_url(url)
    try:
        if dialect == "sqlite":
            if target == ":memory:" or not Path(target).is_file():
                return None
            with closing(sqlite3.connect(f"file:{target}?mode=ro", uri=True)) as conn:
                rows = conn.execute("SELECT version_num FROM alembic_version").fetchall()
        else:
            rows = asyncio.run(_postgres_revision(target))
    except Exception:  # any doubt goes the long way, through Alembic
        return None
    return str(rows[0][0]) if len(rows) == 1 else None


async def _postgres_revision(dsn: str) -> list[tuple[str]]:
    import asyncpg

    conn = await asyncpg.connect(dsn, timeout=10)
    try:
        rows = await conn.fetch("SELECT version_num FROM alembic_version")
        return [(row[0],) for row in rows]
    finally:
        await conn.close()


def upgrade(url: str) -> None:
    head = head_revision()
    if head is not None and current_revision(url) == head:
        _log.info("The database is at revision %s, the newest: nothing to migrate", head)
        return
    from alembic import command

    dialect, target = driver_url(url)
    if dialect == "sqlite" and target != ":memory:":
        Path(target).parent.mkdir(parents=True, exist_ok=True)
    command.upgrade(alembic_config(url), "head")
