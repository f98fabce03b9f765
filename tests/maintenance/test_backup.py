"""``anonbox backup`` of a running service that takes posts, and ``anonbox restore``.

A backup is taken while a thread posts; the restored database, served by a new server,
shows the creator every message acknowledged before the backup began, with its text,
its like and its reply. A file that is not a whole backup of this schema, and a target
that holds anything, are refused with one line, and nothing changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pty
import select
import shutil
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import asyncpg
import httpx
import pytest

from anonbox.core.database import driver_url
from anonbox.maintenance.schemas import MaintenanceError
from anonbox.maintenance.service import check_backup
from tests.actions import post_message, post_reply, reply_items, whole_inbox
from tests.conftest import BACKENDS, Creator, make_creator_in
from tests.maintenance.support import (
    Posting,
    anonbox,
    anonbox_started,
    assert_refused,
    contents,
    counts,
    digest,
    fill,
    sqlite_path,
    table_names,
)
from tests.server import Server, free_port
from tests.support.http import loopback_client

# Messages on another creator's link, written straight to the database: the backup then
# copies for long enough that the poster's messages land while it runs (and, without a
# snapshot, between the counts and the copy, which the counts then catch).
FILLER = 30_000


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_backup_taken_while_posts_arrive_restores_every_acknowledged_post(
    backend: str, database_url_factory: Callable[..., str], tmp_path: Path
) -> None:
    url = database_url_factory(backend)
    server = Server(url, tmp_path / "running.log").start()
    posting = None
    try:
        creator = make_creator_in(url)
        with loopback_client(base_url=server.url, timeout=30) as api:
            first = post_message(api, creator.link_id, "the first message, answered and liked")
            post_reply(api, creator, first, "my answer, from before the backup")
            liked = api.put(f"/message/{creator.link_id}/{first}/like", headers=creator.headers)
            assert liked.status_code == 200, liked.text
        fill(url, make_creator_in(url).link_id, FILLER)  # a copy long enough for posts to land
        posting = Posting(server.url, creator.link_id)
        posting.start()
        deadline = time.monotonic() + 30
        while len(posting.so_far()) < 30 and time.monotonic() < deadline:
            time.sleep(0.05)
        before = posting.so_far()  # each answered before the backup was started
        assert len(before) >= 30, posting.failures
        done = anonbox(
            "backup", "--out", str(tmp_path / "site.anonbox"), database_url=url, cwd=tmp_path
        )
        during = len(posting.so_far()) - len(before)
        posting.stop.set()
        posting.join(timeout=30)
    finally:
        if posting is not None:
            posting.stop.set()
        server.stop()
    assert done.returncode == 0, done.stderr
    assert posting.failures == []
    assert during > 0, "no post arrived while the backup ran: it proved nothing"
    assert "backed up" in done.stdout

    restored_url = database_url_factory(backend)  # migrated, and empty
    restored = anonbox(
        "restore", "--from", str(tmp_path / "site.anonbox"), database_url=restored_url, cwd=tmp_path
    )
    assert restored.returncode == 0, restored.stderr
    second = Server(restored_url, tmp_path / "restored.log").start()
    try:
        inbox = whole_inbox(second.url, creator)
        with loopback_client(base_url=second.url, timeout=30) as api:
            replies = reply_items(api, creator, first)
            listed = api.get(
                f"/message/{creator.link_id}", params={"limit": 100}, headers=creator.headers
            )
            assert listed.status_code == 200, listed.text
            # Search finds the restored texts: the full-text index was built as well.
            found = {
                q: api.get(
                    f"/message/{creator.link_id}/search", params={"q": q}, headers=creator.headers
                )
                for q in ("answered and liked", "before the backup")  # a message, a reply
            }
    finally:
        second.stop()
    for q, answer in found.items():
        assert answer.status_code == 200, answer.text
        assert [m["id"] for m in answer.json()["data"]["items"]] == [first], q
    for message_id, text in before:
        assert inbox.get(message_id) == text, f"{message_id} was acknowledged before the backup"
    acknowledged = dict(posting.so_far())
    assert set(inbox) - {first} <= set(acknowledged), "a message nobody sent"
    assert len(inbox) >= len(before) + 1
    with sqlite3.connect(tmp_path / "site.anonbox") as conn:
        held = conn.execute(
            "SELECT count(*) FROM messages WHERE link_id = ?", (creator.link_id,)
        ).fetchone()[0]
        for index in ("messages_search", "replies_search"):  # the file's own indexes whole
            conn.execute(f"INSERT INTO {index} ({index}) VALUES ('integrity-check')")  # noqa: S608
    assert len(inbox) == held, "the restored inbox is not what the backup holds"
    assert inbox[first] == "the first message, answered and liked"
    assert [r["message_content"] for r in replies] == ["my answer, from before the backup"]
    [item] = [m for m in listed.json()["data"]["items"] if m["id"] == first] or [None]
    if item is not None:  # on the first page only if few posts came after it
        assert (item["like_by_creator"], item["reply_count"]) == (True, 1)


def backend_of(server: Server) -> str:
    return "sqlite" if server.database_url.startswith("sqlite") else "postgresql"


@pytest.fixture
def backed_up(server: Server, api: httpx.Client, creator: Creator, tmp_path: Path) -> Path:
    """A backup of the running server's database, which holds a message and a reply."""
    message = post_message(api, creator.link_id, "in the backup")
    post_reply(api, creator, message, "answered in the backup")
    out = tmp_path / "site.anonbox"
    done = anonbox("backup", "--out", str(out), database_url=server.database_url, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return out


def test_a_backup_holds_every_table_of_the_schema(server: Server, backed_up: Path) -> None:
    """Every table the database's catalog lists is in the backup, counted: none is named
    in the code, so a table a later migration adds is copied as well."""
    with sqlite3.connect(backed_up) as conn:
        recorded = json.loads(
            conn.execute("SELECT value FROM anonbox_backup WHERE name = 'counts'").fetchone()[0]
        )
    assert set(recorded) == table_names(server.database_url) - {"alembic_version"}
    assert {"messages", "replies", "links", "api_keys", "events"} <= set(recorded)
    assert recorded["messages"] > 0
    assert recorded["replies"] > 0


def test_restore_refuses_a_database_that_holds_anything_and_changes_nothing(
    server: Server,
    backed_up: Path,
    database_url_factory: Callable[..., str],
    tmp_path: Path,
) -> None:
    target = database_url_factory(backend_of(server))
    make_creator_in(target)  # one creator: not empty
    before = contents(target)
    refused = anonbox("restore", "--from", str(backed_up), database_url=target, cwd=tmp_path)
    assert_refused(refused, "not empty")
    assert contents(target) == before
    written = digest(backed_up)
    again = anonbox(
        "backup", "--out", str(backed_up), database_url=server.database_url, cwd=tmp_path
    )
    assert_refused(again, "exists already")  # nor is a backup written over
    assert digest(backed_up) == written


def _damaged_at(fraction: float) -> Callable[[Path, Path], Path]:
    """Junk over the second half of the page at ``fraction`` of the file (a fraction of 0:
    the first page after its header, which holds the schema). Where the junk lands decides
    which step of the check meets it (opening, the integrity check, the foreign keys, a
    count): every one must say "damaged". A sweep of every page of a backup, whole pages
    and half pages, found each of those steps."""

    def spoil(source: Path, into: Path) -> Path:
        shutil.copyfile(source, into)
        size = into.stat().st_size
        with into.open("r+b") as file:
            file.seek(int(size * fraction) // 4096 * 4096 + (2048 if fraction else 100))
            file.write(b"\xff" * 4096)
        return into

    return spoil


def _altered(source: Path, into: Path, *statements: str) -> Path:
    """A copy of the backup ``source`` at ``into``, with ``statements`` run on it."""
    shutil.copyfile(source, into)
    with sqlite3.connect(into) as conn:
        for statement in statements:
            conn.execute(statement)
    return into


def _other_revision(source: Path, into: Path) -> Path:
    return _altered(source, into, "UPDATE alembic_version SET version_num = '9999'")


def _short_of_a_row(source: Path, into: Path) -> Path:
    return _altered(
        source,
        into,
        "PRAGMA foreign_keys = ON",
        "DELETE FROM replies WHERE rowid = (SELECT max(rowid) FROM replies)",
    )


def _not_a_backup(source: Path, into: Path) -> Path:
    into.write_text("id,text\n1,hello\n")
    return into


def _a_column_more(source: Path, into: Path) -> Path:
    """A whole backup at this schema's revision, with a column this schema lacks."""
    return _altered(source, into, "ALTER TABLE stream_overlays ADD COLUMN colour TEXT")


def _a_table_fewer(source: Path, into: Path) -> Path:
    """A whole backup at this schema's revision, without one of its tables (and without
    its count, so the file is whole as far as it says)."""
    shutil.copyfile(source, into)
    with sqlite3.connect(into) as conn:
        conn.execute("DROP TABLE muted_words")
        recorded = json.loads(
            conn.execute("SELECT value FROM anonbox_backup WHERE name = 'counts'").fetchone()[0]
        )
        del recorded["muted_words"]
        conn.execute(
            "UPDATE anonbox_backup SET value = ? WHERE name = 'counts'", (json.dumps(recorded),)
        )
    return into


@pytest.mark.parametrize(
    ("spoil", "says"),
    [
        *((_damaged_at(n / 8), "damaged") for n in range(8)),
        (_other_revision, "revision 9999"),
        (_short_of_a_row, "damaged"),
        (_not_a_backup, "not an anonbox backup"),
        (_a_column_more, "the two schemas differ"),
        (_a_table_fewer, "the two schemas differ"),
    ],
)
def test_restore_checks_the_file_first_and_changes_nothing(
    spoil: Callable[[Path, Path], Path],
    says: str,
    server: Server,
    backed_up: Path,
    database_url_factory: Callable[..., str],
    tmp_path: Path,
) -> None:
    backend = backend_of(server)
    bad = spoil(backed_up, tmp_path / "bad.anonbox")
    target = database_url_factory(backend, migrated=False)  # not even a schema yet
    refused = anonbox("restore", "--from", str(bad), database_url=target, cwd=tmp_path)
    assert_refused(refused, says)
    if backend == "sqlite":
        assert not sqlite_path(target).exists(), "a refused restore made the database"
        assert list(sqlite_path(target).parent.iterdir()) == [], "a refused restore left a file"
    else:
        assert table_names(target) == set(), "a refused restore migrated the database"


def test_damage_on_any_page_is_refused_in_one_line_that_says_damaged(
    backed_up: Path, tmp_path: Path
) -> None:
    """Every page of a backup spoiled in turn, over the whole page and from its middle,
    and checked as restore checks it first: where the junk lands decides which step of
    the check meets it (opening the schema, the integrity check, the foreign keys, a
    count), and each must refuse with one line that says "damaged". The restore tests
    above go through the command for a few of these; a command per page would take
    minutes, so this sweep calls the check the command calls."""
    page_size = 4096
    pages = backed_up.stat().st_size // page_size
    bad = tmp_path / "bad.anonbox"
    said: dict[str, list[int]] = {}
    for page in range(1, pages):
        for offset in (0, page_size // 2):
            shutil.copyfile(backed_up, bad)
            with bad.open("r+b") as file:
                file.seek(page * page_size + offset)
                file.write(b"\xff" * page_size)
            try:
                side = asyncio.run(check_backup(bad))
            except MaintenanceError as refused:
                message = str(refused)
                if "\n" in message or "is damaged" not in message:
                    said.setdefault(message, []).append(page)
            else:
                asyncio.run(side.close())
                said.setdefault("accepted", []).append(page)
    assert said == {}, said


def test_a_backup_of_sqlite_restores_into_a_new_postgresql_database(
    database_url_factory: Callable[..., str], tmp_path: Path
) -> None:
    """One format for both engines: a backup restores into either."""
    source = database_url_factory("sqlite")
    creator = make_creator_in(source)
    out = tmp_path / "site.anonbox"
    assert anonbox("backup", "--out", str(out), database_url=source, cwd=tmp_path).returncode == 0
    target = database_url_factory("postgresql", migrated=False)
    done = anonbox("restore", "--from", str(out), database_url=target, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert counts(target) == counts(source)
    served = Server(target, tmp_path / "served.log").start()
    try:
        with loopback_client(base_url=served.url, timeout=30) as api:
            mine = api.get(f"/message/{creator.link_id}", headers=creator.headers)
            assert mine.status_code == 200, mine.text
    finally:
        served.stop()


def test_a_terminal_sees_a_progress_bar_and_a_pipe_does_not(
    database_url_factory: Callable[..., str], tmp_path: Path
) -> None:
    source = database_url_factory("sqlite")
    make_creator_in(source)
    piped = anonbox(
        "backup", "--out", str(tmp_path / "piped.anonbox"), database_url=source, cwd=tmp_path
    )
    assert piped.returncode == 0, piped.stderr
    assert piped.stderr == ""
    leader, follower = pty.openpty()
    try:
        shown = subprocess.run(
            [sys.executable, "-m", "anonbox", "backup", "--out", str(tmp_path / "seen.anonbox")],
            env={**os.environ, "ANONBOX_DATABASE_URL": source},
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=follower,
            timeout=120,
            check=False,
        )
        os.close(follower)
        follower = -1
        drawn = b""
        while select.select([leader], [], [], 0.5)[0]:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        if follower != -1:
            os.close(follower)
        os.close(leader)
    assert shown.returncode == 0
    assert b"backing up" in drawn
    assert b"100%" in drawn


@pytest.mark.parametrize(
    ("case", "says"),
    [
        ("wrong url", "unsupported database URL"),
        ("missing database", "no SQLite database"),
        ("unreachable server", "cannot reach"),
        ("missing backup", "no backup file"),
        ("missing directory", "no directory"),
    ],
)
def test_backup_and_restore_say_what_is_wrong_in_one_line(
    case: str, says: str, database_url_factory: Callable[..., str], tmp_path: Path
) -> None:
    url = database_url_factory("sqlite")
    out = tmp_path / "site.anonbox"
    if case == "wrong url":
        done = anonbox(
            "backup", "--out", str(out), database_url="mysql://x@127.0.0.1/a", cwd=tmp_path
        )
    elif case == "missing database":
        gone = f"sqlite:///{tmp_path / 'gone.db'}"
        done = anonbox("backup", "--out", str(out), database_url=gone, cwd=tmp_path)
        assert not (tmp_path / "gone.db").exists()
    elif case == "unreachable server":
        nobody = f"postgresql://postgres@127.0.0.1:{free_port()}/anonbox"
        done = anonbox("backup", "--out", str(out), database_url=nobody, cwd=tmp_path)
    elif case == "missing backup":
        done = anonbox("restore", "--from", str(out), database_url=url, cwd=tmp_path)
    else:
        done = anonbox(
            "backup", "--out", str(tmp_path / "no" / "x"), database_url=url, cwd=tmp_path
        )
    assert_refused(done, says)
    assert not out.exists()


@contextlib.contextmanager
def source_held(url: str) -> Iterator[None]:
    """The source database locked against the backup's reads until the block ends: on
    SQLite an exclusive lock on the whole file, on PostgreSQL on the messages table. The
    backup then waits with its file half made, where the test can look at it."""
    if url.startswith("sqlite"):
        holder = sqlite3.connect(sqlite_path(url), isolation_level=None)
        try:
            holder.execute("PRAGMA locking_mode = EXCLUSIVE")
            holder.execute("BEGIN EXCLUSIVE")
            yield
        finally:
            holder.close()
        return

    async def lock(locked: asyncio.Event, release: asyncio.Event) -> None:
        conn = await asyncpg.connect(driver_url(url)[1])
        try:
            async with conn.transaction():
                await conn.execute("LOCK TABLE messages IN ACCESS EXCLUSIVE MODE")
                locked.set()
                await release.wait()
        finally:
            await conn.close()

    loop = asyncio.new_event_loop()
    locked, release = asyncio.Event(), asyncio.Event()
    holding = threading.Thread(target=loop.run_until_complete, args=(lock(locked, release),))
    holding.start()
    try:
        assert asyncio.run_coroutine_threadsafe(locked.wait(), loop).result(timeout=30) is True
        yield
    finally:
        loop.call_soon_threadsafe(release.set)
        holding.join(timeout=30)
        loop.close()


def mode(path: Path) -> str:
    return oct(stat.S_IMODE(path.stat().st_mode))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_backup_is_its_owners_alone_from_its_first_byte_whatever_the_umask(
    backend: str, database_url_factory: Callable[..., str], tmp_path: Path
) -> None:
    """Under a umask that takes nothing away, the backup (every e-mail address, webhook
    secret and session hash) is 0600 while it is written and once it is whole."""
    url = database_url_factory(backend)
    make_creator_in(url)
    into = tmp_path / "backups"
    into.mkdir()
    out = into / "site.anonbox"
    partial = into / ".site.anonbox.partial"
    seen: list[str] = []
    with source_held(url):
        running = anonbox_started(
            "backup", "--out", str(out), database_url=url, cwd=tmp_path, umask=0
        )
        while running.poll() is None and not seen:  # the backup waits for the source
            try:
                seen.append(mode(partial))
            except FileNotFoundError:
                time.sleep(0.01)
        seen += [mode(into / name) for name in os.listdir(into)]  # its journal, if any yet
    _stdout, stderr = running.communicate(timeout=300)
    assert seen, f"the backup ended before its file was seen: {stderr}"
    assert running.returncode == 0, stderr
    assert set(seen) == {"0o600"}
    assert os.listdir(into) == [out.name]  # nothing partial left beside it
    assert mode(out) == "0o600"
    with sqlite3.connect(out) as conn:  # and it is a backup
        assert conn.execute("SELECT count(*) FROM users").fetchone()[0] == 1
