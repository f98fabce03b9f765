"""Removing a fediverse account revokes anonbox's token at the instance, then forgets it.

Mastodon: ``POST /oauth/revoke`` with anonbox's client id and secret and the token. The
instance is mastodon-mock behind a loopback recorder (``Recorder``): every request goes
through to mastodon-mock, and the recorder keeps the revocation requests it saw, because
mastodon-mock revokes a token whatever client id and secret come with it; the test then
shows both what a person would notice (the token no longer works at the instance) and
that the request carried anonbox's own registration. The recorder can also answer the
revocation itself with a 503, or be gone, as an instance that is down: the account is
removed here all the same, and the answer says to revoke anonbox at the instance.

Misskey has no revocation an app's token may call: the account is removed, the answer
says so. Each test runs on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest

from anonbox.core.database import connect
from tests.conftest import Creator
from tests.fediverse.conftest import browser, link_account, new_creator
from tests.server import Server
from tests.support.forms import csrf_of
from tests.support.http import loopback_client
from tests.support.mastodon import Mastodon, MastodonAccount
from tests.support.misskey import MisskeyServer
from tests.support.misskey_types import MIAUTH_CHECK, assert_types_hold

_HOP_BY_HOP = {"connection", "transfer-encoding", "keep-alive", "content-length", "host"}


class Recorder:
    """A loopback HTTP server that passes every request on to ``upstream`` and keeps the
    forms of the ``POST /oauth/revoke`` requests; with ``revoke_status`` set it answers
    those itself, with that status, and passes nothing on."""

    def __init__(self, upstream: str) -> None:
        self.revocations: list[dict[str, str]] = []
        self.revoke_status: int | None = None
        forward = loopback_client(base_url=upstream, timeout=30)
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def _pass_on(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.command == "POST" and self.path.split("?")[0] == "/oauth/revoke":
                    form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
                    recorder.revocations.append(form)
                    if recorder.revoke_status is not None:
                        self.send_response(recorder.revoke_status)
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
                answer = forward.request(self.command, self.path, content=body, headers=headers)
                self.send_response(answer.status_code)
                for name, value in answer.headers.items():
                    if name.lower() not in _HOP_BY_HOP | {"content-encoding"}:
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            do_GET = do_POST = _pass_on

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._forward = forward
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self._stopped = False

    def stop(self) -> None:
        """Gone: nothing answers at its address any more."""
        if not self._stopped:
            self._stopped = True
            self._server.shutdown()
            self._server.server_close()
            self._forward.close()


@pytest.fixture
def instance(mastodon: Mastodon) -> Iterator[Recorder]:
    recorder = Recorder(mastodon.url)
    yield recorder
    recorder.stop()


def _row(server: Server, sql: str, *args: str) -> dict[str, Any] | None:
    async def run() -> dict[str, Any] | None:
        db = await connect(server.database_url)
        try:
            row = await db.fetchrow(sql, *args)
        finally:
            await db.close()
        return None if row is None else dict(row)

    return asyncio.run(run())


def _linked(
    server: Server, instance: Recorder, mastodon: Mastodon
) -> tuple[Creator, MastodonAccount, str, str]:
    """A creator (e-mail address, so another way in) with a Mastodon account linked
    through the recorder: the creator, the person, the account's id and anonbox's token."""
    creator = new_creator(server)
    person = mastodon.new_account()
    back = link_account(server, creator, instance.url, lambda u: mastodon.authorize(u, person))
    assert back.status_code == 303, back.text
    row = _row(
        server,
        "SELECT id, access_token FROM fediverse_accounts WHERE user_id = $1",
        creator.user_id,
    )
    assert row is not None
    assert row["access_token"]
    return creator, person, str(row["id"]), str(row["access_token"])


def _works(mastodon: Mastodon, token: str) -> bool:
    """Whether the instance takes ``token``, as anonbox uses it."""
    answer = mastodon.http.get(
        "/api/v1/accounts/verify_credentials", headers={"Authorization": f"Bearer {token}"}
    )
    assert answer.status_code in (200, 401), answer.text
    return answer.status_code == 200


def _accounts(server: Server, creator: Creator) -> list[dict[str, Any]]:
    listed = browser(server).get("/account/fediverse", headers=creator.headers)
    assert listed.status_code == 200, listed.text
    items: list[dict[str, Any]] = listed.json()["data"]["items"]
    return items


def _unlink_warnings(server: Server) -> list[dict[str, Any]]:
    return [r for r in server.log_records() if "fediverse unlink" in str(r.get("event"))]


def test_unlinking_revokes_the_token_at_the_instance_then_forgets_it(
    anonbox: Server, mastodon: Mastodon, instance: Recorder
) -> None:
    creator, _, account_id, token = _linked(anonbox, instance, mastodon)
    assert _works(mastodon, token)

    removed = browser(anonbox).delete(f"/account/fediverse/{account_id}", headers=creator.headers)

    assert removed.status_code == 200, removed.text
    assert "revoked at the instance" in removed.json()["message"]
    assert not _works(mastodon, token)  # what the person sees: anonbox's access is gone
    app = _row(
        anonbox,
        "SELECT client_id, client_secret FROM fediverse_apps WHERE instance = $1",
        instance.url,
    )
    assert app is not None
    assert instance.revocations == [
        {"client_id": app["client_id"], "client_secret": app["client_secret"], "token": token}
    ]
    assert _accounts(anonbox, creator) == []
    assert _row(anonbox, "SELECT id FROM fediverse_accounts WHERE id = $1", account_id) is None


def test_the_account_page_button_revokes_too(
    anonbox: Server, mastodon: Mastodon, instance: Recorder
) -> None:
    creator, _, account_id, token = _linked(anonbox, instance, mastodon)
    page_browser = browser(anonbox, creator.user_id)
    page = page_browser.get("/dashboard/account")
    assert page.status_code == 200, page.text

    removed = page_browser.post(
        f"/dashboard/account/fediverse/{account_id}/unlink",
        data={"csrf_token": csrf_of(page.text)},
    )

    assert removed.status_code == 303, removed.text
    assert not _works(mastodon, token)
    assert [form["token"] for form in instance.revocations] == [token]
    assert _accounts(anonbox, creator) == []


@pytest.mark.parametrize("failure", ["503", "down"])
def test_an_instance_that_cannot_revoke_does_not_keep_the_account(
    anonbox: Server, mastodon: Mastodon, instance: Recorder, failure: str
) -> None:
    creator, person, account_id, token = _linked(anonbox, instance, mastodon)
    warned_before = len(_unlink_warnings(anonbox))
    if failure == "503":
        instance.revoke_status = 503
    else:
        instance.stop()

    removed = browser(anonbox).delete(f"/account/fediverse/{account_id}", headers=creator.headers)

    assert removed.status_code == 200, removed.text
    assert "did not confirm" in removed.json()["message"]
    assert _accounts(anonbox, creator) == []  # forgotten here all the same
    assert _row(anonbox, "SELECT id FROM fediverse_accounts WHERE id = $1", account_id) is None
    assert _works(mastodon, token)  # still valid there: the answer told the person so
    if failure == "503":
        assert [form["token"] for form in instance.revocations] == [token]
    # The log says a revocation failed, and nothing of whose: no token, no account.
    [warned] = _unlink_warnings(anonbox)[warned_before:]
    for secret in (token, person.username, instance.url.rsplit(":", 1)[1]):
        assert secret not in str(warned)
    assert token not in anonbox.log()


def test_misskey_offers_no_revocation_and_the_account_goes_all_the_same(
    anonbox: Server, misskey: MisskeyServer
) -> None:
    creator = new_creator(anonbox)
    user = misskey.state.new_user()
    back = link_account(anonbox, creator, misskey.state.url, lambda u: misskey.state.allow(u, user))
    assert back.status_code == 303, back.text
    [linked] = _accounts(anonbox, creator)

    removed = browser(anonbox).delete(f"/account/fediverse/{linked['id']}", headers=creator.headers)

    assert removed.status_code == 200, removed.text
    assert "Misskey lets no app revoke" in removed.json()["message"]
    assert _accounts(anonbox, creator) == []


# Last in the module (tests/fediverse/conftest.py moves it there), once per database.
@pytest.mark.usefixtures("backend")
def test_what_misskey_exchanged_is_misskeys_api(misskey: MisskeyServer, tmp_path: Path) -> None:
    """What anonbox sent the Misskey stand-in in this module's tests (linking and unlinking),
    and what the stand-in answered, type-check against misskey-js's endpoint types."""
    assert_types_hold(misskey.state.exchanges, tmp_path, {MIAUTH_CHECK})
