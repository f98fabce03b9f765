"""Logs: one JSON object per line on stderr, one line per request joined to its answer by
X-Request-ID, and nothing in them that names a sender or what was sent."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.actions import assert_error
from tests.conftest import Creator, make_creator_in
from tests.safety.test_privacy import IPV4, found_in
from tests.server import Server
from tests.support.forms import csrf_of
from tests.support.http import loopback_client
from tests.support.servers import own_server

GENERATED_ID = re.compile(r"^[0-9a-f]{16}$")
REQUEST_KEYS = {
    "ts",
    "level",
    "logger",
    "pid",
    "event",
    "request_id",
    "method",
    "route",
    "status",
    "duration_ms",
}

# Who writes the start-up's schema check: Alembic when it migrates, anonbox's own line when
# the database is already at the newest revision (anonbox.migrations.upgrade).
MIGRATION_LOGGERS = ("alembic", "anonbox.migrations")


def request_line(server: Server, request_id: str) -> dict[str, Any]:
    """The one log line of the request with this id; waits for it to be written (the
    line follows the answer)."""
    deadline = time.monotonic() + 10
    while True:
        found = [
            record
            for record in server.log_records()
            if record.get("event") == "request" and record.get("request_id") == request_id
        ]
        if found or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert len(found) == 1, f"{len(found)} lines for request {request_id}"
    return found[0]


def utc(ts: str) -> datetime:
    assert ts.endswith("Z"), ts
    moment = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    assert moment.utcoffset() == timedelta(0)
    return moment


def test_a_request_leaves_one_json_line_with_the_id_it_answered_with(
    api: httpx.Client, server: Server, creator: Creator
) -> None:
    before = datetime.now(UTC)
    sent = api.post(f"/message/{creator.link_id}", json={"message_content": "logged"})
    assert sent.status_code == 201, sent.text
    request_id = sent.headers["x-request-id"]
    assert GENERATED_ID.match(request_id), request_id

    line = request_line(server, request_id)
    assert set(line) == REQUEST_KEYS
    assert line["event"] == "request"
    assert line["level"] == "info"
    assert line["logger"] == "anonbox.request"
    assert line["method"] == "POST"
    assert line["route"] == "/message/{link_id}"
    assert line["status"] == 201
    assert isinstance(line["duration_ms"], float | int)
    assert line["duration_ms"] >= 0
    assert isinstance(line["pid"], int)
    stamp = utc(line["ts"])
    assert before - timedelta(seconds=1) <= stamp <= datetime.now(UTC) + timedelta(seconds=1)


@pytest.mark.parametrize(
    ("method", "path", "status", "route"),
    [
        ("GET", "/no/such-route/anywhere/here", 404, "unmatched"),
        ("GET", "/message/bad%20id!", 400, "/message/{link_id}"),
        ("PATCH", "/message/abcdefghij", 405, "unmatched"),
    ],
)
def test_errors_carry_a_request_id_and_are_logged_by_route_template(
    api: httpx.Client, server: Server, method: str, path: str, status: int, route: str
) -> None:
    response = api.request(method, path)
    assert_error(response, status)
    line = request_line(server, response.headers["x-request-id"])
    assert (line["method"], line["route"], line["status"]) == (method, route, status)


def test_a_well_formed_request_id_is_kept(api: httpx.Client, server: Server) -> None:
    for request_id in (str(uuid.uuid4()), "trace-1.2:3_x", "A" * 128):
        response = api.get("/healthz", headers={"X-Request-ID": request_id})
        assert response.headers["x-request-id"] == request_id
        assert request_line(server, request_id)["route"] == "/healthz"
    missing = api.get("/no/such-route/anywhere/here", headers={"X-Request-ID": "kept-on-404"})
    assert_error(missing, 404)
    assert missing.headers["x-request-id"] == "kept-on-404"


@pytest.mark.parametrize(
    "malformed",
    [
        pytest.param("", id="empty"),
        pytest.param("has space", id="space"),
        pytest.param("A" * 129, id="too-long"),
        pytest.param('{"event":"forged"}', id="json"),
        pytest.param("a;b=c", id="separators"),
        pytest.param("line\tbreak", id="tab"),
    ],
)
def test_a_malformed_request_id_is_replaced(
    api: httpx.Client, server: Server, malformed: str
) -> None:
    response = api.get("/healthz", headers={"X-Request-ID": malformed})
    assert response.status_code == 200
    replaced = response.headers["x-request-id"]
    assert GENERATED_ID.match(replaced), replaced
    assert request_line(server, replaced)["status"] == 200
    if malformed:
        assert malformed not in server.log()


def test_every_request_gets_its_own_id(api: httpx.Client) -> None:
    ids = {api.get("/healthz").headers["x-request-id"] for _ in range(20)}
    assert len(ids) == 20


def test_every_line_of_the_log_is_a_json_object(api: httpx.Client, server: Server) -> None:
    api.get("/healthz")
    records = server.log_records()  # fails on any line that is not one JSON object
    assert any(r["event"].startswith("Uvicorn running on") for r in records)  # uvicorn's own
    assert any(r["logger"].startswith(MIGRATION_LOGGERS) for r in records)  # the migration
    for record in records:
        assert {"ts", "level", "logger", "pid", "event"} <= set(record), record
        utc(record["ts"])


# --- a server behind a trusted proxy, to show what is never written ------------------------


proxied_server = own_server(
    "proxied_server",
    {"ANONBOX_TRUSTED_PROXIES": "127.0.0.1/32", "ANONBOX_LIMIT_SENDER_LINK": "1/60"},
)


def test_the_log_names_no_address_no_path_no_query_and_no_body(proxied_server: Server) -> None:
    server = proxied_server
    creator = make_creator_in(server.database_url)
    canary = f"canary-{uuid.uuid4().hex}"
    sender = {"X-Forwarded-For": IPV4}
    ids = []
    with loopback_client(base_url=server.url, timeout=30, headers=sender) as api:
        link = f"/message/{creator.link_id}"
        seen = [
            api.post(link, json={"message_content": f"body {canary}"}),
            api.post(link, json={"message_content": " "}),  # 400
            api.post(link, content=canary.encode(), headers={"content-type": "text/plain"}),
            api.get(link, params={"limit": 7, "q": canary}),
            api.get(f"/no/such-route/{canary}/here", params={"q": canary}),
            api.get(f"/message/{canary}"),  # a link that does not exist
            api.post(link, json={"message_content": canary}),  # the limit is 1 a minute
        ]
        for response in seen:
            assert response.json()["metadata"]["ip"] == IPV4  # the server did see it
            ids.append(response.headers["x-request-id"])
        assert {r.status_code for r in seen} >= {201, 400, 404, 415, 429}
    for request_id in ids:
        request_line(server, request_id)
    server.stop()  # everything it would write is written

    log = server.log_path.read_bytes()
    assert found_in(log, IPV4) == []
    assert canary.encode() not in log
    assert creator.link_id.encode() not in log
    assert b"limit=7" not in log


def test_a_bad_log_setting_stops_serve_with_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "anonbox", "serve", "--port", "1"],
        env={**os.environ, "ANONBOX_LOG_FORMAT": "xml"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert "ANONBOX_LOG_FORMAT" in result.stderr
    assert "Traceback" not in result.stderr


text_logging = own_server("text_logging", {"ANONBOX_LOG_FORMAT": "text"}, backends=("sqlite",))


def test_text_logs_on_request(text_logging: Server) -> None:
    with loopback_client(base_url=text_logging.url, timeout=30) as api:
        request_id = api.get("/healthz").headers["x-request-id"]
    log = text_logging.log()
    assert not log.lstrip().startswith("{")
    [line] = [line for line in log.splitlines() if f"request_id={request_id}" in line]
    assert "route=/healthz" in line
    assert "status=200" in line


def _signin_link_asked_for(server: Server, address: str) -> None:
    """Ask for an e-mail sign-in link as a person does: open /signin, type, press."""
    with loopback_client(base_url=server.url, timeout=30) as browser:
        page = browser.get("/signin")
        assert page.status_code == 200, page.text
        asked = browser.post(
            "/signin/email", data={"csrf_token": csrf_of(page.text), "email": address}
        )
        assert asked.status_code == 200, asked.text


def test_in_development_serve_logs_text_and_the_sign_in_mail_reads_as_written(
    database_url_factory: Callable[[str], str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No ANONBOX_LOG_FORMAT and no ANONBOX_ENV: a developer's `anonbox serve`."""
    logs = tmp_path_factory.mktemp("logs-development")
    server = Server(database_url_factory("sqlite"), logs / "dev.log", json_logs=False).start()
    address = f"dev-{uuid.uuid4().hex[:8]}@example.org"
    try:
        _signin_link_asked_for(server, address)
        with loopback_client(base_url=server.url, timeout=30) as api:
            request_id = api.get("/healthz").headers["x-request-id"]
        deadline = time.monotonic() + 10
        # The mail is printed by the worker after the answer (issue 39), the request's line
        # as the request ends: both, before the server stops.
        while time.monotonic() < deadline and not (
            f"request_id={request_id}" in server.log() and address in server.log()
        ):
            time.sleep(0.05)
    finally:
        server.stop()
    lines = server.log().splitlines()
    assert not [line for line in lines if line.startswith("{")]
    [line] = [line for line in lines if f"request_id={request_id}" in line]
    assert "route=/healthz" in line
    # The mail as a person reads it: one line each, the link whole on its own line.
    assert "DEVELOPMENT MAIL, not sent (ANONBOX_SMTP_URL is not set)" in lines
    assert f"To: {address}" in lines
    assert [line for line in lines if re.fullmatch(r"http://\S+/signin/email\?token=\S+", line)]
    assert "\\n" not in server.log()


def test_outside_development_serve_logs_json_by_default(
    database_url_factory: Callable[[str], str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    logs = tmp_path_factory.mktemp("logs-production")
    production = {"ANONBOX_ENV": "production", "ANONBOX_SECRET_KEY": "p" * 48}
    server = Server(
        database_url_factory("sqlite"), logs / "prod.log", env=production, json_logs=False
    ).start()
    try:
        with loopback_client(base_url=server.url, timeout=30) as api:
            request_id = api.get("/healthz").headers["x-request-id"]
        assert request_line(server, request_id)["route"] == "/healthz"
    finally:
        server.stop()
    assert server.log_records()  # every line is one JSON object
