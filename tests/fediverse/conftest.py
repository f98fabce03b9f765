"""Fediverse fixtures: a Mastodon (mastodon-mock, from PyPI) and a Misskey stand-in on
loopback, and anonbox servers that may reach them (``ANONBOX_FEDERATION_ALLOW_PRIVATE``,
which loopback needs) or may not (``strict``). Every anonbox runs once on SQLite and once
on PostgreSQL.

A browser is an ``httpx.Client`` that keeps anonbox's cookies; the person at the
instance is played by the peer's own pages (mastodon-mock's account picker) or the
stand-in's ``allow``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx
import pytest

from tests.conftest import Creator, make_creator_in
from tests.server import Server
from tests.support.db import query
from tests.support.forms import csrf_of
from tests.support.http import loopback_client
from tests.support.mastodon import Mastodon, MastodonAccount
from tests.support.misskey import MisskeyServer, MisskeyUser
from tests.support.signin import signed_in

SESSION_COOKIE = "anonbox_session"
# Each module that talks to the Misskey stand-in ends with this test, which type-checks
# what the stand-in exchanged in the module's other tests (tests/support/misskey_types.py).
MISSKEY_TYPES_TEST = "test_what_misskey_exchanged_is_misskeys_api"


def _module_and_backend(item: pytest.Item) -> tuple[object, object]:
    callspec = getattr(item, "callspec", None)
    return item.path, callspec.params.get("backend") if callspec else None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Move each module's Misskey type check after the module's last other test on the
    same database (after pytest's own grouping by fixture parameter, hence trylast): the
    two halves of a module may run in different processes, each with its own stand-in,
    and each half checks what its stand-in recorded."""
    checks = [i for i in items if i.name.split("[", 1)[0] == MISSKEY_TYPES_TEST]
    if not checks:
        return
    ordered = [i for i in items if i not in checks]
    for check in checks:
        group = _module_and_backend(check)
        last = max(
            (n for n, item in enumerate(ordered) if _module_and_backend(item) == group),
            default=len(ordered) - 1,
        )
        ordered.insert(last + 1, check)
    items[:] = ordered


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def mastodon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mastodon]:
    server = Mastodon(tmp_path_factory.mktemp("mastodon") / "mastodon-mock.log")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def misskey() -> Iterator[MisskeyServer]:
    server = MisskeyServer()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def start_anonbox(
    backend: str,
    database_url_factory: Callable[[str], str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[[str, dict[str, str]], Server]]:
    """Starts an anonbox of the module's backend, called ``name``, with ``env``; all are
    stopped after the module. Both share ``backend`` so that a test taking two gets one
    pair per database, not every combination."""
    started: list[Server] = []

    def start(name: str, env: dict[str, str]) -> Server:
        log = tmp_path_factory.mktemp("fediverse") / f"{name}-{backend}.log"
        server = Server(database_url_factory(backend), log, env=env)
        # Posts link to the public address: this server's own.
        server.extra_env.setdefault("ANONBOX_PUBLIC_URL", server.url)
        started.append(server.start())
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def anonbox(start_anonbox: Callable[[str, dict[str, str]], Server]) -> Server:
    return start_anonbox(
        "anonbox",
        {"ANONBOX_FEDERATION_ALLOW_PRIVATE": "true", "ANONBOX_WEBHOOK_RETRY_SECONDS": "0.2"},
    )


@pytest.fixture(scope="module")
def strict(start_anonbox: Callable[[str, dict[str, str]], Server]) -> Server:
    """An anonbox that may not reach private or loopback addresses (the default)."""
    return start_anonbox("strict", {})


_OPEN: list[httpx.Client] = []


@pytest.fixture(autouse=True)
def _close_browsers() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def browser(server: Server, user_id: str | None = None) -> httpx.Client:
    """A fresh browser (closed after the test), signed in as ``user_id`` when given."""
    if user_id is None:
        client = loopback_client(base_url=server.url, timeout=30)
    else:
        client = signed_in(server, user_id)
    _OPEN.append(client)
    return client


def start_signin(client: httpx.Client, instance: str) -> httpx.Response:
    """Open the sign-in page, type the instance, press the button."""
    page = client.get("/signin")
    assert page.status_code == 200, page.text
    return client.post(
        "/signin/fediverse", data={"csrf_token": csrf_of(page.text), "instance": instance}
    )


def back_at(client: httpx.Client, callback: str) -> httpx.Response:
    """The browser arrives at anonbox's callback (an absolute URL on anonbox)."""
    url = httpx.URL(callback)
    return client.get(url.raw_path.decode())


def signin_with_mastodon(
    server: Server, mastodon: Mastodon, account: MastodonAccount
) -> tuple[httpx.Client, httpx.Response]:
    client = browser(server)
    started = start_signin(client, mastodon.url)
    assert started.status_code == 303, started.text
    return client, back_at(client, mastodon.authorize(started.headers["location"], account))


def signin_with_misskey(
    server: Server, misskey: MisskeyServer, user: MisskeyUser
) -> tuple[httpx.Client, httpx.Response]:
    client = browser(server)
    started = start_signin(client, misskey.state.url)
    assert started.status_code == 303, started.text
    return client, back_at(client, misskey.state.allow(started.headers["location"], user))


def session_of(client: httpx.Client) -> dict[str, str]:
    """API headers for the browser's session."""
    return {"Authorization": f"Bearer {client.cookies[SESSION_COOKIE]}"}


def link_account(
    server: Server, creator: Creator, instance: str, allow: Callable[[str], str]
) -> httpx.Response:
    """From the account page of ``creator``: link the account at ``instance``; ``allow``
    plays the person at the instance (takes its page's URL, gives the callback)."""
    client = browser(server, creator.user_id)
    page = client.get("/dashboard/account")
    assert page.status_code == 200, page.text
    started = client.post(
        "/dashboard/account/fediverse",
        data={"csrf_token": csrf_of(page.text), "back": "/dashboard/account", "instance": instance},
    )
    assert started.status_code == 303, started.text
    return back_at(client, allow(started.headers["location"]))


def count_rows(server: Server, table: str) -> int:
    return int(query(server.database_url, f"SELECT COUNT(*) AS n FROM {table}")[0]["n"])  # noqa: S608


def instance_tokens(server: Server) -> list[str]:
    """The instance tokens anonbox keeps (read from its database, as only the server may)."""
    rows = query(server.database_url, "SELECT access_token FROM fediverse_accounts")
    return [str(r["access_token"]) for r in rows if r["access_token"]]


@dataclass
class Linked:
    creator: Creator
    api: httpx.Client


def new_creator(server: Server) -> Creator:
    return make_creator_in(server.database_url)
