"""Sessions after sign-in: access-token expiry, refresh rotation and reuse, logout."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx

from tests.actions import assert_error
from tests.auth.conftest import (
    ACCESS_TTL_SECONDS,
    REFRESH_COOKIE,
    SESSION_MAX_SECONDS,
    Anonbox,
    SignedIn,
    cookie_attributes,
    http_client,
    profile,
    set_cookies,
    sign_in,
)
from tests.support.db import query

UserAgents = Callable[[str], httpx.Client]


def refresh_by_body(base_url: str, refresh_token: str) -> httpx.Response:
    """A client without cookies: the refresh token in the JSON body."""
    with http_client(base_url) as client:
        return client.post("/auth/refresh", json={"refresh_token": refresh_token})


def assert_refreshed(response: httpx.Response) -> dict[str, object]:
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status_code"] == 200
    data = body["data"]
    assert set(data) == {"access_token", "refresh_token", "expires_in"}
    assert data["access_token"].startswith("anbs_")
    assert isinstance(data["expires_in"], int)
    assert data["expires_in"] > 0
    return dict(data)


def assert_rejected(base_url: str, access_token: str) -> None:
    with http_client(base_url) as client:
        assert_error(client.get("/user", headers={"X-API-Key": access_token}), 401)


def signed_in(anonbox: Anonbox, new_user_agent: UserAgents) -> SignedIn:
    return sign_in(new_user_agent(anonbox.url), anonbox.provider.new_user())


# --- expiry ----------------------------------------------------------------------------


def test_access_token_expires_and_refresh_renews_it(
    short_lived_anonbox: Anonbox, new_user_agent: UserAgents
) -> None:
    session = signed_in(short_lived_anonbox, new_user_agent)
    me = profile(session.user_agent, session.access_token)

    time.sleep(ACCESS_TTL_SECONDS + 0.5)

    assert_rejected(short_lived_anonbox.url, session.access_token)
    renewed = assert_refreshed(session.user_agent.post("/auth/refresh"))
    assert renewed["expires_in"] == ACCESS_TTL_SECONDS
    assert profile(session.user_agent, str(renewed["access_token"])) == me


def test_a_session_ends_at_its_absolute_lifetime_however_often_it_is_renewed(
    bounded_anonbox: Anonbox, new_user_agent: UserAgents
) -> None:
    session = signed_in(bounded_anonbox, new_user_agent)
    assert_refreshed(session.user_agent.post("/auth/refresh"))

    time.sleep(SESSION_MAX_SECONDS + 0.3)

    assert_error(session.user_agent.post("/auth/refresh"), 401)


def test_ended_sessions_are_forgotten_with_their_spent_tokens(
    forgetful_anonbox: Anonbox, new_user_agent: UserAgents
) -> None:
    ended = signed_in(forgetful_anonbox, new_user_agent)
    user_id = profile(ended.user_agent, ended.access_token)["user_id"]
    renewed = assert_refreshed(refresh_by_body(forgetful_anonbox.url, ended.refresh_token))
    logout = {"X-API-Key": str(renewed["access_token"])}
    assert ended.user_agent.post("/auth/logout", headers=logout).status_code == 200
    [session_id] = rows(
        forgetful_anonbox, "SELECT id AS value FROM sessions WHERE user_id = $1", user_id
    )
    spent = "SELECT refresh_hash AS value FROM spent_refresh_tokens WHERE session_id = $1"
    assert len(rows(forgetful_anonbox, spent, session_id)) == 1
    time.sleep(1.3)

    signed_in(forgetful_anonbox, new_user_agent)  # any sign-in tidies up

    assert (
        rows(forgetful_anonbox, "SELECT id AS value FROM sessions WHERE user_id = $1", user_id)
        == []
    )
    assert rows(forgetful_anonbox, spent, session_id) == []


def rows(anonbox: Anonbox, sql: str, *args: str) -> list[str]:
    """The one column, named ``value``, of what the database answers to ``sql``."""
    return [str(row["value"]) for row in query(anonbox.server.database_url, sql, *args)]


# --- refresh ---------------------------------------------------------------------------


def test_refresh_with_the_cookie(anonbox: Anonbox, new_user_agent: UserAgents) -> None:
    session = signed_in(anonbox, new_user_agent)
    me = profile(session.user_agent, session.access_token)

    refreshed = session.user_agent.post("/auth/refresh")  # the browser sends anonbox_refresh

    data = assert_refreshed(refreshed)
    assert data["expires_in"] == 3600  # the documented default
    assert data["access_token"] != session.access_token
    assert data["refresh_token"] != session.refresh_token
    [cookie] = set_cookies(refreshed, REFRESH_COOKIE)
    attributes = cookie_attributes(cookie)
    assert attributes["value"] == data["refresh_token"]
    assert "httponly" in attributes
    assert attributes["samesite"].lower() == "strict"
    assert attributes["path"] == "/auth"
    assert profile(session.user_agent, str(data["access_token"])) == me


def test_refresh_with_the_body(anonbox: Anonbox, new_user_agent: UserAgents) -> None:
    session = signed_in(anonbox, new_user_agent)
    me = profile(session.user_agent, session.access_token)

    data = assert_refreshed(refresh_by_body(anonbox.url, session.refresh_token))

    assert profile(session.user_agent, str(data["access_token"])) == me


def test_refresh_tokens_rotate(anonbox: Anonbox, new_user_agent: UserAgents) -> None:
    session = signed_in(anonbox, new_user_agent)

    first = assert_refreshed(refresh_by_body(anonbox.url, session.refresh_token))
    second = assert_refreshed(refresh_by_body(anonbox.url, str(first["refresh_token"])))
    third = assert_refreshed(refresh_by_body(anonbox.url, str(second["refresh_token"])))

    tokens = [session.refresh_token, first["refresh_token"], second["refresh_token"]]
    assert len({*tokens, third["refresh_token"]}) == 4
    profile(session.user_agent, str(third["access_token"]))


def signed_in_and_refreshed(
    anonbox: Anonbox, new_user_agent: UserAgents
) -> tuple[SignedIn, dict[str, object]]:
    """A new sign-in whose refresh token has been used once: the session, and the refresh's data."""
    session = signed_in(anonbox, new_user_agent)
    return session, assert_refreshed(refresh_by_body(anonbox.url, session.refresh_token))


def test_reusing_a_rotated_refresh_token_revokes_the_session(
    anonbox: Anonbox, new_user_agent: UserAgents
) -> None:
    session, rotated = signed_in_and_refreshed(anonbox, new_user_agent)
    current_access = str(rotated["access_token"])
    profile(session.user_agent, current_access)

    # Someone else kept a copy of the first refresh token and presents it.
    assert_error(refresh_by_body(anonbox.url, session.refresh_token), 401)

    assert_rejected(anonbox.url, current_access)
    assert_error(refresh_by_body(anonbox.url, str(rotated["refresh_token"])), 401)


def test_reuse_revokes_only_that_session(anonbox: Anonbox, new_user_agent: UserAgents) -> None:
    user = anonbox.provider.new_user()
    stolen = sign_in(new_user_agent(anonbox.url), user)
    other_device = sign_in(new_user_agent(anonbox.url), user)
    assert_refreshed(refresh_by_body(anonbox.url, stolen.refresh_token))

    assert_error(refresh_by_body(anonbox.url, stolen.refresh_token), 401)

    profile(other_device.user_agent, other_device.access_token)
    assert_refreshed(refresh_by_body(anonbox.url, other_device.refresh_token))


def test_refresh_without_a_token_is_401(anonbox: Anonbox) -> None:
    with http_client(anonbox.url) as client:
        assert_error(client.post("/auth/refresh"), 401)
        assert_error(client.post("/auth/refresh", json={}), 401)


def test_refresh_with_an_unknown_token_is_401(anonbox: Anonbox) -> None:
    unknown = "anbr_" + "x" * 40
    assert_error(refresh_by_body(anonbox.url, unknown), 401)


def test_access_token_is_not_a_refresh_token(anonbox: Anonbox, new_user_agent: UserAgents) -> None:
    session = signed_in(anonbox, new_user_agent)

    assert_error(refresh_by_body(anonbox.url, session.access_token), 401)

    profile(session.user_agent, session.access_token)  # and that did no harm


def test_refresh_token_is_not_an_access_token(anonbox: Anonbox, new_user_agent: UserAgents) -> None:
    session = signed_in(anonbox, new_user_agent)

    assert_rejected(anonbox.url, session.refresh_token)


# --- logout ----------------------------------------------------------------------------


def test_logout_ends_the_session(anonbox: Anonbox, new_user_agent: UserAgents) -> None:
    session = signed_in(anonbox, new_user_agent)

    out = session.user_agent.post("/auth/logout", headers=session.headers)

    assert out.status_code == 200, out.text
    body = out.json()
    assert body["status_code"] == 200
    assert body["data"] is None
    assert_rejected(anonbox.url, session.access_token)
    assert_error(refresh_by_body(anonbox.url, session.refresh_token), 401)
    assert_error(session.user_agent.post("/auth/refresh"), 401)  # cookie gone or dead


def test_logout_after_refresh_kills_the_current_tokens(
    anonbox: Anonbox, new_user_agent: UserAgents
) -> None:
    session, renewed = signed_in_and_refreshed(anonbox, new_user_agent)
    access = str(renewed["access_token"])

    out = session.user_agent.post("/auth/logout", headers={"Authorization": f"Bearer {access}"})

    assert out.status_code == 200, out.text
    assert_rejected(anonbox.url, access)
    assert_error(refresh_by_body(anonbox.url, str(renewed["refresh_token"])), 401)


def test_logout_leaves_other_sessions_signed_in(
    anonbox: Anonbox, new_user_agent: UserAgents
) -> None:
    user = anonbox.provider.new_user()
    phone = sign_in(new_user_agent(anonbox.url), user)
    laptop = sign_in(new_user_agent(anonbox.url), user)

    assert phone.user_agent.post("/auth/logout", headers=phone.headers).status_code == 200

    profile(laptop.user_agent, laptop.access_token)
    assert_refreshed(refresh_by_body(anonbox.url, laptop.refresh_token))


def test_logout_needs_a_credential(anonbox: Anonbox) -> None:
    with http_client(anonbox.url) as client:
        assert_error(client.post("/auth/logout"), 401)
        assert_error(client.post("/auth/logout", headers={"X-API-Key": "anbs_nope"}), 401)


def test_logging_out_twice_is_401(anonbox: Anonbox, new_user_agent: UserAgents) -> None:
    session = signed_in(anonbox, new_user_agent)
    assert session.user_agent.post("/auth/logout", headers=session.headers).status_code == 200

    assert_error(session.user_agent.post("/auth/logout", headers=session.headers), 401)
