"""The SQLite layer's read paths: reads answer on the loop's thread when they are quick,
and on the reader thread when they are not (or once were not), with the same answers
either way.

These drive ``SQLiteDatabase`` directly, because no endpoint can be made to read past
the inline budget without first storing thousands of rows through the rate limits.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from anonbox.core.database import INLINE_READ_STEPS, SQLiteDatabase

ROWS = 20_000  # counting them takes about three VM steps each: past the budget


async def _filled(path: Path) -> SQLiteDatabase:
    db = await SQLiteDatabase.open(str(path))
    async with db.transaction() as tx:
        await tx.execute("CREATE TABLE numbers (n INTEGER PRIMARY KEY)")
        await tx.execute(
            "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < $1)"
            " INSERT INTO numbers SELECT n FROM c",
            ROWS,
        )
    return db


def test_a_read_too_long_for_the_loop_is_answered_in_full(tmp_path: Path) -> None:
    assert ROWS * 3 > INLINE_READ_STEPS

    async def scenario() -> None:
        db = await _filled(tmp_path / "long.db")
        try:
            whole = await db.fetchrow("SELECT COUNT(*) AS n, SUM(n) AS total FROM numbers")
            assert whole is not None
            assert (whole["n"], whole["total"]) == (ROWS, ROWS * (ROWS + 1) // 2)
            every = await db.fetch("SELECT n FROM numbers ORDER BY n DESC")
            assert [row["n"] for row in every[:3]] == [ROWS, ROWS - 1, ROWS - 2]
            assert len(every) == ROWS
        finally:
            await db.close()

    asyncio.run(scenario())


def test_a_read_once_too_long_keeps_answering_with_every_commit(tmp_path: Path) -> None:
    # Past the budget once, a statement goes to the reader thread from then on: it must
    # answer as before, and see what was committed since.
    count = "SELECT COUNT(*) AS n FROM numbers WHERE n > $1"

    async def scenario() -> None:
        db = await _filled(tmp_path / "again.db")
        try:
            for added in range(1, 6):
                await db.execute("INSERT INTO numbers (n) VALUES ($1)", ROWS + added)
                row = await db.fetchrow(count, 0)
                assert row is not None
                assert row["n"] == ROWS + added
            quick = await db.fetchrow(count, ROWS + 4)  # the same statement, little to do
            assert quick is not None
            assert quick["n"] == 1
        finally:
            await db.close()

    asyncio.run(scenario())


def test_quick_reads_see_each_commit_at_once(tmp_path: Path) -> None:
    async def scenario() -> None:
        db = await _filled(tmp_path / "fresh.db")
        try:
            for n in range(ROWS + 1, ROWS + 51):
                await db.execute("INSERT INTO numbers (n) VALUES ($1)", n)
                row = await db.fetchrow("SELECT MAX(n) AS n FROM numbers")
                assert row is not None
                assert row["n"] == n
            await db.execute("DELETE FROM numbers WHERE n > $1", ROWS)
            assert await db.fetchrow("SELECT n FROM numbers WHERE n = $1", ROWS + 1) is None
        finally:
            await db.close()

    asyncio.run(scenario())
