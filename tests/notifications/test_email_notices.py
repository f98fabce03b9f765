"""E-mail notices, read from a real SMTP server on loopback (aiosmtpd) as the creator's
mailbox: confirmed before use, mailed at once or as a digest, with a one-click
unsubscribe (RFC 8058), retried when the server refuses, never telling anything about a
sender. Each test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

import httpx
import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import Envelope, Session

from tests.actions import assert_error, post_message
from tests.conftest import Creator, make_creator_in
from tests.server import Server, free_port
from tests.support.forms import csrf_of
from tests.support.http import loopback_client
from tests.support.mail import Mailbox, deliver_into, text_of
from tests.support.servers import own_server
from tests.support.signin import signin_link_command

DIGEST_SECONDS = 4  # the "hourly" digest's period here
SENDER_AGENT = "SenderAgent/7.7 (the-sender-himself)"


@dataclass
class RefusingHandler:
    """Keeps what it accepts; refuses the next ``refuse`` mails as a busy server does."""

    mailbox: Mailbox
    refuse: int = 0
    refused: int = 0

    async def handle_DATA(self, server: Any, session: Session, envelope: Envelope) -> str:
        if self.refuse > 0:
            self.refuse -= 1
            self.refused += 1
            return "451 4.3.0 Try again later"
        return deliver_into(self.mailbox, envelope)


@pytest.fixture(scope="module")
def smtp() -> Iterator[tuple[RefusingHandler, int]]:
    handler = RefusingHandler(Mailbox())
    port = free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    yield handler, port
    controller.stop()


noticed = own_server(
    "noticed",
    lambda request: {
        "ANONBOX_SMTP_URL": f"smtp://127.0.0.1:{request.getfixturevalue('smtp')[1]}",
        "ANONBOX_MAIL_FROM": "anonbox <notices@anonbox.test>",
        "ANONBOX_EMAIL_HOURLY_SECONDS": str(DIGEST_SECONDS),
        "ANONBOX_EMAIL_RETRY_SECONDS": "0.3",
    },
    public_url=True,
)


@pytest.fixture
def mailbox(smtp: tuple[RefusingHandler, int]) -> Iterator[RefusingHandler]:
    handler = smtp[0]
    handler.refuse = handler.refused = 0
    yield handler
    handler.refuse = 0


@pytest.fixture
def api(noticed: Server) -> Iterator[httpx.Client]:
    with loopback_client(base_url=noticed.url, timeout=30) as client:
        yield client


def notices_to(mailbox: Mailbox, address: str) -> list[EmailMessage]:
    return [m for m in mailbox.to(address) if "anonymous message" in str(m["Subject"])]


def choose(api: httpx.Client, creator: Creator, mode: str) -> dict[str, Any]:
    chosen = api.put("/notifications/email", json={"mode": mode}, headers=creator.headers)
    assert chosen.status_code == 200, chosen.text
    return dict(chosen.json()["data"])


def subscribe(api: httpx.Client, mailbox: Mailbox, creator: Creator, mode: str) -> str:
    """Choose ``mode`` and confirm the address with the link mailed to it; the address."""
    state = choose(api, creator, mode)
    assert state["mode"] == mode
    assert state["address_state"] == "confirmation_sent"
    assert state["active"] is False
    address = str(state["address"])
    confirmation = mailbox.wait_for(address)
    [link] = [word for word in text_of(confirmation).split() if "/email/confirm?" in word]
    # A person opens it in a browser: a page, not JSON.
    confirmed = api.get(link)
    assert confirmed.status_code == 200, confirmed.text
    assert confirmed.headers["content-type"].startswith("text/html")
    assert "Address confirmed" in confirmed.text
    assert address in confirmed.text
    state = api.get("/notifications/email", headers=creator.headers).json()["data"]
    assert state["address_state"] == "confirmed"
    assert state["active"] is True
    return address


def subscribed(
    server: Server, api: httpx.Client, mailbox: Mailbox, mode: str
) -> tuple[Creator, str]:
    """A new creator on ``server``, subscribed in ``mode``; the creator and the address."""
    creator = make_creator_in(server.database_url)
    return creator, subscribe(api, mailbox, creator, mode)


def assert_notices_stay_at(mailbox: Mailbox, address: str, count: int) -> None:
    """A while later ``address`` has still been sent ``count`` notices: no more came."""
    time.sleep(1.5)
    assert len(notices_to(mailbox, address)) == count


def send(api: httpx.Client, creator: Creator, text: str) -> str:
    return post_message(api, creator.link_id, text)


def test_immediate_notice_carries_the_text_and_a_one_click_unsubscribe(
    noticed: Server, api: httpx.Client, mailbox: RefusingHandler
) -> None:
    creator, address = subscribed(noticed, api, mailbox.mailbox, "immediately")
    send(api, creator, "Is the coffee machine ever fixed?")
    notice = mailbox.mailbox.wait_for(address, count=2)
    assert notice["Subject"] == "New anonymous message"
    assert "Is the coffee machine ever fixed?" in text_of(notice)
    unsubscribe = str(notice["List-Unsubscribe"])
    assert unsubscribe.startswith(f"<{noticed.url}/email/unsubscribe?token=")
    assert unsubscribe.endswith(">")
    assert notice["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert unsubscribe.strip("<>") in text_of(notice)  # for a person, in the text too

    # A person who opens it (or a link scanner) gets a button, and nothing changes yet.
    with loopback_client(timeout=30) as browser:
        page = browser.get(unsubscribe.strip("<>"))
    assert page.status_code == 200, page.text
    assert page.headers["content-type"].startswith("text/html")
    assert 'id="unsubscribe"' in page.text
    assert api.get("/notifications/email", headers=creator.headers).json()["data"]["active"]

    # What a mail program does (RFC 8058): a POST with no cookie and no key.
    with loopback_client(timeout=30) as stranger:
        done = stranger.post(
            unsubscribe.strip("<>"),
            content=b"List-Unsubscribe=One-Click",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
    assert done.status_code == 200, done.text
    state = api.get("/notifications/email", headers=creator.headers).json()["data"]
    assert state["mode"] == "off"
    assert state["active"] is False
    send(api, creator, "Anyone there?")
    assert_notices_stay_at(mailbox.mailbox, address, 1)


def test_an_override_in_a_message_is_closed_on_its_own_line_of_the_mail(
    noticed: Server, api: httpx.Client, mailbox: RefusingHandler
) -> None:
    # Plain text has no <bdi>: each quoted line of a message is isolated (FSI … PDI, its
    # override closed by PDF), so our "Read and answer…" after it reads left to right.
    creator, address = subscribed(noticed, api, mailbox.mailbox, "immediately")
    send(api, creator, "hello \u202eworld\nsecond \u2069\u202eline")
    notice = mailbox.mailbox.wait_for(address, count=2)
    text = text_of(notice).replace("\r\n", "\n")  # the mail's lines end in CRLF
    quoted = (
        "> \u2068hello \u202eworld\u202c\u2069\n"
        "> \u2068second \u202eline\u202c\u2069\n\nRead and answer in your inbox: "
    )
    assert quoted in text, repr(text)
    # A message with nothing directional in it is quoted as it was.
    send(api, creator, "plain words")
    later = mailbox.mailbox.wait_for(address, count=3)
    assert "\n> plain words\n\n" in text_of(later).replace("\r\n", "\n")


def test_an_unsubscribe_token_that_is_not_ours_is_refused(
    noticed: Server, api: httpx.Client, mailbox: RefusingHandler
) -> None:
    creator, address = subscribed(noticed, api, mailbox.mailbox, "immediately")
    # Well formed, but it names no subscription: not found, as an unknown id.
    forged = api.post(f"/notifications/unsubscribe?token={creator.user_id}.AAAA")
    assert_error(forged, 404, "not_found")
    for method in ("GET", "POST"):  # the page a mail links to
        page = api.request(method, f"/email/unsubscribe?token={creator.user_id}.AAAA")
        assert page.status_code == 404, page.text
        assert page.headers["content-type"].startswith("text/html")
    assert api.get("/notifications/email", headers=creator.headers).json()["data"]["active"]
    send(api, creator, "still on")
    assert "still on" in text_of(mailbox.mailbox.wait_for(address, count=2))


def test_hourly_digest_groups_several_messages_into_one_mail(
    noticed: Server, api: httpx.Client, mailbox: RefusingHandler
) -> None:
    creator, address = subscribed(noticed, api, mailbox.mailbox, "hourly")
    while time.time() % DIGEST_SECONDS > 0.5:  # start of a period: all three fall in it
        time.sleep(0.05)
    texts = ["first question", "second question", "third question"]
    for text in texts:
        send(api, creator, text)
    digest = mailbox.mailbox.wait_for(address, count=2, timeout=DIGEST_SECONDS + 10)
    assert digest["Subject"] == "3 new anonymous messages"
    assert all(text in text_of(digest) for text in texts)
    assert digest["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert_notices_stay_at(mailbox.mailbox, address, 1)


def test_a_refusing_mail_server_is_tried_again_and_the_notice_sent_once(
    noticed: Server, api: httpx.Client, mailbox: RefusingHandler
) -> None:
    creator, address = subscribed(noticed, api, mailbox.mailbox, "immediately")
    mailbox.refuse = 2
    send(api, creator, "through the storm")
    notice = mailbox.mailbox.wait_for(address, count=2, timeout=15)
    assert mailbox.refused == 2
    assert "through the storm" in text_of(notice)
    assert_notices_stay_at(mailbox.mailbox, address, 1)


def test_off_sends_nothing(noticed: Server, api: httpx.Client, mailbox: RefusingHandler) -> None:
    never_chose = make_creator_in(noticed.database_url)
    state = api.get("/notifications/email", headers=never_chose.headers).json()["data"]
    assert state["mode"] == "off"
    assert state["address_state"] == "unconfirmed"
    turned_off, address = subscribed(noticed, api, mailbox.mailbox, "immediately")
    assert choose(api, turned_off, "off")["active"] is False
    send(api, never_chose, "to nobody's mailbox")
    send(api, turned_off, "to a mailbox that said no")
    time.sleep(2)
    assert notices_to(mailbox.mailbox, address) == []
    assert notices_to(mailbox.mailbox, str(state["address"])) == []
    assert mailbox.mailbox.to(str(state["address"])) == []


def test_an_address_verified_by_signing_in_needs_no_confirmation_mail(
    noticed: Server, api: httpx.Client, mailbox: RefusingHandler
) -> None:
    address = f"signed-in-{uuid.uuid4().hex[:8]}@example.com"
    opened = api.get(signin_link_command(noticed, address))  # the link, opened in a browser
    assert opened.status_code == 303, opened.text
    session = {"X-API-Key": opened.cookies["anonbox_session"]}
    chosen = api.put("/notifications/email", json={"mode": "immediately"}, headers=session)
    assert chosen.status_code == 200, chosen.text
    assert chosen.json()["data"]["address_state"] == "confirmed"
    assert chosen.json()["data"]["active"] is True
    [link] = api.get("/links", headers=session).json()["data"]["items"]
    post_message(api, link["id"], "straight to a proven address")
    notice = mailbox.mailbox.wait_for(address)  # the first mail: no confirmation before it
    assert "straight to a proven address" in text_of(notice)


def test_the_dashboard_form_chooses_a_digest(noticed: Server, mailbox: RefusingHandler) -> None:
    address = f"dashboard-{uuid.uuid4().hex[:8]}@example.com"
    with loopback_client(base_url=noticed.url, timeout=30) as browser:
        opened = browser.get(signin_link_command(noticed, address))
        assert opened.status_code == 303, opened.text
        page = browser.get("/dashboard/notifications")
        assert page.status_code == 200, page.text
        csrf = csrf_of(page.text)
        chosen = browser.post(
            "/dashboard/email-notices", data={"csrf_token": csrf, "mode": "daily"}
        )
        assert chosen.status_code == 303, chosen.text
        assert chosen.headers["location"] == "/dashboard/notifications"
        refused = browser.post(
            "/dashboard/email-notices", data={"csrf_token": csrf, "mode": "weekly"}
        )
        assert refused.status_code == 400, refused.text
        session = {"X-API-Key": browser.cookies["anonbox_session"]}
        state = browser.get("/notifications/email", headers=session).json()["data"]
    expected = {"mode": "daily", "address": address, "address_state": "confirmed", "active": True}
    assert state == expected
    assert mailbox.mailbox.to(address) == []  # a daily digest: nothing yet


def test_nothing_is_mailed_before_the_address_is_confirmed(
    noticed: Server, api: httpx.Client, mailbox: RefusingHandler
) -> None:
    creator = make_creator_in(noticed.database_url)
    state = choose(api, creator, "immediately")
    assert state["address_state"] == "confirmation_sent"
    send(api, creator, "too early")
    assert_notices_stay_at(mailbox.mailbox, str(state["address"]), 0)
    bad = api.get("/notifications/email/confirm?token=" + creator.user_id + ".forged")
    assert_error(bad, 404, "not_found")


def test_no_mail_says_anything_about_the_sender(
    noticed: Server, api: httpx.Client, mailbox: RefusingHandler
) -> None:
    creator, address = subscribed(noticed, api, mailbox.mailbox, "immediately")
    sent = api.post(
        f"/message/{creator.link_id}",
        json={"message_content": "who am I?"},
        headers={"User-Agent": SENDER_AGENT, "Accept-Language": "xx-SENDER"},
    )
    assert sent.status_code == 201, sent.text
    notice = mailbox.mailbox.wait_for(address, count=2)
    raw = notice.as_string()
    assert "who am I?" in raw
    assert SENDER_AGENT not in raw
    assert "SENDER" not in raw
    assert sent.json()["data"]["id"] not in raw  # not even which message, only its text
    headers = {name.lower() for name in notice}
    assert headers <= {
        "from", "to", "subject", "date", "message-id", "auto-submitted", "list-unsubscribe",
        "list-unsubscribe-post", "content-type", "content-transfer-encoding", "mime-version",
    }  # fmt: skip


def test_bad_input_gets_the_error_envelope(noticed: Server, api: httpx.Client) -> None:
    creator = make_creator_in(noticed.database_url)
    weekly = api.put("/notifications/email", json={"mode": "weekly"}, headers=creator.headers)
    assert_error(weekly, 400)
    assert_error(api.put("/notifications/email", json={"mode": "daily"}), 401)
    assert_error(api.post("/notifications/unsubscribe"), 400)
