"""Sign-in with an OpenID Connect provider: the flow, the account it makes, every refusal."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.actions import assert_error, inbox_ids, post_message, post_reply, reply_items
from tests.auth.conftest import (
    CLIENT_ID,
    REDIRECT_URI,
    REFRESH_COOKIE,
    SIGNIN_COOKIE,
    STATE_TTL_SECONDS,
    Anonbox,
    Relay,
    User,
    callback,
    consent,
    cookie_attributes,
    cookie_header_client,
    flip_signature_character,
    http_client,
    make_local_creator,
    profile,
    resign_with_foreign_key,
    set_cookies,
    sign_in,
    start_signin,
)
from tests.conftest import Creator
from tests.server import Server

UserAgents = Callable[[str], httpx.Client]


def assert_signin_refused(response: httpx.Response, status: int = 400) -> None:
    """The error envelope, and nothing a signed-in user agent would get."""
    assert_error(response, status)
    assert "x-refresh-token" not in response.headers
    assert set_cookies(response, REFRESH_COOKIE) == []


# --- the flow --------------------------------------------------------------------------


def consented(
    anonbox: Anonbox, new_user_agent: UserAgents, **claims: Any
) -> tuple[httpx.Client, User, str, str]:
    """A new user (with ``claims``) consented at the provider, in a fresh browser that started
    the sign-in: the browser, the user, and the code and state it brings back."""
    ua = new_user_agent(anonbox.url)
    user = anonbox.provider.new_user(**claims)
    code, state = consent(start_signin(ua), user.sub)
    return ua, user, code, state


def test_authorization_url_asks_for_code_with_pkce_state_and_nonce(
    anonbox: Anonbox, new_user_agent: UserAgents
) -> None:
    ua = new_user_agent(anonbox.url)

    started = ua.get("/auth/google/url")

    assert started.status_code == 200, started.text
    body = started.json()
    assert body["status_code"] == 200
    assert set(body["data"]) == {"url"}
    url = urlsplit(body["data"]["url"])
    assert f"{url.scheme}://{url.netloc}" == anonbox.provider.url
    assert url.path == "/oauth2/authorize"  # from the provider's discovery document
    query = {name: values[0] for name, values in parse_qs(url.query).items()}
    assert query["response_type"] == "code"
    assert query["client_id"] == CLIENT_ID
    assert query["redirect_uri"] == REDIRECT_URI
    assert {"openid", "email", "profile"} <= set(query["scope"].split())
    assert query["code_challenge_method"] == "S256"
    assert len(query["code_challenge"]) == 43  # base64url of a SHA-256 digest
    assert len(query["state"]) >= 22
    assert len(query["nonce"]) >= 22
    [cookie] = set_cookies(started, SIGNIN_COOKIE)
    attributes = cookie_attributes(cookie)
    assert "httponly" in attributes
    assert attributes["samesite"].lower() == "lax"
    assert attributes["path"] == "/auth"
    assert attributes["value"] not in body["data"]["url"]


def test_each_start_has_its_own_state_nonce_and_challenge(
    anonbox: Anonbox, new_user_agent: UserAgents
) -> None:
    ua = new_user_agent(anonbox.url)

    first = parse_qs(urlsplit(start_signin(ua)).query)
    second = parse_qs(urlsplit(start_signin(ua)).query)

    for name in ("state", "nonce", "code_challenge"):
        assert first[name] != second[name], name


def test_full_flow_gives_an_access_token_and_a_refresh_token(
    anonbox: Anonbox, new_user_agent: UserAgents
) -> None:
    ua = new_user_agent(anonbox.url)
    user = anonbox.provider.new_user()
    url = start_signin(ua)
    code, state = consent(url, user.sub)
    assert state == parse_qs(urlsplit(url).query)["state"][0]

    finished = callback(ua, code, state)

    assert finished.status_code == 200, finished.text
    body = finished.json()
    assert set(body) == {"status_code", "message", "data", "metadata"}
    assert body["status_code"] == 200
    assert set(body["data"]) == {"access_token"}
    access_token = body["data"]["access_token"]
    assert access_token.startswith("anbs_")
    refresh_token = finished.headers["x-refresh-token"]
    assert refresh_token not in {"", access_token}
    [cookie] = set_cookies(finished, REFRESH_COOKIE)
    attributes = cookie_attributes(cookie)
    assert attributes["value"] == refresh_token
    assert "httponly" in attributes
    assert attributes["samesite"].lower() == "strict"
    assert attributes["path"] == "/auth"
    assert profile(ua, access_token)["email"] == user.claims["email"]
    bearer = ua.get("/user", headers={"Authorization": f"Bearer {access_token}"})
    assert bearer.status_code == 200, bearer.text


def test_first_signin_creates_the_account_and_a_working_link(
    anonbox: Anonbox, new_user_agent: UserAgents
) -> None:
    ua = new_user_agent(anonbox.url)
    user = anonbox.provider.new_user(name="Ada Lovelace")

    signed = sign_in(ua, user)

    me = profile(ua, signed.access_token)
    assert set(me) == {"user_id", "name", "email", "link_id", "profile_url", "created_at"}
    assert me["name"] == "Ada Lovelace"
    assert me["email"] == user.claims["email"]
    assert me["profile_url"] == user.claims["picture"]
    assert isinstance(me["link_id"], str)
    assert len(me["link_id"]) >= 8
    creator = Creator(me["user_id"], me["link_id"], signed.access_token)
    with http_client(anonbox.url) as anonymous:
        message_id = post_message(anonymous, me["link_id"], "who are you?")
    assert inbox_ids(ua, creator) == [message_id]
    reply_id = post_reply(ua, creator, message_id, "a creator")
    assert [r["reply_message_id"] for r in reply_items(ua, creator, message_id)] == [reply_id]


def test_second_signin_updates_the_profile_and_keeps_the_account(
    anonbox: Anonbox, new_user_agent: UserAgents
) -> None:
    user = anonbox.provider.new_user(name="Old Name")
    first = sign_in(new_user_agent(anonbox.url), user)
    before = profile(first.user_agent, first.access_token)
    changed = {
        **user.claims,
        "name": "New Name",
        "email": f"renamed-{user.sub}@example.org",
        "picture": f"https://pictures.example.org/{user.sub}-v2.png",
    }
    anonbox.provider.put_user(user.sub, changed)

    second = sign_in(new_user_agent(anonbox.url), user)

    after = profile(second.user_agent, second.access_token)
    assert after == {
        **before,
        "name": "New Name",
        "email": changed["email"],
        "profile_url": changed["picture"],
    }
    assert profile(first.user_agent, first.access_token) == after  # the same account


def test_two_provider_subjects_with_one_verified_address_reach_one_account(
    anonbox: Anonbox, new_user_agent: UserAgents
) -> None:
    """An account is one person, and the verified address is the person: a Google account
    that now holds an address reaches the anonbox account of that address."""
    email = f"shared-{time.time_ns()}@example.org"
    one = anonbox.provider.new_user(email=email)
    other = anonbox.provider.new_user(email=email)

    first = profile(
        new_user_agent(anonbox.url), sign_in(new_user_agent(anonbox.url), one).access_token
    )
    second = profile(
        new_user_agent(anonbox.url), sign_in(new_user_agent(anonbox.url), other).access_token
    )

    assert first["email"] == second["email"] == email
    assert first["user_id"] == second["user_id"]
    assert first["link_id"] == second["link_id"]


def test_a_provider_account_with_the_address_of_a_local_creator_reaches_that_account(
    anonbox: Anonbox, new_user_agent: UserAgents
) -> None:
    cli_creator, email = make_local_creator(anonbox.server)
    user = anonbox.provider.new_user(email=email.upper())  # addresses compare without case

    me = profile(
        new_user_agent(anonbox.url), sign_in(new_user_agent(anonbox.url), user).access_token
    )

    assert me["email"] == email
    assert me["user_id"] == cli_creator.user_id
    assert me["link_id"] == cli_creator.link_id


def test_a_renamed_address_that_another_account_has_is_not_taken_from_it(
    anonbox: Anonbox, new_user_agent: UserAgents
) -> None:
    local, taken = make_local_creator(anonbox.server)
    user = anonbox.provider.new_user()
    first = profile(
        new_user_agent(anonbox.url), sign_in(new_user_agent(anonbox.url), user).access_token
    )
    anonbox.provider.put_user(user.sub, {**user.claims, "email": taken})

    again = profile(
        new_user_agent(anonbox.url), sign_in(new_user_agent(anonbox.url), user).access_token
    )

    assert again["user_id"] == first["user_id"] != local.user_id
    assert again["email"] == first["email"]  # the address stays with the account that has it


# --- state -----------------------------------------------------------------------------


def test_replayed_state_is_refused(anonbox: Anonbox, new_user_agent: UserAgents) -> None:
    ua = new_user_agent(anonbox.url)
    user = anonbox.provider.new_user()
    url = start_signin(ua)
    binding = ua.cookies[SIGNIN_COOKIE]
    code, state = consent(url, user.sub)
    assert callback(ua, code, state).status_code == 200
    # The provider hands out another good code for the same request (same state, nonce
    # and challenge): only the state having been used can stop it.
    fresh_code, same_state = consent(url, user.sub)
    assert same_state == state

    # The same browser, cookie and all, sends an answer for that state again.
    with cookie_header_client(anonbox.url, {SIGNIN_COOKIE: binding}) as replay:
        with_fresh_code = callback(replay, fresh_code, state)
        with_same_code = callback(replay, code, state)

    assert_signin_refused(with_fresh_code)
    assert_signin_refused(with_same_code)


def test_state_is_spent_even_when_the_provider_refused_the_code(
    anonbox: Anonbox, new_user_agent: UserAgents
) -> None:
    ua, _, code, state = consented(anonbox, new_user_agent)
    binding = ua.cookies[SIGNIN_COOKIE]

    assert_signin_refused(callback(ua, "not-a-code-the-provider-issued", state))
    with cookie_header_client(anonbox.url, {SIGNIN_COOKIE: binding}) as retry:
        assert_signin_refused(callback(retry, code, state))


def test_unknown_state_is_refused(anonbox: Anonbox, new_user_agent: UserAgents) -> None:
    ua = new_user_agent(anonbox.url)
    user = anonbox.provider.new_user()
    code, _ = consent(start_signin(ua), user.sub)

    assert_signin_refused(callback(ua, code, "a-state-anonbox-never-issued"))


def test_expired_state_is_refused(short_lived_anonbox: Anonbox, new_user_agent: UserAgents) -> None:
    ua = new_user_agent(short_lived_anonbox.url)
    user = short_lived_anonbox.provider.new_user()
    url = start_signin(ua)
    binding = ua.cookies[SIGNIN_COOKIE]
    time.sleep(STATE_TTL_SECONDS + 0.5)
    code, state = consent(url, user.sub)  # the provider's code is fresh

    # The browser may have dropped its cookie already (it has the same lifetime): send it.
    with cookie_header_client(short_lived_anonbox.url, {SIGNIN_COOKIE: binding}) as late:
        assert_signin_refused(callback(late, code, state))


def test_a_state_finished_in_time_on_the_short_lived_server_works(
    short_lived_anonbox: Anonbox, new_user_agent: UserAgents
) -> None:
    """The control for the expired-state test: same server, no wait."""
    ua = new_user_agent(short_lived_anonbox.url)
    sign_in(ua, short_lived_anonbox.provider.new_user())


def test_state_from_another_user_agent_is_refused(
    anonbox: Anonbox, new_user_agent: UserAgents
) -> None:
    victim = new_user_agent(anonbox.url)
    user = anonbox.provider.new_user()
    code, state = consent(start_signin(victim), user.sub)
    no_cookie = new_user_agent(anonbox.url)
    other_signin = new_user_agent(anonbox.url)
    start_signin(other_signin)  # has an anonbox_signin cookie, just not this one

    assert_signin_refused(callback(no_cookie, code, state))
    assert_signin_refused(callback(other_signin, code, state))
    # Neither attempt used up the state: the browser that started it can still finish.
    assert callback(victim, code, state).status_code == 200


# --- the ID token ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad_claims",
    [
        pytest.param({"nonce": "not-the-nonce-anonbox-sent"}, id="wrong-nonce"),
        pytest.param({"aud": "someone-else"}, id="wrong-audience"),
        pytest.param({"aud": [CLIENT_ID, "someone-else"]}, id="shared-audience-without-azp"),
        pytest.param({"iss": "http://evil.example"}, id="wrong-issuer"),
        pytest.param({"exp": 1_000_000_000}, id="expired-id-token"),
        pytest.param({"email_verified": False}, id="email-not-verified"),
    ],
)
def test_id_token_failing_a_check_is_refused(
    anonbox: Anonbox, new_user_agent: UserAgents, bad_claims: dict[str, Any]
) -> None:
    ua, _, code, state = consented(anonbox, new_user_agent, **bad_claims)

    refused = callback(ua, code, state)

    assert_signin_refused(refused)


def test_id_token_without_email_verified_is_refused(
    anonbox: Anonbox, new_user_agent: UserAgents
) -> None:
    ua = new_user_agent(anonbox.url)
    user = anonbox.provider.new_user()
    claims = {k: v for k, v in user.claims.items() if k != "email_verified"}
    anonbox.provider.put_user(user.sub, claims)
    code, state = consent(start_signin(ua), user.sub)

    assert_signin_refused(callback(ua, code, state))


def test_refused_id_token_creates_no_account(anonbox: Anonbox, new_user_agent: UserAgents) -> None:
    user = anonbox.provider.new_user(aud="someone-else")
    ua = new_user_agent(anonbox.url)
    code, state = consent(start_signin(ua), user.sub)
    assert_signin_refused(callback(ua, code, state))
    moment = time.time()
    time.sleep(0.05)
    anonbox.provider.put_user(user.sub, {**user.claims, "aud": CLIENT_ID})

    me = profile(ua, sign_in(new_user_agent(anonbox.url), user).access_token)

    assert datetime.fromisoformat(me["created_at"].replace("Z", "+00:00")).timestamp() > moment


@pytest.mark.parametrize(
    "rewrite",
    [
        pytest.param(flip_signature_character, id="tampered-signature"),
        pytest.param(resign_with_foreign_key, id="key-the-provider-never-published"),
    ],
)
def test_id_token_whose_signature_does_not_check_out_is_refused(
    relayed_anonbox: Anonbox,
    relay: Relay,
    new_user_agent: UserAgents,
    rewrite: Callable[[str], str],
) -> None:
    ua, _, code, state = consented(relayed_anonbox, new_user_agent)
    relay.rewrite_id_token = rewrite

    assert_signin_refused(callback(ua, code, state))


def test_relayed_signin_works_when_nothing_is_tampered(
    relayed_anonbox: Anonbox, relay: Relay, new_user_agent: UserAgents
) -> None:
    """The control for the relay tests: the relay itself breaks nothing."""
    sign_in(new_user_agent(relayed_anonbox.url), relayed_anonbox.provider.new_user())


def test_code_the_provider_rejects_is_refused(anonbox: Anonbox, new_user_agent: UserAgents) -> None:
    ua = new_user_agent(anonbox.url)
    state = parse_qs(urlsplit(start_signin(ua)).query)["state"][0]

    assert_signin_refused(callback(ua, "x" * 150, state))


# --- the provider failing --------------------------------------------------------------


def test_provider_down_during_the_code_exchange_is_a_502(
    relayed_anonbox: Anonbox, relay: Relay, new_user_agent: UserAgents
) -> None:
    ua, user, code, state = consented(relayed_anonbox, new_user_agent)
    relay.down = True

    assert_signin_refused(callback(ua, code, state), 502)

    relay.down = False  # back up: a new sign-in works
    sign_in(new_user_agent(relayed_anonbox.url), user)


def test_provider_answering_500_at_the_token_endpoint_is_a_502(
    relayed_anonbox: Anonbox, relay: Relay, new_user_agent: UserAgents
) -> None:
    ua, _, code, state = consented(relayed_anonbox, new_user_agent)
    relay.token_endpoint_status = 500

    assert_signin_refused(callback(ua, code, state), 502)


def test_unreachable_provider_is_a_502_when_starting(
    unreachable_provider_anonbox: Anonbox, new_user_agent: UserAgents
) -> None:
    ua = new_user_agent(unreachable_provider_anonbox.url)

    started = ua.get("/auth/google/url")

    assert_error(started, 502)
    assert set_cookies(started, SIGNIN_COOKIE) == []


# --- configuration ---------------------------------------------------------------------


def test_without_a_client_id_signin_is_not_offered_and_messages_still_work(
    unconfigured_server: Server,
) -> None:
    with http_client(unconfigured_server.url) as api:
        started = api.get("/auth/google/url")
        finished = api.post("/auth/google/callback", json={"code": "a-code", "state": "a-state"})
        returned = api.get("/auth/google/callback", params={"code": "a", "state": "b"})
        # Not "come back in a few seconds" (503 and Retry-After): only an operator changes it.
        assert_error(started, 404)
        assert_error(finished, 404)
        assert "retry-after" not in started.headers
        assert returned.status_code == 404
        assert returned.headers["content-type"].startswith("text/html")

        creator, _ = make_local_creator(unconfigured_server)
        message_id = post_message(api, creator.link_id)
        post_reply(api, creator, message_id)
        assert inbox_ids(api, creator) == [message_id]


# --- request validation ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "state", "fault"),
    [
        pytest.param("", "s", {"field": "code", "problem": "too_short"}, id="empty-code"),
        pytest.param("c", "", {"field": "state", "problem": "too_short"}, id="empty-state"),
        pytest.param("c" * 151, "s", {"field": "code", "problem": "too_long"}, id="151-code"),
        pytest.param("c", "s" * 151, {"field": "state", "problem": "too_long"}, id="151-state"),
    ],
)
def test_code_and_state_outside_1_to_150_characters_are_a_validation_error(
    anonbox: Anonbox, new_user_agent: UserAgents, code: str, state: str, fault: dict[str, str]
) -> None:
    ua = new_user_agent(anonbox.url)
    start_signin(ua)

    refused = callback(ua, code, state)

    body = assert_error(refused, 400, "validation_failed")
    assert body["error"]["fields"] == [fault]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"state": "s"}, id="no-code"),
        pytest.param({"code": "c"}, id="no-state"),
        pytest.param({"code": 1, "state": "s"}, id="code-not-a-string"),
        pytest.param({"code": "c", "state": None}, id="state-null"),
        pytest.param([], id="not-an-object"),
    ],
)
def test_malformed_callback_bodies_are_a_validation_error(
    anonbox: Anonbox, new_user_agent: UserAgents, body: Any
) -> None:
    ua = new_user_agent(anonbox.url)

    assert_error(ua.post("/auth/google/callback", json=body), 400, "validation_failed")


def test_code_and_state_of_150_characters_pass_validation(
    anonbox: Anonbox, new_user_agent: UserAgents
) -> None:
    ua = new_user_agent(anonbox.url)
    real_state = parse_qs(urlsplit(start_signin(ua)).query)["state"][0]

    long_state = callback(ua, "c", "s" * 150)
    long_code = callback(ua, "c" * 150, real_state)

    for refused in (long_state, long_code):  # refused as a sign-in, not as a malformed request
        body = assert_error(refused, 400)
        assert body["error"]["code"] != "validation_failed"
