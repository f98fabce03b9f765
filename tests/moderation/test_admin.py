"""The admin's side: resolving reports, deleting any message, blocking a sender site-wide,
and the command that makes an admin."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from anonbox.identity.credential_cache import LOCAL_TTL_SECONDS
from tests.actions import assert_error, inbox_ids, post_message, post_reply
from tests.conftest import Creator, make_creator_in
from tests.maintenance.support import anonbox
from tests.moderation.conftest import (
    creator_with_email,
    make_admin_in,
    report,
    report_by_id,
    resolve,
)
from tests.server import Server
from tests.support.addresses import fresh_email
from tests.support.http import loopback_client

UNKNOWN_ULID = "01jabcdefghjkmnpqrstvwxyz0"
BLOCK_KEYS = {"id", "message_excerpt", "created_at", "site_wide", "network"}


def admin_calls(message_id: str, report_id: str) -> list[tuple[str, str, dict[str, Any] | None]]:
    return [
        ("GET", "/admin/reports", None),
        ("POST", f"/admin/reports/{report_id}/resolve", {"action": "dismiss"}),
        ("DELETE", f"/admin/messages/{message_id}", None),
        ("POST", f"/admin/messages/{message_id}/block-sender", None),
    ]


# --- who may -----------------------------------------------------------------------------


def test_admin_routes_refuse_callers_without_a_credential_or_the_role(
    api: httpx.Client, creator: Creator, admin: Creator
) -> None:
    message_id = post_message(api, creator.link_id)
    report_id = report(api, creator, message_id)
    for method, path, body in admin_calls(message_id, report_id):
        assert_error(api.request(method, path, json=body), 401, "unauthorized")
        assert_error(api.request(method, path, json=body, headers={"X-API-Key": "anb_x"}), 401)
        # The creator of the very link the message is on is still not an admin.
        assert_error(api.request(method, path, json=body, headers=creator.headers), 403)
    assert report_by_id(api, admin, report_id)["status"] == "open"
    assert message_id in inbox_ids(api, creator)


# --- resolving reports -------------------------------------------------------------------


def test_dismiss_resolves_the_report_and_keeps_the_message(
    api: httpx.Client, creator: Creator, admin: Creator
) -> None:
    message_id = post_message(api, creator.link_id, "harmless")
    report_id = report(api, creator, message_id)
    resolved = resolve(api, admin, report_id, "dismiss")

    assert resolved.status_code == 200, resolved.text
    data = resolved.json()["data"]
    assert data["id"] == report_id
    assert data["status"] == "resolved"
    assert data["resolution"] == "dismiss"
    assert data["resolved_at"] is not None
    assert data["message_id"] == message_id
    assert data["link_id"] == creator.link_id
    assert data == report_by_id(api, admin, report_id)
    assert message_id in inbox_ids(api, creator)


def reported_beside_another(
    api: httpx.Client, creator: Creator, reported: str, kept: str
) -> tuple[str, str, str]:
    """A message ``reported`` with a reply, then another, ``kept``, on ``creator``'s link,
    and a report on the first: the ids of both messages and of the report."""
    message_id = post_message(api, creator.link_id, reported)
    post_reply(api, creator, message_id)
    kept_id = post_message(api, creator.link_id, kept)
    return message_id, kept_id, report(api, creator, message_id)


def assert_gone(api: httpx.Client, creator: Creator, message_id: str) -> None:
    """The message is in neither the creator's inbox nor at its own address."""
    assert message_id not in inbox_ids(api, creator)
    thread = api.get(f"/message/{creator.link_id}/{message_id}", headers=creator.headers)
    assert_error(thread, 404)


def test_delete_message_removes_it_with_its_replies(
    api: httpx.Client, creator: Creator, admin: Creator
) -> None:
    message_id, kept_id, report_id = reported_beside_another(
        api, creator, "something nasty", "something fine"
    )
    other_report = report(api, creator, message_id, "seconded")

    resolved = resolve(api, admin, report_id, "delete_message")
    assert resolved.status_code == 200, resolved.text
    data = resolved.json()["data"]
    assert data["status"] == "resolved"
    assert data["resolution"] == "delete_message"
    assert "message_id" not in data
    assert "link_id" not in data
    assert data["message_excerpt"] == "something nasty"

    assert inbox_ids(api, creator)[:1] == [kept_id]
    assert_gone(api, creator, message_id)
    # Nothing is left to decide on the other report about the same message.
    other = report_by_id(api, admin, other_report)
    assert (other["status"], other["resolution"]) == ("resolved", "delete_message")


@pytest.mark.parametrize("first", ["dismiss", "delete_message"])
@pytest.mark.parametrize("second", ["dismiss", "delete_message", "block_sender"])
def test_a_report_is_resolved_only_once(
    api: httpx.Client, creator: Creator, admin: Creator, first: str, second: str
) -> None:
    message_id = post_message(api, creator.link_id)
    report_id = report(api, creator, message_id)
    assert resolve(api, admin, report_id, first).status_code == 200
    before = report_by_id(api, admin, report_id)
    assert_error(resolve(api, admin, report_id, second), 409, "already_resolved")
    assert report_by_id(api, admin, report_id) == before


def test_resolving_with_a_bad_action_or_report_is_refused(
    api: httpx.Client, creator: Creator, admin: Creator
) -> None:
    message_id = post_message(api, creator.link_id)
    report_id = report(api, creator, message_id)
    path = f"/admin/reports/{report_id}/resolve"
    for body, problem in [({"action": "ban"}, "invalid"), ({}, "missing")]:
        refused = assert_error(api.post(path, json=body, headers=admin.headers), 400)
        assert [(f["field"], f["problem"]) for f in refused["error"]["fields"]] == [
            ("action", problem)
        ]
    assert_error(resolve(api, admin, UNKNOWN_ULID, "dismiss"), 404, "not_found")
    assert_error(resolve(api, admin, "not-a-ulid", "dismiss"), 400)
    assert report_by_id(api, admin, report_id)["status"] == "open"


def test_block_sender_of_a_deleted_message_is_a_conflict_and_leaves_the_report_open(
    api: httpx.Client, creator: Creator, admin: Creator
) -> None:
    message_id = post_message(api, creator.link_id)
    report_id = report(api, creator, message_id)
    api.delete(f"/message/{creator.link_id}/{message_id}", headers=creator.headers)
    assert_error(resolve(api, admin, report_id, "block_sender"), 409)
    assert report_by_id(api, admin, report_id)["status"] == "open"
    # Deleting what is already gone just closes the report.
    resolved = resolve(api, admin, report_id, "delete_message")
    assert resolved.status_code == 200, resolved.text
    assert resolved.json()["data"]["resolution"] == "delete_message"


# --- deleting any message ----------------------------------------------------------------


def test_admin_deletes_a_message_on_anyone_s_link(
    api: httpx.Client, creator: Creator, admin: Creator
) -> None:
    message_id, kept_id, report_id = reported_beside_another(api, creator, "goes", "stays")

    deleted = api.delete(f"/admin/messages/{message_id}", headers=admin.headers)
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["data"] is None
    assert kept_id in inbox_ids(api, creator)
    assert_gone(api, creator, message_id)
    listed = report_by_id(api, admin, report_id)
    assert (listed["status"], listed["resolution"]) == ("resolved", "delete_message")
    assert "message_id" not in listed

    again = api.delete(f"/admin/messages/{message_id}", headers=admin.headers)
    assert_error(again, 404, "not_found")
    assert_error(api.delete(f"/admin/messages/{UNKNOWN_ULID}", headers=admin.headers), 404)
    assert_error(api.delete("/admin/messages/not-a-ulid", headers=admin.headers), 400)


def test_block_sender_of_an_unknown_message_is_not_found(api: httpx.Client, admin: Creator) -> None:
    blocked = api.post(f"/admin/messages/{UNKNOWN_ULID}/block-sender", headers=admin.headers)
    assert_error(blocked, 404, "not_found")


# --- site-wide blocks (each on a server of its own: a block would silence the others) ------

SPAMMER = {"X-Forwarded-For": "203.0.113.66"}
BYSTANDER = {"X-Forwarded-For": "198.51.100.7"}


@pytest.fixture
def lone_api(lone_server: Server) -> Iterator[httpx.Client]:
    with loopback_client(base_url=lone_server.url, timeout=30) as client:
        yield client


def send_as(api: httpx.Client, sender: dict[str, str], link_id: str, text: str) -> str:
    sent = api.post(f"/message/{link_id}", json={"message_content": text}, headers=sender)
    assert sent.status_code == 201, sent.text
    return str(sent.json()["data"]["id"])


def assert_blocked_everywhere(api: httpx.Client, *creators: Creator) -> None:
    """The spammer's new messages are dropped on every link; the bystander's still land."""
    for creator in creators:
        dropped = send_as(api, SPAMMER, creator.link_id, "me again")
        landed = send_as(api, BYSTANDER, creator.link_id, "hello")
        inbox = inbox_ids(api, creator)
        assert dropped not in inbox
        assert landed in inbox


@pytest.mark.slow
def test_resolving_with_block_sender_blocks_site_wide_and_deletes_the_message(
    lone_server: Server, lone_api: httpx.Client
) -> None:
    api = lone_api
    admin = make_admin_in(lone_server.database_url)
    victim, elsewhere = (make_creator_in(lone_server.database_url) for _ in range(2))
    message_id = send_as(api, SPAMMER, victim.link_id, "you are awful")
    report_id = report(api, victim, message_id, "harassment")

    resolved = resolve(api, admin, report_id, "block_sender")
    assert resolved.status_code == 200, resolved.text
    data = resolved.json()["data"]
    assert (data["status"], data["resolution"]) == ("resolved", "block_sender")
    assert "message_id" not in data
    assert data["message_excerpt"] == "you are awful"
    assert message_id not in inbox_ids(api, victim)
    # The block is site-wide, not the victim's: it is not on their own list.
    assert api.get("/blocks", headers=victim.headers).json()["data"]["items"] == []
    assert_blocked_everywhere(api, victim, elsewhere)


@pytest.mark.slow
def test_admin_blocks_a_sender_site_wide_and_the_message_stays(
    lone_server: Server, lone_api: httpx.Client
) -> None:
    api = lone_api
    admin = make_admin_in(lone_server.database_url)
    victim, elsewhere = (make_creator_in(lone_server.database_url) for _ in range(2))
    message_id = send_as(api, SPAMMER, victim.link_id, "spam " * 40)
    path = f"/admin/messages/{message_id}/block-sender"

    blocked = api.post(path, headers=admin.headers)
    assert blocked.status_code == 201, blocked.text
    data = blocked.json()["data"]
    assert set(data) == BLOCK_KEYS
    assert data["site_wide"] is True
    assert ("spam " * 40).startswith(data["message_excerpt"])
    assert data["message_excerpt"]
    assert data["created_at"].endswith("Z")
    # It stays where it was, in the inbox: a block moves nothing already sent.
    assert message_id in inbox_ids(api, victim)
    folder = api.get(f"/message/{victim.link_id}/filtered", headers=victim.headers)
    assert message_id not in [m["id"] for m in folder.json()["data"]["items"]]

    # Blocking the same message again changes nothing.
    again = api.post(path, headers=admin.headers)
    assert again.status_code == 201, again.text
    assert again.json()["data"]["id"] == data["id"]
    assert_blocked_everywhere(api, victim, elsewhere)


# --- anonbox admin grant ---------------------------------------------------------------


def test_admin_grant_makes_an_existing_creator_an_admin_at_once(
    server: Server, api: httpx.Client, tmp_path: Path
) -> None:
    email = fresh_email()
    creator = creator_with_email(server.database_url, email)
    assert_error(api.get("/admin/reports", headers=creator.headers), 403)

    granted = anonbox(
        "admin", "grant", "--email", email.upper(), database_url=server.database_url, cwd=tmp_path
    )
    assert granted.returncode == 0, granted.stderr
    assert granted.stdout.strip() == f"{email} is now an admin"
    assert granted.stderr == ""
    # The key the creator already holds carries the role from its next request; on SQLite,
    # which has no notifications for the CLI to send, once the server's proof of the key
    # has lapsed (a proof is kept LOCAL_TTL_SECONDS there).
    if server.database_url.startswith("sqlite"):
        time.sleep(LOCAL_TTL_SECONDS)
    listed = api.get("/admin/reports", headers=creator.headers)
    assert listed.status_code == 200, listed.text

    twice = anonbox(
        "admin", "grant", "--email", email, database_url=server.database_url, cwd=tmp_path
    )
    assert twice.returncode == 0, twice.stderr


@pytest.mark.parametrize("email", ["nobody-here@example.com", "not-an-email"])
def test_admin_grant_for_no_such_creator_fails_in_one_line(
    server: Server, tmp_path: Path, email: str
) -> None:
    granted = anonbox(
        "admin", "grant", "--email", email, database_url=server.database_url, cwd=tmp_path
    )
    assert granted.returncode == 1
    assert granted.stdout == ""
    assert "Traceback" not in granted.stderr
    lines = granted.stderr.strip().splitlines()
    assert len(lines) == 1, granted.stderr
    assert lines[0].startswith("error: ")
    assert email in lines[0]
