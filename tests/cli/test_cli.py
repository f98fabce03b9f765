"""The ``anonbox`` command line makes creators whose keys work, and migrates fresh databases."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.maintenance.support import anonbox as run_anonbox
from tests.server import Server, free_port
from tests.support.addresses import fresh_email
from tests.support.db import query
from tests.support.http import loopback_get


def anonbox(*args: str, database_url: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_anonbox(*args, database_url=database_url, cwd=cwd, timeout=120)


def create_creator(email: str, server: Server, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``anonbox creator create --email EMAIL --json`` against ``server``'s database."""
    return anonbox(
        "creator", "create", "--email", email, "--json", database_url=server.database_url, cwd=cwd
    )


def test_creator_create_json_prints_a_working_api_key(
    server: Server, api: httpx.Client, tmp_path: Path
) -> None:
    email = fresh_email()
    made = create_creator(email, server, tmp_path)
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
    first = create_creator(f"{local}@example.com", server, tmp_path)
    assert first.returncode == 0, first.stderr
    second = create_creator(f"{local}@EXAMPLE.com", server, tmp_path)
    assert second.returncode != 0, f"a second creator for the same mailbox: {second.stdout}"
    assert second.stdout == ""


@pytest.mark.parametrize("email", ["not-an-email", "", "a@" + "b" * 400 + ".com"])
def test_creator_create_rejects_what_is_not_an_email(
    server: Server, tmp_path: Path, email: str
) -> None:
    made = create_creator(email, server, tmp_path)
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


def _upgrade_in_a_new_process(database_url: str) -> bool:
    """``upgrade`` as ``anonbox serve`` runs it; whether it needed Alembic."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from anonbox.migrations import upgrade;"
            f" upgrade({database_url!r}); print('alembic' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout.strip().splitlines()[-1] == "True"


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_start_on_the_newest_schema_skips_alembic_and_an_older_one_is_migrated(
    backend: str, database_url_factory: Callable[..., str]
) -> None:
    from alembic import command
    from alembic.script import ScriptDirectory

    from anonbox.migrations import alembic_config, head_revision

    url = database_url_factory(backend, migrated=False)
    config = alembic_config(url)
    script = ScriptDirectory.from_config(config)
    head = script.get_current_head()
    assert head_revision() == head  # read from the files as Alembic reads them
    previous = script.get_revision(head).down_revision
    assert isinstance(previous, str)
    command.upgrade(config, previous)  # a database one migration behind

    assert _upgrade_in_a_new_process(url)  # behind: Alembic runs
    assert query(url, "SELECT version_num FROM alembic_version") == [{"version_num": head}]
    assert not _upgrade_in_a_new_process(url)  # at the newest: read, compared, done
    assert query(url, "SELECT version_num FROM alembic_version") == [{"version_num": head}]


REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_run_serves_on_the_port_and_host_it_is_given(
    database_url_factory: Callable[..., str], tmp_path: Path
) -> None:
    """``make run PORT=… HOST=…``, as the README says. Only the recipe runs: ``-o`` takes
    the install it depends on (.venv, the fonts) as done, as ``make test`` has done it."""
    port = free_port()
    log = tmp_path / "make-run.log"
    env = {**os.environ, "ANONBOX_DATABASE_URL": database_url_factory("sqlite")}
    env.pop("ANONBOX_LOG_FORMAT", None)
    command = ["make", "-o", ".venv/.installed", "-o", "fonts", "run"]
    with log.open("wb") as output:
        make = subprocess.Popen(
            [*command, f"PORT={port}", "HOST=127.0.0.1"],
            cwd=REPOSITORY,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # make and the server it starts, stopped together
        )
    try:
        deadline = time.monotonic() + 60
        welcome = f"anonbox is up at http://127.0.0.1:{port}/"
        while welcome not in log.read_text() and time.monotonic() < deadline:
            assert make.poll() is None, log.read_text()
            time.sleep(0.1)
        assert loopback_get(f"http://127.0.0.1:{port}/healthz").status_code == 200
    finally:
        os.killpg(make.pid, signal.SIGTERM)
        make.wait(timeout=30)
    lines = log.read_text().splitlines()
    assert [line for line in lines if welcome in line], lines
    assert [line for line in lines if "route=/healthz status=200" in line], lines  # text
