"""Admins made as an operator makes them: a creator with a known e-mail, then
``anonbox admin grant --email E`` run as a real command against the server's database."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.actions import every_item
from tests.conftest import Creator, make_creator_in
from tests.server import Server, anonbox_command_on
from tests.support.addresses import fresh_email


def creator_with_email(database_url: str, email: str) -> Creator:
    return make_creator_in(database_url, email)


def make_admin_in(database_url: str) -> Creator:
    """The command runs forked, as the servers do (``tests.server``): ``tests/cli/test_cli.py``
    and the grant tests in ``test_admin.py`` run it as a shell does."""
    email = fresh_email()
    creator = creator_with_email(database_url, email)
    granted = anonbox_command_on(database_url, ["admin", "grant", "--email", email])
    assert granted.returncode == 0, granted.stderr
    return creator


@pytest.fixture
def admin(server: Server) -> Creator:
    return make_admin_in(server.database_url)


def report(api: httpx.Client, creator: Creator, message_id: str, reason: str = "spam") -> str:
    """Anyone reports one of ``creator``'s messages; returns the report's id."""
    sent = api.post(f"/message/{creator.link_id}/{message_id}/report", json={"reason": reason})
    assert sent.status_code == 201, sent.text
    return str(sent.json()["data"]["id"])


def resolve(api: httpx.Client, admin: Creator, report_id: str, action: str) -> httpx.Response:
    return api.post(
        f"/admin/reports/{report_id}/resolve", json={"action": action}, headers=admin.headers
    )


def all_reports(api: httpx.Client, admin: Creator, status: str) -> list[dict[str, Any]]:
    """Every report with ``status``, newest first, following next_cursor to the end."""
    return every_item(api, "/admin/reports", {"status": status}, admin.headers)


def report_by_id(api: httpx.Client, admin: Creator, report_id: str) -> dict[str, Any]:
    for status in ("open", "resolved"):
        for item in all_reports(api, admin, status):
            if item["id"] == report_id:
                return item
    raise AssertionError(f"report {report_id} is not listed")


@pytest.fixture(params=["sqlite", "postgresql"])
def lone_server(
    request: pytest.FixtureRequest,
    database_url_factory: Callable[[str], str],
    tmp_path: Path,
) -> Iterator[Server]:
    """A server of its own, for tests whose site-wide blocks would silence every other test.

    It trusts 127.0.0.1 as a proxy, so a test can speak as distinct senders through
    ``X-Forwarded-For``.
    """
    url = database_url_factory(request.param)
    running = Server(
        url, tmp_path / "server.log", env={"ANONBOX_TRUSTED_PROXIES": "127.0.0.1/32"}
    ).start()
    yield running
    running.stop()
