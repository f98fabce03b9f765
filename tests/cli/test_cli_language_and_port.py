"""The command line as a self-hoster in Japan or Korea meets it (issue 41): ``anonbox creator
create --lang`` (else the server's ANONBOX_DEFAULT_LANGUAGE) makes a creator whose
dashboard and first link speak that language, and ``anonbox signin-link`` prints a link to
where the server is: ANONBOX_PUBLIC_URL, else the port ``serve`` was given (``make run
PORT=…`` says which command to run), never a hard-coded 8000."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from anonbox.links.prompts import default_prompt
from tests.server import Server, free_port
from tests.support.addresses import fresh_email
from tests.support.http import loopback_client, loopback_get
from tests.support.signin import signed_in

REPOSITORY = Path(__file__).resolve().parents[2]


def anonbox(
    server: Server, tmp_path: Path, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """``anonbox ARGS`` against ``server``'s database, with ``env`` added and none of this
    process's ANONBOX_ settings but the database."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("ANONBOX_")}
    return subprocess.run(
        [sys.executable, "-m", "anonbox", *args],
        env={**base, "ANONBOX_DATABASE_URL": server.database_url, **env},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def created(server: Server, tmp_path: Path, *args: str, **env: str) -> dict[str, str]:
    made = anonbox(
        server, tmp_path, "creator", "create", "--email", fresh_email(), "--json", *args, **env
    )
    assert made.returncode == 0, made.stderr
    document: dict[str, str] = json.loads(made.stdout)
    return document


def speaks(server: Server, creator: dict[str, str], browser_says: str = "") -> tuple[str, str]:
    """What the creator meets: their dashboard's language (in a browser whose
    Accept-Language is ``browser_says``), and their link's prompt."""
    headers = {"Accept-Language": browser_says} if browser_says else {}
    with signed_in(server, creator["user_id"]) as browser:
        dashboard = browser.get("/dashboard", headers=headers)
        assert dashboard.status_code == 200, dashboard.text
        lang = re.search(r'<html lang="([^"]+)"', dashboard.text)
        assert lang, dashboard.text
    with loopback_client(base_url=server.url, timeout=30) as api:
        link = api.get(f"/links/{creator['link_id']}", headers={"X-API-Key": creator["api_key"]})
        assert link.status_code == 200, link.text
    return lang.group(1), str(link.json()["data"]["prompt"])


@pytest.mark.parametrize("lang", ["ja", "ko", "es"])
def test_creator_create_lang_makes_a_creator_who_reads_that_language(
    server: Server, tmp_path: Path, lang: str
) -> None:
    creator = created(server, tmp_path, "--lang", lang)
    assert speaks(server, creator) == (lang, default_prompt(lang))
    assert default_prompt(lang) != default_prompt("en")  # a translation, not the English


def test_without_lang_the_servers_default_language_holds_else_english(
    server: Server, tmp_path: Path
) -> None:
    korean = created(server, tmp_path, ANONBOX_DEFAULT_LANGUAGE="ko")
    assert speaks(server, korean) == ("ko", default_prompt("ko"))
    # --lang wins over the server's default.
    japanese = created(server, tmp_path, "--lang", "ja", ANONBOX_DEFAULT_LANGUAGE="ko")
    assert speaks(server, japanese) == ("ja", default_prompt("ja"))
    english = created(server, tmp_path)
    assert speaks(server, english) == ("en", "Send me anonymous messages!")
    # Neither set: as before, the prompt is English and the first browser to open the
    # dashboard gives the account its language.
    unsaid = created(server, tmp_path)
    assert speaks(server, unsaid, "ja-JP,ja;q=0.9") == ("ja", "Send me anonymous messages!")
    # An explicit --lang en is English whatever the browser says.
    chosen = created(server, tmp_path, "--lang", "en")
    assert speaks(server, chosen, "ja-JP,ja;q=0.9") == ("en", "Send me anonymous messages!")


def test_signin_link_makes_a_new_creator_in_the_servers_default_language(
    server: Server, tmp_path: Path
) -> None:
    printed = anonbox(
        server,
        tmp_path,
        "signin-link",
        "--email",
        fresh_email(),
        "--base-url",
        server.url,
        ANONBOX_DEFAULT_LANGUAGE="ko",
    )
    assert printed.returncode == 0, printed.stderr
    with loopback_client(base_url=server.url, timeout=30) as browser:
        followed = browser.get(printed.stdout.strip(), headers={"Accept-Language": "en"})
        assert followed.status_code == 303, followed.text
        inbox = browser.get("/dashboard", follow_redirects=True)
    assert '<html lang="ko"' in inbox.text
    assert html.escape(default_prompt("ko")) in inbox.text


def test_a_language_anonbox_does_not_speak_is_refused_and_makes_no_creator(
    server: Server, tmp_path: Path
) -> None:
    email = fresh_email()
    refused = anonbox(server, tmp_path, "creator", "create", "--email", email, "--lang", "fr")
    assert refused.returncode == 2, refused.stdout
    assert "'fr' is not one of 'en', 'ja', 'ko', 'id', 'es'" in refused.stderr
    badly_set = anonbox(
        server, tmp_path, "creator", "create", "--email", email, ANONBOX_DEFAULT_LANGUAGE="klingon"
    )
    assert badly_set.returncode == 1
    assert badly_set.stderr.strip().splitlines() == [
        "error: ANONBOX_DEFAULT_LANGUAGE must be one of en, ja, ko, id, es, not 'klingon'"
    ]
    # Neither made the creator: the address is still free.
    made = anonbox(server, tmp_path, "creator", "create", "--email", email)
    assert made.returncode == 0, made.stderr


@pytest.mark.parametrize(
    ("env", "args", "starts"),
    [
        ({}, [], "http://127.0.0.1:8000/"),
        ({"ANONBOX_PORT": "8731"}, [], "http://127.0.0.1:8731/"),
        (
            {"ANONBOX_PORT": "8731", "ANONBOX_PUBLIC_URL": "https://box.example.org"},
            [],
            "https://box.example.org/",
        ),
        ({"ANONBOX_PORT": "8731"}, ["--base-url", "http://10.0.0.5:9000"], "http://10.0.0.5:9000/"),
    ],
)
def test_signin_link_points_where_the_server_is(
    server: Server, tmp_path: Path, env: dict[str, str], args: list[str], starts: str
) -> None:
    printed = anonbox(server, tmp_path, "signin-link", "--email", fresh_email(), *args, **env)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.startswith(starts), printed.stdout


def test_signin_link_refuses_a_port_that_is_no_port(server: Server, tmp_path: Path) -> None:
    printed = anonbox(
        server, tmp_path, "signin-link", "--email", fresh_email(), ANONBOX_PORT="http"
    )
    assert printed.returncode == 2
    assert "ANONBOX_PORT must be a port number, not 'http'" in printed.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_run_on_a_port_names_the_signin_command_whose_link_signs_in_there(
    database_url_factory: Callable[..., str], tmp_path: Path
) -> None:
    """``make run PORT=…``; its welcome names the sign-in command for that port; run from
    another shell as printed, it prints a link to that server, which signs in."""
    port = free_port()
    database_url = database_url_factory("sqlite")
    log = tmp_path / "make-run.log"
    base = {k: v for k, v in os.environ.items() if not k.startswith("ANONBOX_")}
    env = {**base, "ANONBOX_DATABASE_URL": database_url}
    with log.open("wb") as output:
        make = subprocess.Popen(
            ["make", "-o", ".venv/.installed", "-o", "fonts", "run", f"PORT={port}"],
            cwd=REPOSITORY,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while "signin-link" not in log.read_text() and time.monotonic() < deadline:
            assert make.poll() is None, log.read_text()
            time.sleep(0.1)
        [command] = [line.strip() for line in log.read_text().splitlines() if "signin-link" in line]
        assert command == (
            f"ANONBOX_PORT={port} .venv/bin/anonbox signin-link --email you@example.com"
        )
        # Another terminal: the same checkout, the same database, none of make's variables.
        # The line the server printed, as a person pastes it into a shell.
        printed = subprocess.run(  # noqa: S602
            command,
            shell=True,
            cwd=REPOSITORY,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert printed.returncode == 0, printed.stderr
        link = printed.stdout.strip()
        assert link.startswith(f"http://127.0.0.1:{port}/"), link
        opened = loopback_get(link)
        assert opened.status_code == 303, opened.text  # signed in, off to the dashboard
        assert "anonbox_session=" in opened.headers.get("set-cookie", "")
    finally:
        os.killpg(make.pid, signal.SIGTERM)
        make.wait(timeout=30)
