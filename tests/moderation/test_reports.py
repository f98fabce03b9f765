"""Anyone reports a message (POST /message/{link_id}/{message_id}/report); the admin lists
the reports (GET /admin/reports)."""

from __future__ import annotations

import unicodedata
from typing import Any

import httpx
import pytest

from anonbox.core.ids import is_ulid
from tests.actions import assert_error, post_message, post_reply
from tests.conftest import Creator, make_creator_in
from tests.moderation.conftest import all_reports, report, report_by_id, resolve
from tests.server import Server
from tests.support.http import loopback_client
from tests.support.servers import own_server

ENVELOPE_KEYS = {"status_code", "message", "data", "metadata"}
REPORT_KEYS = {
    "id",
    "message_id",
    "link_id",
    "message_excerpt",
    "reason",
    "status",
    "resolution",
    "created_at",
    "resolved_at",
}
UNKNOWN_ULID = "01jabcdefghjkmnpqrstvwxyz0"


def send_report(api: httpx.Client, link_id: str, message_id: str, body: Any) -> httpx.Response:
    return api.post(f"/message/{link_id}/{message_id}/report", json=body)


def problems(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(item["field"], item["problem"]) for item in body["error"]["fields"]]


# --- reporting ----------------------------------------------------------------------------


def test_anyone_reports_a_message_and_the_admin_sees_it(
    api: httpx.Client, creator: Creator, admin: Creator
) -> None:
    message_id = post_message(api, creator.link_id, "buy cheap followers at example.com")
    sent = send_report(api, creator.link_id, message_id, {"reason": "Spam, again"})

    assert sent.status_code == 201, sent.text
    body = sent.json()
    assert set(body) == ENVELOPE_KEYS
    assert body["status_code"] == 201
    assert body["metadata"]["url"] == f"/message/{creator.link_id}/{message_id}/report"
    assert set(body["data"]) == {"id", "status"}
    assert body["data"]["status"] == "open"
    assert is_ulid(body["data"]["id"])

    listed = report_by_id(api, admin, body["data"]["id"])
    assert set(listed) == REPORT_KEYS
    assert listed["message_id"] == message_id
    assert listed["link_id"] == creator.link_id
    assert listed["message_excerpt"] == "buy cheap followers at example.com"
    assert listed["reason"] == "Spam, again"
    assert listed["status"] == "open"
    assert listed["resolution"] is None
    assert listed["created_at"].endswith("Z")
    assert listed["resolved_at"] is None


def test_reporting_does_not_touch_the_message(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id, "still here")
    report(api, creator, message_id)
    report(api, creator, message_id, "a second person agrees")
    inbox = api.get(f"/message/{creator.link_id}", headers=creator.headers).json()["data"]
    assert [m["id"] for m in inbox["items"]][:1] == [message_id]


@pytest.mark.parametrize(
    "reason",
    [
        pytest.param("x", id="1"),
        pytest.param("x" * 500, id="500"),
        pytest.param("e\u0301" * 500, id="500-after-NFC"),
        pytest.param("  why not  ", id="padded"),
    ],
)
def test_reason_within_bounds_is_accepted_as_sent(
    api: httpx.Client, creator: Creator, admin: Creator, reason: str
) -> None:
    message_id = post_message(api, creator.link_id)
    report_id = report(api, creator, message_id, reason)
    assert report_by_id(api, admin, report_id)["reason"] == unicodedata.normalize("NFC", reason)


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        pytest.param({"reason": ""}, "too_short", id="0"),
        pytest.param({"reason": "x" * 501}, "too_long", id="501"),
        pytest.param({"reason": " \n\t "}, "blank", id="blank"),
        pytest.param({}, "missing", id="missing"),
        pytest.param({"reason": 5}, "wrong_type", id="number"),
        pytest.param({"reason": None}, "wrong_type", id="null"),
    ],
)
def test_reason_out_of_bounds_is_refused(
    api: httpx.Client, creator: Creator, body: dict[str, Any], problem: str
) -> None:
    message_id = post_message(api, creator.link_id)
    refused = assert_error(send_report(api, creator.link_id, message_id, body), 400)
    assert refused["error"]["code"] == "validation_failed"
    assert problems(refused) == [("reason", problem)]


def test_excerpt_keeps_the_first_200_characters_after_the_message_is_deleted(
    api: httpx.Client, creator: Creator, admin: Creator
) -> None:
    text = "".join(chr(ord("a") + i % 26) for i in range(450)) + "ü" * 50
    message_id = post_message(api, creator.link_id, text)
    report_id = report(api, creator, message_id)
    deleted = api.delete(f"/message/{creator.link_id}/{message_id}", headers=creator.headers)
    assert deleted.status_code == 200, deleted.text

    listed = report_by_id(api, admin, report_id)
    assert listed["message_excerpt"] == text[:200]
    assert "message_id" not in listed
    assert "link_id" not in listed
    assert listed["status"] == "open"


def test_a_message_is_reported_only_under_its_own_link(
    api: httpx.Client, make_creator: Any
) -> None:
    owner, other = make_creator(), make_creator()
    message_id = post_message(api, owner.link_id)
    assert_error(send_report(api, other.link_id, message_id, {"reason": "x"}), 404, "not_found")
    assert_error(send_report(api, "nosuchlink1", message_id, {"reason": "x"}), 404, "not_found")
    assert_error(send_report(api, owner.link_id, UNKNOWN_ULID, {"reason": "x"}), 404, "not_found")
    assert_error(send_report(api, owner.link_id, "not-a-ulid", {"reason": "x"}), 400)


def test_a_deleted_message_cannot_be_reported(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)
    api.delete(f"/message/{creator.link_id}/{message_id}", headers=creator.headers)
    assert_error(send_report(api, creator.link_id, message_id, {"reason": "x"}), 404)


# --- routing beside the message routes ----------------------------------------------------


def test_report_route_sits_beside_reply_like_and_reply_deletion(
    api: httpx.Client, creator: Creator
) -> None:
    message_id = post_message(api, creator.link_id)
    thread = f"/message/{creator.link_id}/{message_id}"
    # Without a credential: a reply would be a 401, a report is a 201.
    assert api.post(f"{thread}/report", json={"reason": "x"}).status_code == 201
    reply_id = post_reply(api, creator, message_id)
    assert_error(api.post(f"{thread}/like", headers=creator.headers), 405)
    assert_error(api.put(f"{thread}/report", json={"reason": "x"}), 405)
    assert_error(api.get(f"{thread}/report"), 405)
    liked = api.put(f"{thread}/like", headers=creator.headers)
    assert liked.status_code == 200, liked.text
    removed = api.delete(f"{thread}/{reply_id}", headers=creator.headers)
    assert removed.status_code == 200, removed.text


# --- the admin's list ---------------------------------------------------------------------


def test_reports_are_listed_newest_first_a_page_at_a_time(
    api: httpx.Client, creator: Creator, admin: Creator
) -> None:
    message_id = post_message(api, creator.link_id)
    mine = [report(api, creator, message_id, f"reason {n}") for n in range(3)]

    first = api.get("/admin/reports", params={"limit": 2}, headers=admin.headers)
    assert first.status_code == 200, first.text
    page = first.json()["data"]
    assert set(page) == {"items", "next_cursor"}
    assert [item["id"] for item in page["items"]] == [mine[2], mine[1]]
    assert page["next_cursor"] == mine[1]

    params = {"limit": 2, "cursor": page["next_cursor"]}
    second = api.get("/admin/reports", params=params, headers=admin.headers).json()["data"]
    assert second["items"][0]["id"] == mine[0]
    assert all(item["id"] < mine[0] for item in second["items"][1:])

    everything = all_reports(api, admin, "open")
    ids = [item["id"] for item in everything]
    assert ids == sorted(ids, reverse=True)
    assert len(ids) == len(set(ids))


def test_status_filter_separates_open_from_resolved(
    api: httpx.Client, creator: Creator, admin: Creator
) -> None:
    message_id = post_message(api, creator.link_id)
    kept, dismissed = report(api, creator, message_id), report(api, creator, message_id)
    assert resolve(api, admin, dismissed, "dismiss").status_code == 200

    default = api.get("/admin/reports", params={"limit": 100}, headers=admin.headers)
    open_ids = {item["id"] for item in default.json()["data"]["items"]}
    assert kept in open_ids
    assert dismissed not in open_ids
    assert {item["status"] for item in all_reports(api, admin, "open")} == {"open"}

    resolved = all_reports(api, admin, "resolved")
    assert {item["status"] for item in resolved} == {"resolved"}
    assert kept not in {item["id"] for item in resolved}
    [entry] = [item for item in resolved if item["id"] == dismissed]
    assert entry["resolution"] == "dismiss"
    assert entry["resolved_at"] is not None
    assert entry["resolved_at"] >= entry["created_at"]


@pytest.mark.parametrize(
    "params",
    [
        {"status": "closed"},
        {"status": ""},
        {"limit": 0},
        {"limit": 101},
        {"limit": "ten"},
        {"cursor": "not-a-ulid"},
    ],
)
def test_bad_list_parameters_are_refused(
    api: httpx.Client, admin: Creator, params: dict[str, Any]
) -> None:
    assert_error(api.get("/admin/reports", params=params, headers=admin.headers), 400)


# --- limits: reports cannot close a link, and made-up ids cost nothing ---------------------


# Two reports per reporter, three messages a minute per link, behind a proxy.
report_limited = own_server(
    "report_limited",
    {
        "ANONBOX_LIMIT_REPORT": "2/600",
        "ANONBOX_LIMIT_LINK": "3/60",
        "ANONBOX_TRUSTED_PROXIES": "127.0.0.1/32",
    },
)


def as_from(address: str) -> dict[str, str]:
    return {"X-Forwarded-For": address}


def test_reports_on_made_up_ids_count_against_nothing(report_limited: Server) -> None:
    creator = make_creator_in(report_limited.database_url)
    with loopback_client(base_url=report_limited.url, timeout=30) as api:
        message_id = post_message(api, creator.link_id, "report me")
        prober = as_from("203.0.113.71")
        for n in range(20):  # a flood of reports on ids that are not there
            made_up = f"01jabcdefghjkmnpqrstvwx{n:03d}"
            answer = api.post(
                f"/message/{creator.link_id}/{made_up}/report", json={"reason": "x"}, headers=prober
            )
            assert answer.status_code == 404
            assert answer.json()["error"]["code"] == "not_found"

        # The link still takes messages from people (3 a minute here: 1 used above).
        for n in range(2):
            sent = api.post(
                f"/message/{creator.link_id}",
                json={"message_content": f"still open {n}"},
                headers=as_from(f"198.51.100.{n + 1}"),
            )
            assert sent.status_code == 201, sent.text
        # And the prober's own report limit is untouched: two real reports go through.
        about = f"/message/{creator.link_id}/{message_id}/report"
        for _ in range(2):
            assert api.post(about, json={"reason": "spam"}, headers=prober).status_code == 201
        refused = api.post(about, json={"reason": "spam"}, headers=prober)
        assert refused.status_code == 429
        assert int(refused.headers["retry-after"]) > 0


def test_many_reports_do_not_close_the_link_to_messages(report_limited: Server) -> None:
    creator = make_creator_in(report_limited.database_url)
    with loopback_client(base_url=report_limited.url, timeout=30) as api:
        message_id = post_message(api, creator.link_id, "a popular target")
        about = f"/message/{creator.link_id}/{message_id}/report"
        for n in range(10):  # ten reporters (ten networks), more than the three messages a minute
            reported = api.post(about, json={"reason": "spam"}, headers=as_from(f"10.9.{n}.1"))
            assert reported.status_code == 201, reported.text
        sent = api.post(
            f"/message/{creator.link_id}",
            json={"message_content": "not closed"},
            headers=as_from("198.51.100.9"),
        )
        assert sent.status_code == 201, sent.text


def test_a_reporters_network_is_limited_as_a_whole_too(report_limited: Server) -> None:
    """Two reports per reporter; an IPv4 /24 as 4 reporters (8), so new addresses in one
    network stop helping."""
    creator = make_creator_in(report_limited.database_url)
    with loopback_client(base_url=report_limited.url, timeout=30) as api:
        message_id = post_message(api, creator.link_id, "report me")
        about = f"/message/{creator.link_id}/{message_id}/report"

        def report(address: str) -> int:
            return api.post(about, json={"reason": "spam"}, headers=as_from(address)).status_code

        for host in range(1, 5):
            assert [report(f"203.0.114.{host}") for _ in range(2)] == [201, 201]
        assert report("203.0.114.99") == 429  # a fresh address in a full /24
        assert report("203.0.115.1") == 201  # the next /24 is another network
