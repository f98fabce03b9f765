"""Links for signed-in senders only (``senders: signed_in``, issue 33 item 4).

Such a link takes a message only with a valid anonbox credential (a sign-in session's
access token or an API key), and its sender stays anonymous to the creator: nothing the
creator can read names their account. The creator may still block them: the block holds
the account's keyed hash, so the account stays blocked from any network, and gets the same
201 as everyone. Limits count the account, whatever address it posts from.

Each backend gets one server trusting 127.0.0.1 as a proxy (so a test can post from any
address with ``X-Forwarded-For``) and allowing 3 posts per sender per link a minute.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import quote

import httpx
import pytest

from anonbox.auth.service import create_creator
from anonbox.auth.sessions import open_session
from anonbox.core.database import connect
from anonbox.core.settings import Settings
from tests.actions import assert_error, inbox_items
from tests.conftest import Creator, make_creator_in
from tests.safety.conftest import (
    assert_created_message,
    assert_same_answer,
    block_sender_of,
    new_sender,
)
from tests.server import Server
from tests.support.deployment import TRUST_LOOPBACK
from tests.support.http import loopback_client
from tests.support.servers import own_server
from tests.support.signin import signed_in, signin_link_command

PER_SENDER_LINK = 3
HTML = {"Accept": "text/html,application/xhtml+xml"}
_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


proxied_server = own_server(
    "proxied_server", {**TRUST_LOOPBACK, "ANONBOX_LIMIT_SENDER_LINK": f"{PER_SENDER_LINK}/60"}
)


@pytest.fixture
def server(proxied_server: Server) -> Server:
    """The module's server, as the root conftest's ``api`` and ``creator`` take it."""
    return proxied_server


@dataclass(frozen=True)
class Account:
    """A signed-in sender: an anonbox account, with its API key and a sign-in token."""

    user_id: str
    email: str
    api_key: str
    access_token: str

    @property
    def bearer(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.access_token}"}

    @property
    def key(self) -> dict[str, str]:
        return {"X-API-Key": self.api_key}


def new_account(server: Server) -> Account:
    async def run() -> Account:
        db = await connect(server.database_url)
        try:
            made = await create_creator(db, email=f"sender-{uuid.uuid4().hex[:10]}@example.com")
            opened = await open_session(db, user_id=made.user_id, settings=Settings())
        finally:
            await db.close()
        return Account(made.user_id, made.email, made.api_key, opened.access_token)

    return asyncio.run(run())


def signed_in_only(api: httpx.Client, creator: Creator) -> None:
    changed = api.patch(
        f"/links/{creator.link_id}", json={"senders": "signed_in"}, headers=creator.headers
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["data"]["senders"] == "signed_in"


def signed_in_only_creator(api: httpx.Client, server: Server) -> Creator:
    """A new creator whose link takes messages from signed-in senders only."""
    creator = make_creator_in(server.database_url)
    signed_in_only(api, creator)
    return creator


def post(
    api: httpx.Client, link_id: str, text: str, headers: dict[str, str] | None = None
) -> httpx.Response:
    return api.post(f"/message/{link_id}", json={"message_content": text}, headers=headers or {})


def export_of(api: httpx.Client, creator: Creator) -> str:
    exported = api.get("/account/export", headers=creator.headers)
    assert exported.status_code == 200, exported.text
    return exported.text


# --- the setting ----------------------------------------------------------------------------


def test_the_setting_round_trips_and_a_bad_value_is_refused(
    api: httpx.Client, proxied_server: Server
) -> None:
    creator = make_creator_in(proxied_server.database_url)
    path = f"/links/{creator.link_id}"
    assert api.get(path, headers=creator.headers).json()["data"]["senders"] == "anyone"

    signed_in_only(api, creator)
    assert api.get(path, headers=creator.headers).json()["data"]["senders"] == "signed_in"
    # Anyone may learn it (a client then knows to sign in first), never who the creator is.
    public = api.get(f"/links/{creator.link_id}/public")
    assert public.status_code == 200, public.text
    assert public.json()["data"]["senders"] == "signed_in"

    for bad in ("everyone", "", "SIGNED_IN", 1, None, True):
        refused = api.patch(path, json={"senders": bad}, headers=creator.headers)
        assert_error(refused, 400)
    assert api.get(path, headers=creator.headers).json()["data"]["senders"] == "signed_in"

    back = api.patch(path, json={"senders": "anyone"}, headers=creator.headers)
    assert back.status_code == 200, back.text
    assert back.json()["data"]["senders"] == "anyone"
    assert post(api, creator.link_id, "open again").status_code == 201


# --- who may send ---------------------------------------------------------------------------


def test_a_signed_out_sender_gets_401_sign_in_required_and_nothing_is_stored(
    api: httpx.Client, proxied_server: Server
) -> None:
    creator = signed_in_only_creator(api, proxied_server)

    refused = post(api, creator.link_id, "from nobody")
    body = assert_error(refused, 401, "sign_in_required")
    assert "sign" in body["message"].lower()
    # A credential that proves nothing is refused too, as anywhere.
    for wrong in ({"X-API-Key": "not-a-key"}, {"Authorization": "Bearer not-a-token"}):
        assert_error(post(api, creator.link_id, "from a wrong key", wrong), 401)
    # Nothing stored, and nothing dropped either: the creator's export has none of it.
    assert inbox_items(api, creator) == []
    exported = export_of(api, creator)
    assert "from nobody" not in exported
    assert "from a wrong key" not in exported


def test_a_signed_in_sender_is_stored_and_the_creator_cannot_tell_who(
    api: httpx.Client, proxied_server: Server
) -> None:
    creator = signed_in_only_creator(api, proxied_server)
    sender = new_account(proxied_server)

    sent = []
    for text, headers in (("by token", sender.bearer), ("by key", sender.key)):
        response = post(api, creator.link_id, text, headers)
        data = assert_created_message(response, text)
        assert sender.user_id not in response.text
        assert sender.email not in response.text
        sent.append(data["id"])

    items = inbox_items(api, creator)
    assert sorted(item["id"] for item in items) == sorted(sent)
    shown = [api.get(f"/message/{creator.link_id}", headers=creator.headers).text]
    shown += [
        api.get(f"/message/{creator.link_id}/{message_id}", headers=creator.headers).text
        for message_id in sent
    ]
    shown.append(export_of(api, creator))
    assert "by token" in shown[-1]
    assert "by key" in shown[-1]
    for text in shown:
        assert sender.user_id not in text
        assert sender.email not in text
        assert sender.email.split("@")[0] not in text


def test_a_link_for_anyone_ignores_no_one(api: httpx.Client, proxied_server: Server) -> None:
    """The default: no credential needed, and a signed-in sender is still welcome."""
    creator = make_creator_in(proxied_server.database_url)
    sender = new_account(proxied_server)
    assert_created_message(post(api, creator.link_id, "anonymous"), "anonymous")
    assert_created_message(post(api, creator.link_id, "signed", sender.bearer), "signed")


# --- blocks and limits follow the account ---------------------------------------------------


def test_blocking_a_signed_in_message_blocks_the_account_from_any_network(
    api: httpx.Client, proxied_server: Server
) -> None:
    creator = signed_in_only_creator(api, proxied_server)
    blocked, other = new_account(proxied_server), new_account(proxied_server)
    home, away = new_sender(), new_sender()  # two addresses, each in its own /24

    first = post(api, creator.link_id, "first", {**blocked.bearer, **home.headers})
    message_id = assert_created_message(first, "first")["id"]
    block_sender_of(api, creator, message_id)

    # From another network, with the other credential: dropped, the same 201 as anyone's.
    dropped = post(api, creator.link_id, "again", {**blocked.key, **away.headers})
    stored = post(api, creator.link_id, "someone else", {**other.bearer, **home.headers})
    assert_same_answer(stored, "someone else", dropped, "again")
    texts = [item["message_content"] for item in inbox_items(api, creator)]
    assert "again" not in texts
    # The block is of the account, not of the network it first wrote from.
    assert "someone else" in texts
    assert "first" in texts  # nothing already sent moves


def follow_up(
    api: httpx.Client, token: str, text: str, headers: dict[str, str] | None = None
) -> httpx.Response:
    return api.post(
        f"/receipts/{token}/follow-up", json={"message_content": text}, headers=headers or {}
    )


def receipt_of(api: httpx.Client, creator: Creator, text: str, headers: dict[str, str]) -> str:
    """Post ``text`` asking for a receipt; its token."""
    sent = api.post(
        f"/message/{creator.link_id}?receipt=true", json={"message_content": text}, headers=headers
    )
    assert sent.status_code == 201, sent.text
    return str(sent.json()["data"]["receipt"]["token"])


def test_a_follow_up_there_needs_a_credential_and_is_judged_by_the_account(
    api: httpx.Client, proxied_server: Server
) -> None:
    """A receipt's follow-up on a link for signed-in senders is a post there: refused
    signed out, and known to the gate by its account, so that the account's block holds
    for it from any network, whichever of its messages the block was made from."""
    creator = signed_in_only_creator(api, proxied_server)
    sender = new_account(proxied_server)
    home, away, elsewhere = new_sender(), new_sender(), new_sender()

    token = receipt_of(api, creator, "with a receipt", {**sender.bearer, **home.headers})
    refused = follow_up(api, token, "signed out", away.headers)
    assert refused.status_code == 401, refused.text
    assert refused.json()["error"]["code"] == "sign_in_required"
    texts = [item["message_content"] for item in inbox_items(api, creator)]
    assert texts == ["with a receipt"]  # nothing stored, and the follow-up is not spent

    # The creator blocks the account through another of its messages, sent from elsewhere.
    other = post(api, creator.link_id, "another one", {**sender.key, **away.headers})
    block_sender_of(api, creator, assert_created_message(other, "another one")["id"])
    dropped = follow_up(api, token, "still me", {**sender.bearer, **elsewhere.headers})
    assert dropped.status_code == 201, dropped.text
    texts = [item["message_content"] for item in inbox_items(api, creator)]
    assert "still me" not in texts
    assert sorted(texts) == ["another one", "with a receipt"]


def test_the_receipt_page_asks_a_signed_out_sender_to_sign_in_for_the_follow_up(
    api: httpx.Client, proxied_server: Server
) -> None:
    creator = signed_in_only_creator(api, proxied_server)
    sender = new_account(proxied_server)
    token = receipt_of(api, creator, "from the page", {**sender.bearer, **new_sender().headers})
    page = api.get(f"/r/{token}", headers=HTML)
    assert page.status_code == 200, page.text
    assert 'id="signin-needed"' in page.text
    assert 'id="follow-up-form"' not in page.text
    assert f'href="/signin?next=%2F{creator.link_id}"' in page.text
    # The form posted anyway (a page opened before the link changed): 401, the same notice.
    csrf = _TOKEN.search(api.get("/signin", headers=HTML).text)  # this browser's token
    assert csrf is not None
    posted = api.post(
        f"/r/{token}",
        data={"csrf_token": csrf.group(1), "message_content": "posted signed out"},
        headers={**HTML, "Origin": str(api.base_url).rstrip("/")},
    )
    assert posted.status_code == 401, posted.text
    assert 'id="signin-needed"' in posted.text
    texts = [item["message_content"] for item in inbox_items(api, creator)]
    assert texts == ["from the page"]


def test_parallel_posts_from_one_account_share_its_per_sender_limit(
    api: httpx.Client, proxied_server: Server
) -> None:
    creator = signed_in_only_creator(api, proxied_server)
    sender = new_account(proxied_server)
    attempts = PER_SENDER_LINK + 5
    addresses = [new_sender() for _ in range(attempts)]  # each post from another /24

    def one(n: int) -> int:
        with loopback_client(base_url=proxied_server.url, timeout=30) as client:
            headers = {**sender.bearer, **addresses[n].headers}
            return post(client, creator.link_id, f"parallel {n}", headers).status_code

    with ThreadPoolExecutor(max_workers=attempts) as pool:
        codes = list(pool.map(one, range(attempts)))
    assert sorted(codes) == [201] * PER_SENDER_LINK + [429] * (attempts - PER_SENDER_LINK)
    assert len(inbox_items(api, creator)) == PER_SENDER_LINK


# --- the send page --------------------------------------------------------------------------


def test_the_send_page_asks_a_signed_out_visitor_to_sign_in_and_comes_back(
    api: httpx.Client, proxied_server: Server
) -> None:
    creator = signed_in_only_creator(api, proxied_server)
    page = api.get(f"/{creator.link_id}", headers=HTML)
    assert page.status_code == 200
    signin = f"/signin?next={quote('/' + creator.link_id, safe='')}"
    assert f'href="{signin}"' in page.text
    assert 'id="send-form"' not in page.text

    # A form posted anyway (an old tab) is refused with the same invitation; nothing stored.
    token = _TOKEN.search(api.get("/signin", headers=HTML).text)
    assert token
    posted = api.post(
        f"/{creator.link_id}",
        data={"message_content": "from an old tab", "csrf_token": token.group(1)},
        headers=HTML,
    )
    assert posted.status_code == 401
    assert f'href="{signin}"' in posted.text
    assert inbox_items(api, creator) == []

    # Signing in from there comes back to the send page, which now has the form.
    with loopback_client(base_url=proxied_server.url, timeout=30) as browser:
        assert browser.get(signin, headers=HTML).status_code == 200
        link = signin_link_command(proxied_server, f"v-{uuid.uuid4().hex[:8]}@example.org")
        followed = browser.get(link)
        assert followed.status_code == 303, followed.text
        assert followed.headers["location"] == f"/{creator.link_id}"
        opened = browser.get(f"/{creator.link_id}", headers=HTML)
        assert 'id="send-form"' in opened.text
        assert "data-api=" not in opened.text  # the form posts itself: it has the cookie
        csrf = _TOKEN.search(opened.text)
        assert csrf
        sent = browser.post(
            f"/{creator.link_id}",
            data={"message_content": "signed in on the page", "csrf_token": csrf.group(1)},
            headers=HTML,
        )
        assert sent.status_code == 303, sent.text
        # The next sign-in goes to the dashboard again: the way back is used once.
        again = signin_link_command(proxied_server, f"w-{uuid.uuid4().hex[:8]}@example.org")
        assert browser.get(again).headers["location"] == "/dashboard"
    assert [m["message_content"] for m in inbox_items(api, creator)] == ["signed in on the page"]


@pytest.mark.parametrize(
    "elsewhere",
    ["//evil.example/x", "https://evil.example/", "/\\evil.example", "/a/../../x", "/a?b=c", ""],
)
def test_sign_in_comes_back_only_to_a_send_page_of_this_site(
    proxied_server: Server, elsewhere: str
) -> None:
    with loopback_client(base_url=proxied_server.url, timeout=30) as browser:
        opened = browser.get("/signin", params={"next": elsewhere}, headers=HTML)
        assert opened.status_code in (200, 400)
        link = signin_link_command(proxied_server, f"x-{uuid.uuid4().hex[:8]}@example.org")
        followed = browser.get(link)
        assert followed.status_code == 303, followed.text
        assert followed.headers["location"] == "/dashboard"


def test_the_link_settings_page_sets_who_may_send(
    api: httpx.Client, proxied_server: Server
) -> None:
    creator = make_creator_in(proxied_server.database_url)
    settings_page = f"/dashboard/links/{creator.link_id}/settings"
    with signed_in(proxied_server, creator.user_id) as browser:
        page = browser.get(settings_page, headers=HTML)
        assert page.status_code == 200, page.text
        assert '<option value="anyone" selected>' in page.text
        token = _TOKEN.search(page.text)
        assert token
        form = {
            "csrf_token": token.group(1),
            "prompt": "Ask me anything",
            "all_settings": "1",
            "pause": "open",
            "muted": "filter",
            "follow_ups": "on",
            "crosspost": "off",
            "senders": "signed_in",
        }
        saved = browser.post(settings_page, data=form, headers=HTML)
        assert saved.status_code == 303, saved.text
        link = api.get(f"/links/{creator.link_id}", headers=creator.headers).json()["data"]
        assert link["senders"] == "signed_in"
        assert '<option value="signed_in" selected>' in browser.get(settings_page).text

        refused = browser.post(settings_page, data={**form, "senders": "everyone"}, headers=HTML)
        assert refused.status_code == 400
        link = api.get(f"/links/{creator.link_id}", headers=creator.headers).json()["data"]
        assert link["senders"] == "signed_in"
