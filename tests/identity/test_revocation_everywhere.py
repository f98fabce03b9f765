"""A revoked key or an ended session stops working on every instance within a second,
although each instance remembers the credentials it has proven (identity.credential_cache).

Two instances share one database (and, in one deployment, one Redis); both are warmed
until they answer the credential from memory (their ``anonbox_credentials_hits`` grow),
then the credential is ended through the first, and the second must refuse it within a
second. The first refuses it at once.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from anonbox.auth.service import create_creator
from anonbox.auth.sessions import open_session
from anonbox.core.database import connect
from anonbox.core.settings import Settings
from tests.server import Server
from tests.support.db import query
from tests.support.http import loopback_client
from tests.support.metrics import scrape, value
from tests.support.services import REDIS_URL, require_redis

WITHIN_SECONDS = 1.0
START_TIMEOUT = 90.0


@dataclass(frozen=True)
class Pair:
    first: Server
    second: Server


@pytest.fixture(scope="module", params=["postgresql+redis", "postgresql", "sqlite"])
def pair(
    request: pytest.FixtureRequest,
    database_url_factory: Callable[[str], str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Pair]:
    deployment = str(request.param)
    env: dict[str, str] = {}
    if deployment == "postgresql+redis":
        require_redis()
        env = {"ANONBOX_REDIS_URL": REDIS_URL}
    url = database_url_factory(deployment.split("+")[0])
    logs = tmp_path_factory.mktemp(f"revocation-{deployment}")
    servers = [Server(url, logs / f"{name}.log", env=env) for name in ("a", "b")]
    try:
        for server in servers:  # one after the other: the first migrates the database
            server.start(START_TIMEOUT)
        yield Pair(*servers)
    finally:
        for server in servers:
            server.stop()


@dataclass(frozen=True)
class Account:
    user_id: str
    api_key: str
    access_token: str


def new_account(database_url: str) -> Account:
    """A creator with an API key and a sign-in session, as the CLI and a sign-in make them."""

    async def run() -> Account:
        db = await connect(database_url)
        try:
            made = await create_creator(db, email=f"{uuid.uuid4().hex[:10]}@example.com")
            tokens = await open_session(db, user_id=made.user_id, settings=Settings())
        finally:
            await db.close()
        return Account(made.user_id, made.api_key, tokens.access_token)

    return asyncio.run(run())


def bearer(credential: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {credential}"}


def hits(server: Server) -> float:
    with loopback_client(base_url=server.url, timeout=30) as client:
        return value(scrape(client), "anonbox_credentials_hits")


def warm(server: Server, credential: str) -> None:
    """Use the credential on ``server`` until it is answered from memory."""
    with loopback_client(base_url=server.url, timeout=30) as client:
        # Generous: a listener just back, on a machine busy with the rest of the suite,
        # may take seconds to reconnect and to echo within the lease (one full run: >10 s).
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            before = hits(server)
            for _ in range(3):
                used = client.get("/user", headers=bearer(credential))
                assert used.status_code == 200, used.text
            if hits(server) > before:
                return
            time.sleep(0.2)  # the listener's first confirmation may not be in yet
        # What the listener was doing, for the one who must find out why.
        with loopback_client(base_url=server.url, timeout=30) as client:
            live = {
                key: value(scrape(client), f"anonbox_live_{key}")
                for key in ("listening", "listener_losses", "confirmed_ms_ago")
            }
    heard = [line for line in server.log().splitlines() if "live updates" in line]
    raise AssertionError(
        f"{server.url} never answered the credential from memory: {live}; {heard[-5:]}"
    )


def status_for(server: Server, credential: str) -> int:
    """What ``server`` answers a request for the account that carries ``credential``."""
    with loopback_client(base_url=server.url, timeout=30) as client:
        return client.get("/user", headers=bearer(credential)).status_code


def refused_within(server: Server, credential: str, seconds: float) -> float | None:
    """How long ``server`` kept accepting the credential (None: past ``seconds``)."""
    with loopback_client(base_url=server.url, timeout=30) as client:
        start = time.monotonic()
        while True:
            status = client.get("/user", headers=bearer(credential)).status_code
            elapsed = time.monotonic() - start
            if status == 401:
                return elapsed
            assert status == 200
            if elapsed > seconds:
                return None
            time.sleep(0.02)


def assert_refused_soon(server: Server, credential: str, what: str) -> None:
    """``server`` refuses ``credential`` within ``WITHIN_SECONDS`` (``what``: for the
    message when it does not)."""
    took = refused_within(server, credential, WITHIN_SECONDS)
    assert took is not None, f"the second instance still took {what} after {WITHIN_SECONDS}s"


def test_a_revoked_api_key_is_refused_everywhere_within_a_second(pair: Pair) -> None:
    account = new_account(pair.first.database_url)
    warm(pair.first, account.api_key)
    warm(pair.second, account.api_key)
    with loopback_client(base_url=pair.first.url, timeout=30) as first:
        [key] = first.get("/auth/api-keys", headers=bearer(account.access_token)).json()["data"][
            "items"
        ]
        revoked = first.delete(f"/auth/api-keys/{key['id']}", headers=bearer(account.access_token))
        assert revoked.status_code == 200, revoked.text
    assert status_for(pair.first, account.api_key) == 401
    assert_refused_soon(pair.second, account.api_key, "the key")
    # The account's session was cached too, and is untouched by revoking a key.
    assert status_for(pair.second, account.access_token) == 200


def test_a_signed_out_session_is_refused_everywhere_within_a_second(pair: Pair) -> None:
    account = new_account(pair.first.database_url)
    warm(pair.first, account.access_token)
    warm(pair.second, account.access_token)
    with loopback_client(base_url=pair.first.url, timeout=30) as first:
        out = first.post("/auth/logout", headers=bearer(account.access_token))
        assert out.status_code == 200, out.text
    assert status_for(pair.first, account.access_token) == 401
    assert_refused_soon(pair.second, account.access_token, "the token")
    assert status_for(pair.second, account.api_key) == 200


def test_a_deletion_request_ends_every_credential_everywhere_within_a_second(pair: Pair) -> None:
    account = new_account(pair.first.database_url)
    for server in (pair.first, pair.second):
        warm(server, account.api_key)
        warm(server, account.access_token)
    with loopback_client(base_url=pair.first.url, timeout=30) as first:
        asked = first.post("/account/deletion", headers=bearer(account.access_token))
        assert asked.status_code == 201, asked.text

    for credential in (account.api_key, account.access_token):
        assert_refused_soon(pair.second, credential, "it")


def terminate_listeners(database_url: str) -> int:
    """End every instance's LISTEN connection (the one that sends itself echoes)."""
    ended = query(
        database_url,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
        " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        " AND query = 'SELECT pg_notify($1, $2)'",
    )
    return len(ended)


def new_key(server: Server, account: Account) -> dict[str, str]:
    with loopback_client(base_url=server.url, timeout=30) as client:
        made = client.post(
            "/auth/api-keys", json={"name": "bot"}, headers=bearer(account.access_token)
        )
    assert made.status_code == 201, made.text
    return {"id": made.json()["data"]["id"], "api_key": made.json()["data"]["api_key"]}


def revoke(server: Server, account: Account, key_id: str) -> None:
    with loopback_client(base_url=server.url, timeout=30) as client:
        revoked = client.delete(f"/auth/api-keys/{key_id}", headers=bearer(account.access_token))
    assert revoked.status_code == 200, revoked.text


# Only PostgreSQL instances listen (SQLite's bound is the cache's 0.5 s life).
@pytest.mark.parametrize("pair", ["postgresql+redis", "postgresql"], indirect=True)
def test_a_listener_cut_off_misses_no_revocation_and_comes_back(pair: Pair) -> None:
    account = new_account(pair.first.database_url)
    key = new_key(pair.first, account)
    warm(pair.second, key["api_key"])

    assert terminate_listeners(pair.first.database_url) >= 2  # both instances'
    revoke(pair.first, account, key["id"])  # announced while nobody listens

    assert refused_within(pair.second, key["api_key"], WITHIN_SECONDS) is not None
    # Listening again, the second instance remembers credentials again, and hears.
    later = new_key(pair.first, account)
    warm(pair.second, later["api_key"])
    with loopback_client(base_url=pair.second.url, timeout=30) as client:
        metrics = scrape(client)  # what an operator sees of it
    assert value(metrics, "anonbox_live_listening") == 1
    assert value(metrics, "anonbox_live_listener_losses") >= 1
    revoke(pair.first, account, later["id"])
    assert refused_within(pair.second, later["api_key"], WITHIN_SECONDS) is not None
