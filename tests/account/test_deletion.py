"""Asking to delete an account disables it at once: its links answer 404 link_gone to posts and
public reads and store nothing, every key and session is revoked, and a new sign-in may
only see or cancel the deletion. Cancelling brings everything back but the old keys.
(Erasure itself: test_erasure.py.)"""

from __future__ import annotations

from datetime import datetime, timedelta

import httpx

from tests.account.conftest import furnish, send, signed_in, unique
from tests.actions import assert_error
from tests.conftest import make_creator_in
from tests.server import Server
from tests.support.db import query

GONE = "This link is no longer available"


def stored_under(database_url: str, link_id: str) -> int:
    rows = query(
        database_url,
        "SELECT (SELECT COUNT(*) FROM messages WHERE link_id = $1)"
        " + (SELECT COUNT(*) FROM dropped_messages WHERE link_id = $1) AS n",
        link_id,
    )
    return int(rows[0]["n"])


def assert_gone(response: httpx.Response) -> None:
    """The 404 ``link_gone`` envelope of a gone link (for posts from a forwarded sender
    address, which ``assert_error`` would not expect in ``metadata.ip``)."""
    assert response.status_code == 404, response.text
    body = response.json()
    assert set(body) == {"status_code", "message", "data", "error", "metadata"}
    assert body["status_code"] == 404
    assert body["data"] is None
    assert body["error"]["code"] == "link_gone"
    assert body["message"] == GONE


def ask_deletion(api: httpx.Client, session: dict[str, str]) -> dict[str, str]:
    asked = api.post("/account/deletion", headers=session)
    assert asked.status_code == 201, asked.text
    state: dict[str, str] = asked.json()["data"]
    return state


def test_a_deleted_accounts_links_are_gone_and_store_nothing(
    server: Server, api: httpx.Client
) -> None:
    account = furnish(server, api)
    public = api.get(f"/message/{account.creator.link_id}").json()["data"]["items"]
    assert public, "one message was answered"
    message_id = public[0]["id"]
    before = {link: stored_under(server.database_url, link) for link in account.link_ids}

    state = ask_deletion(api, account.session)

    erase_at = datetime.fromisoformat(state["erase_at"].replace("Z", "+00:00"))
    asked_at = datetime.fromisoformat(state["requested_at"].replace("Z", "+00:00"))
    assert state["scheduled"] is True
    assert abs(erase_at - asked_at - timedelta(days=30)) < timedelta(seconds=1)
    for link_id in account.link_ids:
        for post in (
            send(api, link_id, unique("after the deletion")),
            send(api, link_id, f"muted: {account.muted_word}"),  # not even a drop is kept
            send(api, link_id, unique("keyed"), **{"Idempotency-Key": unique("k").split()[0]}),
        ):
            assert_gone(post)
        assert_error(api.get(f"/message/{link_id}"), 404, "link_gone")
        assert_error(api.get(f"/links/{link_id}/public"), 404, "link_gone")
    assert_error(api.get(f"/message/{account.creator.link_id}/{message_id}"), 404, "link_gone")
    # A report on its messages is refused the same way: nobody is left to act on it.
    reported = api.post(
        f"/message/{account.creator.link_id}/{message_id}/report", json={"reason": "spam"}
    )
    assert_error(reported, 404, "link_gone")
    # A person opening the link, or its answer's card, gets a page saying it is over.
    page = api.get(f"/{account.creator.link_id}", headers={"Accept": "text/html"})
    assert page.status_code == 410
    assert "no longer available" in page.text
    card = api.get(
        f"/{account.creator.link_id}/{message_id}/card.png", headers={"Accept": "text/html"}
    )
    assert card.status_code == 410
    assert {link: stored_under(server.database_url, link) for link in account.link_ids} == before


def test_every_key_and_session_is_revoked_and_a_new_sign_in_sees_only_the_deletion(
    server: Server, api: httpx.Client
) -> None:
    account = furnish(server, api)
    keys = [account.creator.headers, account.session]

    ask_deletion(api, account.session)

    for headers in keys:
        assert_error(api.get("/user", headers=headers), 401)
        assert_error(api.get("/account/deletion", headers=headers), 401)
    listed = query(
        server.database_url,
        "SELECT COUNT(*) AS n FROM api_keys WHERE user_id = $1 AND revoked_at IS NULL",
        account.creator.user_id,
    )
    assert listed[0]["n"] == 0
    again = signed_in(server.database_url, account.creator.user_id)  # signing in still works
    seen = api.get("/account/deletion", headers=again)
    assert seen.status_code == 200
    assert seen.json()["data"]["scheduled"] is True
    for method, path, body in (
        ("GET", "/user", None),
        ("GET", "/links", None),
        ("POST", "/links", {"prompt": "a new link"}),
        ("POST", "/auth/api-keys", {"name": "a new key"}),
        ("POST", "/webhooks", {"url": "http://127.0.0.1:9/x"}),
        ("GET", "/account/export", None),
        ("GET", f"/message/{account.creator.link_id}", None),
    ):
        refused = api.request(method, path, headers=again, json=body)
        assert_error(refused, 403, "account_deletion_pending")
    assert query(
        server.database_url,
        "SELECT COUNT(*) AS n FROM links WHERE user_id = $1",
        account.creator.user_id,
    )[0]["n"] == len(account.link_ids)


def test_cancelling_restores_everything_but_the_revoked_keys(
    server: Server, api: httpx.Client
) -> None:
    account = furnish(server, api)
    first = ask_deletion(api, account.session)
    again = signed_in(server.database_url, account.creator.user_id)
    second = ask_deletion(api, again)  # asked twice: the first date stands
    assert second["erase_at"] == first["erase_at"]

    back = signed_in(server.database_url, account.creator.user_id)
    cancelled = api.delete("/account/deletion", headers=back)

    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["data"] == {"scheduled": False, "requested_at": None, "erase_at": None}
    for link_id in account.link_ids:
        assert send(api, link_id, unique("welcome back")).status_code == 201
    assert api.get("/user", headers=back).status_code == 200
    assert_error(api.get("/user", headers=account.creator.headers), 401)
    exported = api.get("/account/export", headers=back)
    assert exported.status_code == 200
    kept = {m["id"] for m in exported.json()["data"]["messages"]}
    assert kept >= set(account.messages)
    assert all(text in exported.text for text in account.replies.values())
    twice = api.delete("/account/deletion", headers=back)  # nothing to cancel: fine
    assert twice.status_code == 200
    assert twice.json()["data"]["scheduled"] is False


def test_another_creator_cannot_delete_this_account(server: Server, api: httpx.Client) -> None:
    victim = make_creator_in(server.database_url)
    other = make_creator_in(server.database_url)

    assert_error(api.post("/account/deletion", headers=other.headers), 403)  # a key cannot
    assert_error(api.post("/account/deletion", headers=victim.headers), 403)
    assert_error(api.post("/account/deletion"), 401)
    assert_error(api.delete("/account/deletion", headers={"X-API-Key": "anbs_" + "x" * 40}), 401)
    ask_deletion(api, signed_in(server.database_url, other.user_id))  # deletes the other one

    assert send(api, victim.link_id, unique("still here")).status_code == 201
    assert api.get("/account/deletion", headers=victim.headers).json()["data"]["scheduled"] is False
    assert_gone(send(api, other.link_id, unique("gone")))


def test_a_session_cannot_cancel_another_accounts_deletion(
    server: Server, api: httpx.Client
) -> None:
    deleted = make_creator_in(server.database_url)
    ask_deletion(api, signed_in(server.database_url, deleted.user_id))
    other = signed_in(server.database_url, make_creator_in(server.database_url).user_id)

    assert api.delete("/account/deletion", headers=other).status_code == 200  # its own: none

    assert_gone(send(api, deleted.link_id, unique("still gone")))
