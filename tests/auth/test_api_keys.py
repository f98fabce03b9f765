"""API keys: made, listed and revoked by a signed-in creator; used by scripts on creator routes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.actions import assert_error, inbox_ids, post_message, post_reply
from tests.auth.conftest import Anonbox, SignedIn, http_client, profile, sign_in
from tests.conftest import Creator
from tests.support.credentials import refused_credentials

UserAgents = Callable[[str], httpx.Client]

KEY_FIELDS = {"id", "name", "api_key", "last_chars", "created_at"}
LISTED_FIELDS = {"id", "name", "last_chars", "created_at", "last_used_at", "revoked_at"}


def signed_in(anonbox: Anonbox, new_user_agent: UserAgents) -> SignedIn:
    return sign_in(new_user_agent(anonbox.url), anonbox.provider.new_user())


def create_key(session: SignedIn, name: str = "my script") -> dict[str, Any]:
    made = session.user_agent.post("/auth/api-keys", json={"name": name}, headers=session.headers)
    assert made.status_code == 201, made.text
    return dict(made.json()["data"])


def list_keys(session: SignedIn) -> list[dict[str, Any]]:
    listed = session.user_agent.get("/auth/api-keys", headers=session.headers)
    assert listed.status_code == 200, listed.text
    return list(listed.json()["data"]["items"])


def listed_key(session: SignedIn, key_id: str) -> dict[str, Any]:
    [key] = [k for k in list_keys(session) if k["id"] == key_id]
    return key


def test_create_shows_the_key_once(anonbox: Anonbox, new_user_agent: UserAgents) -> None:
    session = signed_in(anonbox, new_user_agent)
    before = datetime.now(UTC)

    made = session.user_agent.post(
        "/auth/api-keys", json={"name": "inbox bot"}, headers=session.headers
    )

    assert made.status_code == 201, made.text
    body = made.json()
    assert body["status_code"] == 201
    data = body["data"]
    assert set(data) == KEY_FIELDS
    assert data["name"] == "inbox bot"
    assert data["api_key"].startswith("anb_")
    assert not data["api_key"].startswith("anbs_")
    assert data["last_chars"]
    assert data["api_key"].endswith(data["last_chars"])
    assert len(data["last_chars"]) < len(data["api_key"]) - 8
    created = datetime.fromisoformat(data["created_at"].replace("Z", "+00:00"))
    assert abs(created - before) < timedelta(seconds=5)
    listing = session.user_agent.get("/auth/api-keys", headers=session.headers)
    assert data["api_key"] not in listing.text


def test_api_key_works_on_creator_operations(anonbox: Anonbox, new_user_agent: UserAgents) -> None:
    session = signed_in(anonbox, new_user_agent)
    me = profile(session.user_agent, session.access_token)
    key = create_key(session)["api_key"]
    bot = Creator(me["user_id"], me["link_id"], key)

    with http_client(anonbox.url) as api:
        message_id = post_message(api, me["link_id"], "for the bot")
        assert inbox_ids(api, bot) == [message_id]
        post_reply(api, bot, message_id, "the bot answers")
        liked = api.put(f"/message/{me['link_id']}/{message_id}/like", headers=bot.headers)
        assert liked.status_code == 200, liked.text
        assert profile(api, key) == me
        bearer = api.get("/user", headers={"Authorization": f"Bearer {key}"})
        assert bearer.status_code == 200, bearer.text


def test_list_never_shows_secrets(anonbox: Anonbox, new_user_agent: UserAgents) -> None:
    session = signed_in(anonbox, new_user_agent)
    made = [create_key(session, name) for name in ("first", "second", "third")]

    listing = session.user_agent.get("/auth/api-keys", headers=session.headers)

    assert listing.status_code == 200, listing.text
    items = listing.json()["data"]["items"]
    assert [item["id"] for item in items] == [m["id"] for m in reversed(made)]  # newest first
    for item, key in zip(items, reversed(made), strict=True):
        assert set(item) == LISTED_FIELDS
        assert item["name"] == key["name"]
        assert item["last_chars"] == key["last_chars"]
        assert item["created_at"] == key["created_at"]
        assert item["last_used_at"] is None
        assert item["revoked_at"] is None
        assert key["api_key"] not in listing.text


def test_list_shows_when_a_key_was_last_used(anonbox: Anonbox, new_user_agent: UserAgents) -> None:
    session = signed_in(anonbox, new_user_agent)
    key = create_key(session)
    assert listed_key(session, key["id"])["last_used_at"] is None
    before = datetime.now(UTC)

    profile(session.user_agent, key["api_key"])

    used = listed_key(session, key["id"])["last_used_at"]
    assert used is not None
    used_at = datetime.fromisoformat(used.replace("Z", "+00:00"))
    assert before - timedelta(seconds=1) <= used_at <= datetime.now(UTC) + timedelta(seconds=1)


def test_list_shows_only_your_own_keys(anonbox: Anonbox, new_user_agent: UserAgents) -> None:
    mine = signed_in(anonbox, new_user_agent)
    theirs = signed_in(anonbox, new_user_agent)
    create_key(mine)
    their_key = create_key(theirs)

    assert their_key["id"] not in [k["id"] for k in list_keys(mine)]


def test_delete_revokes_at_once(anonbox: Anonbox, new_user_agent: UserAgents) -> None:
    session = signed_in(anonbox, new_user_agent)
    key = create_key(session)
    kept = create_key(session, "kept")
    profile(session.user_agent, key["api_key"])
    before = datetime.now(UTC)

    deleted = session.user_agent.delete(f"/auth/api-keys/{key['id']}", headers=session.headers)

    assert deleted.status_code == 200, deleted.text
    body = deleted.json()
    assert body["status_code"] == 200
    assert body["data"] is None
    with http_client(anonbox.url) as script:
        assert_error(script.get("/user", headers={"X-API-Key": key["api_key"]}), 401)
        assert_error(
            script.get("/user", headers={"Authorization": f"Bearer {key['api_key']}"}), 401
        )
    revoked = listed_key(session, key["id"])["revoked_at"]
    assert revoked is not None
    revoked_at = datetime.fromisoformat(revoked.replace("Z", "+00:00"))
    assert before - timedelta(seconds=1) <= revoked_at <= datetime.now(UTC) + timedelta(seconds=1)
    profile(session.user_agent, kept["api_key"])  # the other key is untouched
    assert listed_key(session, kept["id"])["revoked_at"] is None


def test_revoked_key_cannot_act_on_messages(anonbox: Anonbox, new_user_agent: UserAgents) -> None:
    session = signed_in(anonbox, new_user_agent)
    me = profile(session.user_agent, session.access_token)
    key = create_key(session)["api_key"]
    with http_client(anonbox.url) as api:
        message_id = post_message(api, me["link_id"])
        key_id = list_keys(session)[0]["id"]
        assert session.user_agent.delete(
            f"/auth/api-keys/{key_id}", headers=session.headers
        ).is_success

        replied = api.post(
            f"/message/{me['link_id']}/{message_id}",
            json={"message_content": "too late"},
            headers={"X-API-Key": key},
        )

    assert_error(replied, 401)


def test_another_creators_key_id_is_404(anonbox: Anonbox, new_user_agent: UserAgents) -> None:
    mine = signed_in(anonbox, new_user_agent)
    theirs = signed_in(anonbox, new_user_agent)
    their_key = create_key(theirs)

    attempt = mine.user_agent.delete(f"/auth/api-keys/{their_key['id']}", headers=mine.headers)

    assert_error(attempt, 404)
    profile(theirs.user_agent, their_key["api_key"])  # still works
    assert listed_key(theirs, their_key["id"])["revoked_at"] is None


def test_unknown_key_id_is_404(anonbox: Anonbox, new_user_agent: UserAgents) -> None:
    session = signed_in(anonbox, new_user_agent)

    attempt = session.user_agent.delete(
        "/auth/api-keys/01aaaaaaaaaaaaaaaaaaaaaaaa", headers=session.headers
    )

    assert_error(attempt, 404)


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        pytest.param("POST", "/auth/api-keys", {"name": "another"}, id="create"),
        pytest.param("GET", "/auth/api-keys", None, id="list"),
        pytest.param("DELETE", "/auth/api-keys/{key_id}", None, id="delete"),
        pytest.param("POST", "/auth/logout", None, id="logout"),
    ],
)
def test_an_api_key_cannot_manage_keys_or_log_out(
    anonbox: Anonbox,
    new_user_agent: UserAgents,
    method: str,
    path: str,
    body: dict[str, str] | None,
) -> None:
    session = signed_in(anonbox, new_user_agent)
    key = create_key(session)

    with http_client(anonbox.url) as script:
        refused = script.request(
            method,
            path.format(key_id=key["id"]),
            json=body,
            headers={"X-API-Key": key["api_key"]},
        )

    assert_error(refused, 403)
    assert [k["id"] for k in list_keys(session)] == [key["id"]]  # nothing made or revoked
    assert listed_key(session, key["id"])["revoked_at"] is None
    profile(session.user_agent, session.access_token)  # no one was logged out


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/auth/api-keys"),
        ("GET", "/auth/api-keys"),
        ("DELETE", "/auth/api-keys/01aaaaaaaaaaaaaaaaaaaaaaaa"),
    ],
)
@pytest.mark.parametrize(
    "headers", refused_credentials("no-credential", "unknown-key", "unknown-token")
)
def test_key_management_without_a_valid_credential_is_401(
    anonbox: Anonbox, method: str, path: str, headers: dict[str, str]
) -> None:
    with http_client(anonbox.url) as client:
        answer = client.request(
            method, path, json={"name": "x"} if method == "POST" else None, headers=headers
        )

    assert_error(answer, 401)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"name": ""}, id="empty-name"),
        pytest.param({}, id="no-name"),
        pytest.param({"name": 7}, id="name-not-a-string"),
        pytest.param({"name": "   "}, id="blank-name"),
        pytest.param({"name": "a\x00b"}, id="nul-in-name"),  # was a 500 on PostgreSQL
    ],
)
def test_create_with_a_bad_name_is_a_validation_error(
    anonbox: Anonbox, new_user_agent: UserAgents, body: dict[str, Any]
) -> None:
    session = signed_in(anonbox, new_user_agent)

    refused = session.user_agent.post("/auth/api-keys", json=body, headers=session.headers)

    assert_error(refused, 400, "validation_failed")
    assert list_keys(session) == []


def test_keys_outlive_the_session_that_made_them(
    anonbox: Anonbox, new_user_agent: UserAgents
) -> None:
    session = signed_in(anonbox, new_user_agent)
    key = create_key(session)["api_key"]

    assert session.user_agent.post("/auth/logout", headers=session.headers).status_code == 200

    profile(session.user_agent, key)
