"""PKCE against a provider that checks it: Canaille, through pytest-iam's ``iam_server``.

oidc-provider-mock ignores ``code_verifier``, so a wrong verifier would pass there.
Canaille requires PKCE (S256) on every authorization code: a sign-in that succeeds
against it proves that anonbox sends the verifier matching the challenge it put in
the authorization URL.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.actions import assert_error
from tests.auth.conftest import (
    CLIENT_SECRET,
    REDIRECT_URI,
    StartServers,
    callback,
    http_client,
    profile,
    start_signin,
)
from tests.server import Server
from tests.support.http import loopback_get

PKCE_CLIENT_ID = "anonbox-pkce-tests"
UserAgents = Callable[[str], httpx.Client]


@pytest.fixture(scope="session")
def canaille(iam_server: Any) -> Iterator[Any]:
    """Canaille with anonbox registered as a confidential client."""
    # Canaille keeps no "verified" flag; anonbox accepts only verified e-mail addresses,
    # so every address Canaille knows is declared verified, as Google does for its own.
    mapping = iam_server.app.config["CANAILLE_OIDC"]["USERINFO_MAPPING"]
    mapping["EMAIL_VERIFIED"] = "true"
    client = iam_server.models.Client(
        client_id=PKCE_CLIENT_ID,
        client_secret=CLIENT_SECRET,
        client_name="anonbox",
        redirect_uris=[REDIRECT_URI],
        grant_types=["authorization_code"],
        response_types=["code"],
        token_endpoint_auth_method="client_secret_basic",
        scope=["openid", "profile", "email"],
    )
    iam_server.backend.save(client)
    client.audience = [client]  # so that ID tokens name anonbox as their audience
    iam_server.backend.save(client)
    yield iam_server
    iam_server.logout()
    iam_server.backend.delete(client)
    mapping.pop("EMAIL_VERIFIED", None)


@pytest.fixture(scope="session")
def pkce_anonbox(canaille: Any, start_servers: StartServers) -> Iterator[Server]:
    env = {
        "ANONBOX_GOOGLE_ISSUER": canaille.url.rstrip("/"),
        "ANONBOX_GOOGLE_CLIENT_ID": PKCE_CLIENT_ID,
        "ANONBOX_GOOGLE_CLIENT_SECRET": CLIENT_SECRET,
        "ANONBOX_GOOGLE_REDIRECT_URI": REDIRECT_URI,
    }
    with start_servers("logs", {"pkce": env}) as servers:
        yield servers["pkce"]


@pytest.fixture
def person(canaille: Any) -> Iterator[Any]:
    """A Canaille user, signed in at Canaille and having consented to anonbox."""
    # Canaille's in-memory store finds a code by code OR client: no code may linger.
    for stale in canaille.backend.query(canaille.models.AuthorizationCode):
        canaille.backend.delete(stale)
    name = f"pkce-{uuid.uuid4().hex[:10]}"
    user = canaille.random_user(
        user_name=name, emails=[f"{name}@example.org"], formatted_name=f"Person {name}"
    )
    canaille.login(user)
    canaille.consent(user)
    yield user
    canaille.logout()


def authorize(authorization_url: str) -> tuple[str, str]:
    """The signed-in person's browser at Canaille; returns ``code`` and ``state``."""
    with http_client() as browser:
        answer = browser.get(authorization_url)
    assert answer.status_code == 302, answer.text
    location = answer.headers["location"]
    assert location.startswith(REDIRECT_URI), location
    query = parse_qs(urlsplit(location).query)
    return query["code"][0], query["state"][0]


def test_signin_succeeds_against_a_provider_that_verifies_pkce(
    pkce_anonbox: Server, person: Any, new_user_agent: UserAgents
) -> None:
    ua = new_user_agent(pkce_anonbox.url)
    url = start_signin(ua)
    assert parse_qs(urlsplit(url).query)["code_challenge_method"] == ["S256"]
    code, state = authorize(url)

    finished = callback(ua, code, state)

    assert finished.status_code == 200, finished.text
    me = profile(ua, finished.json()["data"]["access_token"])
    assert me["email"] == f"{person.user_name}@example.org"
    assert me["name"] == f"Person {person.user_name}"
    assert me["link_id"]


def test_the_provider_refuses_a_code_without_its_verifier(
    pkce_anonbox: Server, canaille: Any, person: Any, new_user_agent: UserAgents
) -> None:
    """What makes the test above mean something: Canaille does check the verifier."""
    ua = new_user_agent(pkce_anonbox.url)
    code, _ = authorize(start_signin(ua))
    token_endpoint = loopback_get(f"{canaille.url}.well-known/openid-configuration").json()[
        "token_endpoint"
    ]

    exchanged = httpx.post(
        token_endpoint,
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT_URI,
            "code_verifier": "a" * 64,  # not the verifier behind anonbox's challenge
        },
        auth=(PKCE_CLIENT_ID, CLIENT_SECRET),
        timeout=10,
    )

    assert exchanged.status_code == 400, exchanged.text
    assert exchanged.json()["error"] == "invalid_grant"


def test_a_code_from_another_signin_is_refused(
    pkce_anonbox: Server, person: Any, new_user_agent: UserAgents
) -> None:
    """A code stolen from one sign-in and injected into another fails the exchange."""
    victim = new_user_agent(pkce_anonbox.url)
    attacker = new_user_agent(pkce_anonbox.url)
    victims_code, _ = authorize(start_signin(victim))
    attackers_state = parse_qs(urlsplit(start_signin(attacker)).query)["state"][0]

    injected = callback(attacker, victims_code, attackers_state)

    assert_error(injected, 400)
    assert "x-refresh-token" not in injected.headers
