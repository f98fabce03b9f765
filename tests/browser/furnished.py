"""What the tours of every page (tests/browser/test_every_page.py, test_phone_width.py)
furnish their server with before they look: messages from many senders, a receipt, a
deleted link, e-mail notice links, an account being deleted."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import httpx
from playwright.sync_api import Page

from tests.browser.conftest import off_the_loop
from tests.conftest import Creator
from tests.server import Server
from tests.support.admin import Admin, make_account
from tests.support.db import execute
from tests.support.forms import csrf_of
from tests.support.mail import SMTPServer, text_of
from tests.support.signin import signed_in_browser, signin_link_command


@dataclass(frozen=True)
class Furnished:
    """The server both tours look at, its admin, and the pages every tour visits besides
    the admin's own; each tour's ``World`` adds its own messages."""

    server: Server
    admin: Admin
    receipt: str  # a receipt page's path
    gone: str  # a deleted link
    confirm: str  # an e-mail confirmation link's path and query
    unsubscribe: str  # a notice's unsubscribe link's path and query
    leaving: str  # the address of an account scheduled for erasure

    @property
    def creator(self) -> Creator:
        return self.admin.creator

    def speak(self, lang: str) -> None:
        """The admin and the leaving account see the pages in ``lang`` from now on."""
        off_the_loop(
            execute,
            self.server.database_url,
            "UPDATE users SET language = $1 WHERE email IN ($2, $3)",
            lang,
            self.admin.email,
            self.leaving,
        )

    def sign_in(self, page: Page, email: str, lands_on: str) -> None:
        """Follow a sign-in link for ``email`` in ``page``, until it is at ``lands_on``."""
        page.goto(off_the_loop(signin_link_command, self.server, email))
        page.wait_for_url(re.compile(lands_on))


def post_from(api: httpx.Client, link_id: str, text: str, n: int, **params: str) -> httpx.Response:
    sent = api.post(
        f"/message/{link_id}",
        params=params,
        json={"message_content": text},
        headers={"X-Forwarded-For": f"10.77.{n // 250}.{n % 250 + 1}"},
    )
    assert sent.status_code == 201, sent.text
    return sent


def _path_of(url: str) -> str:
    return "/" + url.split("/", 3)[3]


def mail_pages(full: Server, mailbox: SMTPServer, api: httpx.Client) -> tuple[str, str]:
    """A creator who asks for e-mail notices: the confirmation link mailed to them, and
    the unsubscribe link of the first notice."""
    mailed = off_the_loop(lambda: make_account(full.database_url, admin=False))
    chosen = api.put("/notifications/email", json={"mode": "immediately"}, headers=mailed.headers)
    assert chosen.status_code == 200, chosen.text
    confirmation = mailbox.mailbox.wait_for(mailed.email)
    [confirm] = [w for w in text_of(confirmation).split() if "/email/confirm?" in w]
    assert api.get(_path_of(confirm)).status_code == 200
    post_from(api, mailed.creator.link_id, "Do notices arrive?", 901)
    notice = mailbox.mailbox.wait_for(mailed.email, count=2)
    unsubscribe = str(notice["List-Unsubscribe"]).strip("<>")
    return _path_of(confirm), _path_of(unsubscribe)


def leaving_account(full: Server) -> str:
    """An account whose owner asked for its deletion, through the pages."""
    leaving = off_the_loop(lambda: make_account(full.database_url, admin=False))
    browser = signed_in_browser(full, leaving.email)
    try:
        token = csrf_of(browser.get("/dashboard/account/delete").text)
        done = browser.post(
            "/dashboard/account/delete", data={"csrf_token": token, "confirm": "yes"}
        )
        assert done.status_code == 200, done.text
    finally:
        browser.close()
    return leaving.email


def receipt_and_gone_link(server: Server, api: httpx.Client, creator: Creator) -> tuple[str, str]:
    """A receipt's page path for a message to ``creator``, and the id of a deleted link."""
    sent = post_from(api, creator.link_id, "Will you answer this one?", 900, receipt="true")
    receipt = "/r/" + sent.json()["data"]["receipt"]["token"]
    doomed = off_the_loop(lambda: make_account(server.database_url, admin=False)).creator
    deleted = api.delete(f"/links/{doomed.link_id}", headers=doomed.headers)
    assert deleted.status_code in {200, 204}, deleted.text
    return receipt, doomed.link_id


def furnish(server: Server, mailbox: SMTPServer, api: httpx.Client, admin: Admin) -> dict[str, Any]:
    """What every tour's ``World`` shares, as ``Furnished``'s fields: a receipt and a
    deleted link made with ``api`` beside ``admin``'s, the e-mail notice links, and an
    account being deleted."""
    receipt, gone = receipt_and_gone_link(server, api, admin.creator)
    confirm, unsubscribe = mail_pages(server, mailbox, api)
    return {
        "server": server,
        "admin": admin,
        "receipt": receipt,
        "gone": gone,
        "confirm": confirm,
        "unsubscribe": unsubscribe,
        "leaving": leaving_account(server),
    }
