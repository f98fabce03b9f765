"""The ``anonbox`` command line makes creators whose keys work, and migrates fresh databases."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest

from tests.server import Server, free_port
from tests.support.db import query


def anonbox(*args: str, database_url: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ANONBOX_DATABASE_URL": database_url}
    return subprocess.run(
        [sys.executable, "-m", "anonbox", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def fresh_email() -> str:
    return f"cli-{uuid.uuid4().hex[:10]}@example.com"


def test_creator_create_json_prints_a_working_api_key(
    server: Server, api: httpx.Client, tmp_path: Path
) -> None:
    email = fresh_email()
    made = anonbox(
        "creator",
        "create",
        "--email",
        email,
        "--json",
        database_url=server.database_url,
        cwd=tmp_path,
    )
    assert made.returncode == 0, made.stderr
    lines = made.stdout.strip().splitlines()
    assert len(lines) == 1, made.stdout
    creator = json.loads(lines[0])
    assert isinstance(creator, dict)
    assert {"user_id", "link_id", "api_key"} <= creator.keys()
    assert creator["api_key"].startswith("anb_")
    assert len(creator["api_key"]) > len("anb_") + 20
    assert creator["user_id"]
    assert creator["link_id"]

    inbox = f"/message/{creator['link_id']}"
    key = {"X-API-Key": creator["api_key"]}
    sent = api.post(inbox, json={"message_content": "hello from the CLI test"})
    assert sent.status_code == 201, sent.text
    message_id = sent.json()["data"]["id"]
    replied = api.post(f"{inbox}/{message_id}", json={"message_content": "hi!"}, headers=key)
    assert replied.status_code == 201, replied.text
    liked = api.put(f"{inbox}/{message_id}/like", headers=key)
    assert liked.status_code == 200, liked.text
    assert liked.json()["data"] == {"message_id": message_id, "like_by_creator": True}
    listed = api.get(inbox, headers=key).json()["data"]["items"]
    assert [(m["id"], m["like_by_creator"], m["reply_count"]) for m in listed] == [
        (message_id, True, 1)
    ]


def test_creator_create_same_email_twice_fails_cleanly(server: Server, tmp_path: Path) -> None:
    email = fresh_email()
    args = ("creator", "create", "--email", email, "--json")
    first = anonbox(*args, database_url=server.database_url, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    second = anonbox(*args, database_url=server.database_url, cwd=tmp_path)
    assert second.returncode != 0
    assert second.stdout == ""
    assert email in second.stderr
    assert "already exists" in second.stderr
    assert "Traceback" not in second.stderr


def test_email_domain_case_does_not_make_a_second_creator(server: Server, tmp_path: Path) -> None:
    local = f"cli-{uuid.uuid4().hex[:10]}"
    first = anonbox(
        "creator",
        "create",
        "--email",
        f"{local}@example.com",
        "--json",
        database_url=server.database_url,
        cwd=tmp_path,
    )
    assert first.returncode == 0, first.stderr
    second = anonbox(
        "creator",
        "create",
        "--email",
        f"{local}@EXAMPLE.com",
        "--json",
        database_url=server.database_url,
        cwd=tmp_path,
    )
    assert second.returncode != 0, f"a second creator for the same mailbox: {second.stdout}"
    assert second.stdout == ""


@pytest.mark.parametrize("email", ["not-an-email", "", "a@" + "b" * 400 + ".com"])
def test_creator_create_rejects_what_is_not_an_email(
    server: Server, tmp_path: Path, email: str
) -> None:
    made = anonbox(
        "creator",
        "create",
        "--email",
        email,
        "--json",
        database_url=server.database_url,
        cwd=tmp_path,
    )
    assert made.returncode != 0
    assert made.stdout == ""
    assert made.stderr.strip()
    assert "Traceback" not in made.stderr


def test_migrate_creates_a_fresh_sqlite_database(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "dir" / "anonbox.db"
    url = f"sqlite:///{path}"
    migrated = anonbox("migrate", database_url=url, cwd=tmp_path)
    assert migrated.returncode == 0, migrated.stderr
    assert path.is_file()
    tables = {
        row["name"] for row in query(url, "SELECT name FROM sqlite_master WHERE type='table'")
    }
    assert {"users", "links", "api_keys", "messages", "replies"} <= tables
    again = anonbox("migrate", database_url=url, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    made = anonbox("creator", "create", "--email", fresh_email(), database_url=url, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "anb_" in made.stdout
    assert not (tmp_path / "anonbox.db").exists()


@pytest.mark.parametrize(
    "database_url",
    [
        pytest.param("mysql://root@127.0.0.1/anonbox", id="unsupported-scheme"),
        pytest.param(f"postgresql://postgres@127.0.0.1:{free_port()}/anonbox", id="unreachable"),
    ],
)
def test_migrate_with_a_bad_database_url_says_so_without_a_traceback(
    tmp_path: Path, database_url: str
) -> None:
    migrated = anonbox("migrate", database_url=database_url, cwd=tmp_path)
    assert migrated.returncode != 0
    assert "Traceback" not in migrated.stderr, migrated.stderr[-2000:]
    assert migrated.stderr.strip()
