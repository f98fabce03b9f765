"""``anonbox move --to postgresql://…``: everything from the SQLite file, nothing changed in it.

A creator's messages, replies, likes, API key and webhook, moved, are served the same by a
server on PostgreSQL; new posts there number their events past the moved ones; the SQLite
file's bytes are as they were. A wrong URL, a missing file, an unreachable server and a
target that holds anything are each one line and a non-zero exit.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.actions import post_message, post_reply, reply_items, whole_inbox
from tests.conftest import make_creator_in
from tests.maintenance.support import (
    anonbox,
    assert_refused,
    contents,
    counts,
    digest,
    sqlite_path,
    table_names,
)
from tests.server import Server, free_port
from tests.support.db import execute, query
from tests.support.http import loopback_client


def test_move_copies_everything_and_a_server_on_postgresql_serves_it(
    database_url_factory: Callable[..., str], tmp_path: Path
) -> None:
    source = database_url_factory("sqlite")
    creator = make_creator_in(source)  # its API key is made before the move
    before = Server(source, tmp_path / "sqlite.log").start()
    try:
        with loopback_client(base_url=before.url, timeout=30) as api:
            ids = [post_message(api, creator.link_id, f"before the move #{n}") for n in range(25)]
            post_reply(api, creator, ids[3], "answered on SQLite")
            liked = api.put(f"/message/{creator.link_id}/{ids[3]}/like", headers=creator.headers)
            assert liked.status_code == 200, liked.text
            hook = api.post(
                "/webhooks", json={"url": "https://example.com/hook"}, headers=creator.headers
            )
            assert hook.status_code == 201, hook.text
        inbox = whole_inbox(before.url, creator)
    finally:
        before.stop()
    file = sqlite_path(source)
    moved_from = digest(file)
    copied = counts(source)
    assert copied["events"] > 0, "no outbox rows: the sequence would go untested"

    target = database_url_factory("postgresql", migrated=False)
    done = anonbox("move", "--to", target, database_url=source, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "counts match" in done.stdout
    assert digest(file) == moved_from, "move changed the SQLite file"
    assert counts(target) == copied
    assert table_names(target) - {"alembic_version"} == set(copied)

    after = Server(target, tmp_path / "postgresql.log").start()
    try:
        assert whole_inbox(after.url, creator) == inbox
        with loopback_client(base_url=after.url, timeout=30) as api:
            item = api.get(
                f"/message/{creator.link_id}", params={"limit": 100}, headers=creator.headers
            )
            assert item.status_code == 200, item.text
            [third] = [m for m in item.json()["data"]["items"] if m["id"] == ids[3]]
            assert (third["like_by_creator"], third["reply_count"]) == (True, 1)
            assert [r["message_content"] for r in reply_items(api, creator, ids[3])] == [
                "answered on SQLite"
            ]
            hooks = api.get("/webhooks", headers=creator.headers)
            assert hooks.status_code == 200, hooks.text
            assert "https://example.com/hook" in hooks.text
            # A post writes an outbox event numbered by a sequence: past the moved ones.
            new = post_message(api, creator.link_id, "after the move")
            post_reply(api, creator, new, "answered on PostgreSQL")
        assert whole_inbox(after.url, creator)[new] == "after the move"
    finally:
        after.stop()
    seqs = [r["seq"] for r in query(target, "SELECT seq FROM events ORDER BY seq")]
    assert len(seqs) == len(set(seqs)) > copied["events"]


def test_move_refuses_a_database_that_holds_anything_and_changes_nothing(
    database_url_factory: Callable[..., str], tmp_path: Path
) -> None:
    source = database_url_factory("sqlite")
    make_creator_in(source)
    target = database_url_factory("postgresql")
    make_creator_in(target)
    before = contents(target)
    assert_refused(anonbox("move", "--to", target, database_url=source, cwd=tmp_path), "not empty")
    assert contents(target) == before


def test_a_new_table_is_moved_without_a_change_to_the_code(
    database_url_factory: Callable[..., str], tmp_path: Path
) -> None:
    """As a later migration would add one (with a key to users, and a flag): it is found
    in the catalog, copied after users, and its flag arrives as a boolean."""
    source = database_url_factory("sqlite")
    creator = make_creator_in(source)
    target = database_url_factory("postgresql")
    ddl = (
        "CREATE TABLE remote_follows (id VARCHAR(26) PRIMARY KEY,"
        " user_id VARCHAR(26) NOT NULL REFERENCES users (id), accepted BOOLEAN NOT NULL)"
    )
    execute(source, ddl)
    execute(target, ddl)
    execute(source, "INSERT INTO remote_follows VALUES ('f1', $1, 1)", creator.user_id)
    done = anonbox("move", "--to", target, database_url=source, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert query(target, "SELECT id, user_id, accepted FROM remote_follows") == [
        {"id": "f1", "user_id": creator.user_id, "accepted": True}
    ]


@pytest.mark.parametrize(
    ("case", "says"),
    [
        ("wrong url", "unsupported database URL"),
        ("not postgresql", "postgresql://"),
        ("missing file", "no SQLite database"),
        ("unreachable server", "cannot reach"),
        ("no such database", "does not exist"),
    ],
)
def test_move_says_what_is_wrong_in_one_line(
    case: str, says: str, database_url_factory: Callable[..., str], tmp_path: Path
) -> None:
    source = database_url_factory("sqlite")
    to = database_url_factory("postgresql", migrated=False)
    if case == "wrong url":
        to = "mysql://root@127.0.0.1/anonbox"
    elif case == "not postgresql":
        to = f"sqlite:///{tmp_path / 'other.db'}"
    elif case == "missing file":
        source = f"sqlite:///{tmp_path / 'nowhere' / 'anonbox.db'}"
    elif case == "unreachable server":
        to = f"postgresql://postgres@127.0.0.1:{free_port()}/anonbox"
    else:
        to = to.rsplit("/", 1)[0] + "/anonbox_no_such_database"
    done = anonbox("move", "--to", to, database_url=source, cwd=tmp_path, timeout=60)
    assert_refused(done, says)
    if case == "missing file":
        assert not sqlite_path(source).parent.exists(), "move made the missing file"
