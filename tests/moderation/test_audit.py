"""The admins' audit log: every admin action is one entry (who, what, on what, when),
written with the action or not at all, readable by admins only, newest first, and never
naming anything that identifies a sender."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from tests.actions import assert_error, post_message
from tests.conftest import Creator, make_creator_in
from tests.moderation.conftest import report
from tests.server import Server
from tests.support.admin import (
    audit_entries,
    make_account,
    mute_phrase,
    unique_phrase,
    unmute_phrase,
)
from tests.support.db import query
from tests.support.http import loopback_client

ENTRY_KEYS = {"id", "admin_id", "action", "target_id", "detail", "created_at"}
SPAMMER = "203.0.113.77"
UNKNOWN_ULID = "01jabcdefghjkmnpqrstvwxyz0"
BLOCK = {"action": "block_sender"}
OTHERS = ["198.51.100.21", "198.51.100.22", "198.51.100.23"]


def instant(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def send_as(api: httpx.Client, address: str, link_id: str, text: str) -> str:
    sent = api.post(
        f"/message/{link_id}",
        json={"message_content": text},
        headers={"X-Forwarded-For": address},
    )
    assert sent.status_code == 201, sent.text
    return str(sent.json()["data"]["id"])


def sender_hashes(database_url: str) -> set[str]:
    """Every keyed hash of a sender or network the database holds."""
    found: set[str] = set()
    for sql in (
        "SELECT sender_hash AS h FROM messages",
        "SELECT sender_network_hash AS h FROM messages",
        "SELECT sender_hash AS h FROM blocks",
    ):
        found |= {row["h"] for row in query(database_url, sql) if row["h"]}
    return found


@pytest.fixture
def lone_api(lone_server: Server) -> Iterator[httpx.Client]:
    with loopback_client(base_url=lone_server.url, timeout=30) as client:
        yield client


@pytest.mark.slow
def test_each_admin_action_is_one_entry_with_who_what_and_when(
    lone_server: Server, lone_api: httpx.Client
) -> None:
    api = lone_api
    first, second = (make_account(lone_server.database_url, admin=True) for _ in range(2))
    creator = make_creator_in(lone_server.database_url)
    dismissed, blocked_by_report, deleted, blocked = (
        send_as(api, address, creator.link_id, f"message {n}")
        for n, address in enumerate([OTHERS[0], SPAMMER, OTHERS[1], OTHERS[2]])
    )
    report_dismissed = report(api, creator, dismissed)
    report_blocked = report(api, creator, blocked_by_report, "harassment")
    phrase = unique_phrase()
    started = datetime.now(UTC)

    def ok(response: httpx.Response) -> dict[str, Any]:
        assert response.status_code in {200, 201}, response.text
        return dict(response.json()["data"] or {})

    resolve = "/admin/reports/{}/resolve"
    ok(
        api.post(
            resolve.format(report_dismissed), json={"action": "dismiss"}, headers=first.headers
        )
    )
    ok(
        api.post(
            resolve.format(report_blocked),
            json={"action": "block_sender"},
            headers=second.headers,
        )
    )
    ok(api.delete(f"/admin/messages/{deleted}", headers=first.headers))
    block = ok(api.post(f"/admin/messages/{blocked}/block-sender", headers=second.headers))
    added = mute_phrase(api, first, phrase)
    unmute_phrase(api, second, added["id"])
    finished = datetime.now(UTC)

    entries = audit_entries(api, first)
    assert all(set(entry) == ENTRY_KEYS for entry in entries)
    seen = [(e["admin_id"], e["action"], e["target_id"]) for e in entries]
    assert seen == [
        (second.user_id, "muted_phrase.remove", added["id"]),
        (first.user_id, "muted_phrase.add", added["id"]),
        (second.user_id, "sender.block", blocked),
        (first.user_id, "message.delete", deleted),
        (second.user_id, "report.resolve", report_blocked),
        (first.user_id, "report.resolve", report_dismissed),
    ]
    ids = [e["id"] for e in entries]
    assert ids == sorted(ids, reverse=True)
    assert len(set(ids)) == len(ids)
    times = [instant(e["created_at"]) for e in entries]
    assert times == sorted(times, reverse=True)
    assert all(started.replace(microsecond=0) <= t <= finished for t in times), times
    details = {e["action"] + ":" + e["target_id"]: e["detail"] for e in entries}
    assert details[f"report.resolve:{report_dismissed}"] == f"dismiss; message {dismissed}"
    assert details[f"report.resolve:{report_blocked}"].startswith("block_sender; site-wide block ")
    assert details[f"message.delete:{deleted}"] == f"under link {creator.link_id}"
    assert details[f"sender.block:{blocked}"] == f"site-wide block {block['id']}"
    assert details[f"muted_phrase.add:{added['id']}"] == phrase
    assert details[f"muted_phrase.remove:{added['id']}"] == phrase

    # Paging walks the same entries, newest first.
    walked: list[dict[str, Any]] = []
    params: dict[str, Any] = {"limit": 4}
    while True:
        page = api.get("/admin/audit", params=params, headers=second.headers).json()["data"]
        walked += page["items"]
        if page["next_cursor"] is None:
            break
        params["cursor"] = page["next_cursor"]
    assert walked == entries

    # Nothing in it identifies a sender: no address, no keyed hash of one.
    shown = api.get("/admin/audit", params={"limit": 100}, headers=first.headers).text
    hashes = sender_hashes(lone_server.database_url)
    assert hashes, "the senders' hashes were not found to compare with"
    for secret in [SPAMMER, *OTHERS, *hashes]:
        assert secret not in shown


@pytest.mark.slow
def test_an_action_that_fails_or_is_refused_writes_nothing(
    lone_server: Server, lone_api: httpx.Client
) -> None:
    api = lone_api
    admin = make_account(lone_server.database_url, admin=True)
    creator = make_creator_in(lone_server.database_url)
    message = send_as(api, SPAMMER, creator.link_id, "to be reported")
    open_report = report(api, creator, message)
    gone = send_as(api, OTHERS[0], creator.link_id, "deleted by its creator")
    gone_report = report(api, creator, gone)
    assert api.delete(f"/message/{creator.link_id}/{gone}", headers=creator.headers).is_success
    phrase = mute_phrase(api, admin, unique_phrase())
    before = audit_entries(api, admin)

    attempts: list[tuple[dict[str, str], str, str, dict[str, str] | None, int]] = [
        # Blocking the sender of a deleted message fails after the report was claimed:
        # the claim is undone with it, and no entry is left.
        (admin.headers, "POST", f"/admin/reports/{gone_report}/resolve", BLOCK, 409),
        (admin.headers, "DELETE", f"/admin/messages/{gone}", None, 404),
        (admin.headers, "POST", f"/admin/messages/{gone}/block-sender", None, 404),
        (admin.headers, "POST", "/admin/muted-phrases", {"phrase": phrase["phrase"]}, 409),
        (admin.headers, "POST", "/admin/muted-phrases", {"phrase": " "}, 400),
        (admin.headers, "DELETE", f"/admin/muted-phrases/{UNKNOWN_ULID}", None, 404),
    ]
    for method, path, body in [
        ("POST", f"/admin/reports/{open_report}/resolve", {"action": "delete_message"}),
        ("DELETE", f"/admin/messages/{message}", None),
        ("POST", f"/admin/messages/{message}/block-sender", None),
        ("POST", "/admin/muted-phrases", {"phrase": unique_phrase()}),
        ("DELETE", f"/admin/muted-phrases/{phrase['id']}", None),
    ]:
        attempts.append((creator.headers, method, path, body, 403))
    for headers, method, path, body, status in attempts:
        assert_error(api.request(method, path, json=body, headers=headers), status)

    assert audit_entries(api, admin) == before
    gone_state = api.get("/admin/reports", params={"limit": 100}, headers=admin.headers)
    assert gone_report in [r["id"] for r in gone_state.json()["data"]["items"]]  # still open
    assert message in inbox_of(api, creator)


def inbox_of(api: httpx.Client, creator: Creator) -> list[str]:
    listed = api.get(f"/message/{creator.link_id}", params={"limit": 100}, headers=creator.headers)
    return [item["id"] for item in listed.json()["data"]["items"]]


# --- who may read it ---------------------------------------------------------------------


def test_only_admins_read_the_audit_log(
    api: httpx.Client, server: Server, creator: Creator
) -> None:
    assert_error(api.get("/admin/audit"), 401, "unauthorized")
    assert_error(api.get("/admin/audit", headers={"X-API-Key": "anb_nope"}), 401)
    refused = api.get("/admin/audit", headers=creator.headers)
    assert_error(refused, 403)
    assert "admin_id" not in refused.text
    admin = make_account(server.database_url, admin=True)
    assert api.get("/admin/audit", headers=admin.headers).status_code == 200


@pytest.mark.parametrize(
    "params",
    [{"limit": 0}, {"limit": 101}, {"limit": "x"}, {"cursor": "not-a-ulid"}],
)
def test_bad_paging_is_a_400(api: httpx.Client, server: Server, params: dict[str, Any]) -> None:
    admin = make_account(server.database_url, admin=True)
    assert_error(api.get("/admin/audit", params=params, headers=admin.headers), 400)


def test_an_admin_action_on_the_shared_server_is_listed_first(
    api: httpx.Client, server: Server, creator: Creator
) -> None:
    admin = make_account(server.database_url, admin=True)
    message = post_message(api, creator.link_id, "reported here")
    reported = report(api, creator, message)
    resolved = api.post(
        f"/admin/reports/{reported}/resolve", json={"action": "dismiss"}, headers=admin.headers
    )
    assert resolved.status_code == 200, resolved.text
    newest = api.get("/admin/audit", params={"limit": 1}, headers=admin.headers).json()["data"]
    [entry] = newest["items"]
    assert (entry["admin_id"], entry["action"], entry["target_id"]) == (
        admin.user_id,
        "report.resolve",
        reported,
    )
