"""After the grace period a scheduled job erases the account for good: afterwards no row of
any table names the account or holds anything it wrote, its link ids answer 404 link_gone and are
never given out again, other accounts keep everything, and with two instances running
the job each account is erased exactly once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from anonbox.core.database import connect
from anonbox.links import repository as links_repository
from anonbox.links import service as links_service
from tests.account.conftest import (
    Furnished,
    furnish,
    insert_messages,
    send,
    signed_in,
    start_server,
    unique,
)
from tests.account.test_deletion import assert_gone
from tests.actions import assert_error
from tests.conftest import make_creator_in
from tests.server import Server
from tests.support.db import query
from tests.support.http import loopback_client

GRACE_SECONDS = 3.0
SHORT_GRACE = {"ANONBOX_ACCOUNT_ERASE_DAYS": f"{GRACE_SECONDS / 86400:.10f}"}
ERASED_LINE = "an account was erased"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def database_url(backend: str, database_url_factory: Callable[[str], str]) -> str:
    return database_url_factory(backend)


@pytest.fixture(scope="module")
def quick(
    backend: str, database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """A server that erases accounts 3 seconds after they ask."""
    running = start_server(database_url, tmp_path_factory.mktemp("erasure"), backend, SHORT_GRACE)
    yield running
    running.stop()
    assert "Traceback" not in running.log(), f"the server logged a traceback: {running.log_path}"


def wait_until(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def erased(database_url: str, user_id: str) -> bool:
    return not query(database_url, "SELECT 1 AS one FROM users WHERE id = $1", user_id)


def every_row(database_url: str) -> dict[str, list[dict[str, Any]]]:
    """Every row of every table, whoever made the table."""
    if database_url.startswith("sqlite"):
        names = "SELECT name FROM sqlite_master WHERE type = 'table'"
    else:
        names = (
            "SELECT table_name AS name FROM information_schema.tables"
            " WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
        )
    return {
        row["name"]: query(database_url, f'SELECT * FROM "{row["name"]}"')  # noqa: S608
        for row in query(database_url, names)
    }


def cell_text(value: Any) -> str:
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("latin-1")
    return str(value)


def rows_naming(database_url: str, needles: set[str]) -> list[str]:
    """Where any needle appears, but in the tombstones: they keep the erased link ids, and
    nothing else (checked on their own)."""
    found = []
    for table, rows in every_row(database_url).items():
        if table == "link_tombstones":
            continue
        for row in rows:
            for column, value in row.items():
                text = cell_text(value)
                found += [f"{table}.{column}: {n!r}" for n in needles if n and n in text]
    return found


def test_after_the_grace_period_no_row_anywhere_names_the_account(
    quick: Server, backend: str
) -> None:
    with loopback_client(base_url=quick.url, timeout=60) as api:
        victim = furnish(quick, api)
        bystander = furnish(quick, api)
        # Several chunks of the erasure's deletes, on the first link.
        assert (
            insert_messages(
                quick.database_url,
                victim.creator.link_id,
                (f"zqbulk{i:05d} seeded" for i in range(4_500)),
            )
            == 4_500
        )
        needles = victim.secrets() | {f"zqbulk{i:05d}" for i in (0, 2_222, 4_499)}
        assert rows_naming(quick.database_url, needles), "the check finds what is there"

        asked = api.post("/account/deletion", headers=victim.session)
        assert asked.status_code == 201, asked.text
        wait_until(lambda: erased(quick.database_url, victim.creator.user_id))

        assert rows_naming(quick.database_url, needles) == []
        kept = api.get("/account/export", headers=bystander.creator.headers)
        assert kept.status_code == 200
        assert {m["id"]: m["message_content"] for m in kept.json()["data"]["messages"]} == (
            bystander.messages
        )
        assert all(text in kept.text for text in bystander.replies.values())
        tombstones = query(quick.database_url, "SELECT * FROM link_tombstones")
        assert {t["id"] for t in tombstones} >= set(victim.link_ids)
        assert all(set(t) == {"id", "erased_at"} for t in tombstones)
        for link_id in victim.link_ids:
            assert_gone(send(api, link_id, unique("to an erased link")))
            assert_error(api.get(f"/links/{link_id}/public"), 404, "link_gone")
        assert_error(api.get("/user", headers=victim.session), 401)
    lines = [line for line in quick.log().splitlines() if ERASED_LINE in line]
    assert lines
    assert not [line for line in lines if victim.creator.user_id in line or victim.email in line]


def test_an_erased_link_id_is_never_given_out_again(
    quick: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    with loopback_client(base_url=quick.url, timeout=60) as api:
        victim = make_creator_in(quick.database_url)
        api.post("/account/deletion", headers=signed_in(quick.database_url, victim.user_id))
        wait_until(lambda: erased(quick.database_url, victim.user_id))
    someone = make_creator_in(quick.database_url)
    offered = iter([victim.link_id, victim.link_id, "zqfreshid1"])
    monkeypatch.setattr(links_repository, "new_link_id", lambda: next(offered))

    async def create() -> str:
        db = await connect(quick.database_url)
        try:
            made = await links_service.create_link(db, user_id=someone.user_id, prompt="mine")
            return made.id
        finally:
            await db.close()

    assert asyncio.run(create()) == "zqfreshid1"
    assert next(offered, None) is None  # both offers of the erased id were refused
    rows = query(quick.database_url, "SELECT user_id FROM links WHERE id = $1", victim.link_id)
    assert rows == []


@pytest.mark.slow
def test_two_instances_erase_each_account_exactly_once(
    quick: Server, backend: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    second = start_server(
        quick.database_url, tmp_path_factory.mktemp("erasure-2"), backend, SHORT_GRACE
    )
    try:
        before = quick.log().count(ERASED_LINE)
        doomed: list[Furnished] = []
        with loopback_client(base_url=quick.url, timeout=60) as api:
            for _ in range(6):
                account = make_creator_in(quick.database_url)
                insert_messages(
                    quick.database_url, account.link_id, (f"m{i}" for i in range(3_000))
                )
                session = signed_in(quick.database_url, account.user_id)
                assert api.post("/account/deletion", headers=session).status_code == 201
                doomed.append(Furnished(account, session, "", [account.link_id]))
        for account in doomed:
            wait_until(lambda a=account: erased(quick.database_url, a.creator.user_id))
        time.sleep(1.0)  # a late second erasure would have logged by now
        total = quick.log().count(ERASED_LINE) - before + second.log().count(ERASED_LINE)
        assert total == len(doomed)
        assert second.log().count(ERASED_LINE) + quick.log().count(ERASED_LINE) > before
    finally:
        second.stop()
    assert "Traceback" not in second.log()


def database_files(database_url: str) -> dict[str, bytes]:
    """The SQLite database's files as they are on disk: the database, its WAL and index."""
    path = Path(database_url.removeprefix("sqlite:///"))
    return {
        suffix or ".db": Path(f"{path}{suffix}").read_bytes()
        for suffix in ("", "-wal", "-shm")
        if Path(f"{path}{suffix}").exists()
    }


def copies(database_url: str, needles: set[str]) -> list[str]:
    files = database_files(database_url)
    return [f"{name}: {n!r}" for name, data in files.items() for n in needles if n.encode() in data]


# SQLite's only: PostgreSQL's files are the server's (docs/decisions.md says what stays).
@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_erased_texts_leave_no_copy_in_the_sqlite_files(quick: Server) -> None:
    """SQLite keeps what a delete changed in its WAL, and deleted cells in free space; after
    the erasure neither the database file, the WAL nor its index holds a word of it."""
    with loopback_client(base_url=quick.url, timeout=60) as api:
        victim = make_creator_in(quick.database_url)
        session = signed_in(quick.database_url, victim.user_id)
        needles = set()
        message_ids = []
        for text in (unique("zqwalsecret"), "消えるはずの秘密の言葉" + unique("ひみつ")):
            for _ in range(3):  # several pages, several WAL frames
                sent = send(api, victim.link_id, text)
                assert sent.status_code == 201, sent.text
                message_ids.append(sent.json()["data"]["id"])
            needles.add(text)
        reply = "返事もまた消える" + unique("zqreply")
        answered = api.post(
            f"/message/{victim.link_id}/{message_ids[0]}",
            json={"message_content": reply},
            headers=victim.headers,
        )
        assert answered.status_code == 201, answered.text
        needles.add(reply)
        assert len(copies(quick.database_url, needles)) >= len(needles), "the check finds them"

        before = quick.log().count(ERASED_LINE)
        assert api.post("/account/deletion", headers=session).status_code == 201
        wait_until(lambda: quick.log().count(ERASED_LINE) > before)

    assert copies(quick.database_url, needles) == []
    assert database_files(quick.database_url).get("-wal", b"") == b""  # emptied, truncated
