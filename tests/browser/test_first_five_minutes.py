"""A newcomer's first five minutes, in Chromium, on a fresh server with nothing but SQLite
and a mail server: the home page, a sign-in link by e-mail (read from a real SMTP server on
loopback), the dashboard, the share link copied, a message from a stranger arriving live,
a reply, and the answer on the public page. Then the links that must not sign anyone in.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.conftest import PHONE, Screenshot
from tests.server import Server
from tests.support.http import loopback_client
from tests.support.mail import SMTPServer, signin_link_in

SESSION_COOKIE = "anonbox_session"


def _fresh_server(tmp_path: Path, name: str, env: dict[str, str]) -> Server:
    """A server on a brand-new SQLite file, as ``make run`` starts one on a fresh clone."""
    return Server(f"sqlite:///{tmp_path / 'anonbox.db'}", tmp_path / f"{name}.log", env=env)


@pytest.fixture(scope="module")
def fresh(smtp_server: SMTPServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = _fresh_server(
        tmp_path_factory.mktemp("fresh"), "fresh", {"ANONBOX_SMTP_URL": smtp_server.url}
    )
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def short_lived(
    smtp_server: SMTPServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """Sign-in links live two seconds here."""
    server = _fresh_server(
        tmp_path_factory.mktemp("short"),
        "short",
        {
            "ANONBOX_SMTP_URL": smtp_server.url,
            "ANONBOX_EMAIL_SIGNIN_TTL_SECONDS": "2",
            "ANONBOX_LIMIT_SIGNIN_ADDRESS": "1/2",  # a window no longer than a link lives
        },
    )
    server.start()
    yield server
    server.stop()


def new_address() -> str:
    return f"newcomer-{uuid.uuid4().hex[:10]}@example.org"


def ask_for_link(page: Page, base_url: str, address: str) -> None:
    page.goto(f"{base_url}/signin")
    page.get_by_label("Your e-mail address").fill(address)
    page.get_by_role("button", name="Email me a sign-in link").click()


def link_mailed_to(page: Page, server: Server, mailbox: SMTPServer) -> str:
    """A new address asks ``server`` for a sign-in link in ``page``; the link mailed."""
    address = new_address()
    ask_for_link(page, server.url, address)
    return signin_link_in(mailbox.mailbox.wait_for(address))


def signed_in(context: BrowserContext) -> bool:
    return any(cookie["name"] == SESSION_COOKIE for cookie in context.cookies())


def test_from_the_home_page_to_an_answer_on_the_public_page(
    fresh: Server,
    smtp_server: SMTPServer,
    new_context: Callable[..., BrowserContext],
    screenshot: Screenshot,
) -> None:
    context = new_context(permissions=["clipboard-read", "clipboard-write"])
    failed: list[str] = []  # nothing the pages load may fail
    context.on(
        "response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None
    )
    creator = context.new_page()
    creator.goto(f"{fresh.url}/")
    expect(creator.locator("h1")).to_have_text("Get anonymous messages from anyone with your link.")
    expect(creator.locator("#privacy")).to_contain_text("keeps no sender's address")
    expect(creator.get_by_role("link", name="API reference")).to_have_attribute("href", "/docs")
    screenshot(creator, "home")

    creator.get_by_role("link", name="Get your link").click()
    creator.wait_for_url(f"{fresh.url}/signin")
    expect(creator.locator("#signin-google")).to_have_count(0)  # not configured here
    address = new_address()
    creator.get_by_label("Your e-mail address").fill(address)
    screenshot(creator, "signin")
    creator.get_by_role("button", name="Email me a sign-in link").click()
    expect(creator.locator("#signin-email-sent")).to_contain_text(address)
    screenshot(creator, "signin-sent")

    creator.goto(signin_link_in(smtp_server.mailbox.wait_for(address)))
    creator.wait_for_url(f"{fresh.url}/dashboard")
    expect(creator.locator("#inbox")).to_be_visible()
    expect(creator.locator("#unread-count")).to_have_text("0")

    creator.get_by_role("button", name="Copy link").click()
    expect(creator.locator("#copy-status")).to_have_text("Link copied.")
    share_link = creator.evaluate("navigator.clipboard.readText()")
    link_id = creator.locator("#inbox").get_attribute("data-link-id")
    assert share_link == f"{fresh.url}/{link_id}"
    creator.evaluate("window.notReloaded = true")

    stranger = new_context(viewport=PHONE).new_page()
    stranger.goto(share_link)
    question = "Which lighthouse should I visit first?"
    stranger.get_by_label("Your anonymous message").fill(question)
    stranger.get_by_role("button", name="Send").click()
    expect(stranger.locator("#sent")).to_be_visible()

    message = creator.locator(".message-row", has_text=question)
    expect(message).to_be_visible()
    expect(creator.locator("#unread-count")).to_have_text("1")
    assert creator.evaluate("window.notReloaded") is True, "the dashboard reloaded"
    answer = "The one at the end of the pier."
    message.get_by_role("link").click()  # its own page, where it is answered
    creator.wait_for_url("**/messages/*")  # loaded, with its in-place script
    creator.get_by_label("Your answer").fill(answer)
    creator.evaluate("window.notReloaded = true")
    creator.get_by_role("button", name="Send reply").click()
    expect(creator.locator("article.message .reply-content")).to_have_text(answer)
    expect(creator.locator("#share")).to_be_focused()  # Share, offered at once
    assert creator.evaluate("window.notReloaded") is True, "answering reloaded the page"

    screenshot(creator, "dashboard-first-answer")

    stranger.reload()
    shown = stranger.locator("#answers .answer", has_text=question)
    expect(shown.locator(".reply")).to_contain_text(answer)

    creator.goto(f"{fresh.url}/")  # a signed-in creator goes straight to the dashboard
    creator.wait_for_url(f"{fresh.url}/dashboard")
    assert failed == []


def test_a_used_link_is_a_clear_page_and_no_session(
    fresh: Server,
    smtp_server: SMTPServer,
    new_context: Callable[..., BrowserContext],
    screenshot: Screenshot,
) -> None:
    context = new_context()
    page = context.new_page()
    link = link_mailed_to(page, fresh, smtp_server)
    page.goto(link)
    page.wait_for_url(f"{fresh.url}/dashboard")
    context.clear_cookies()  # signed out, the link kept

    page.goto(link)

    expect(page.locator("#signin-problem")).to_contain_text("already used")
    expect(page.get_by_label("Your e-mail address")).to_be_visible()  # and a way on
    assert not signed_in(context)
    screenshot(page, "signin-link-used")


def test_a_link_opened_in_another_browser_is_a_clear_page_and_no_session(
    fresh: Server, smtp_server: SMTPServer, new_context: Callable[..., BrowserContext]
) -> None:
    asking = new_context().new_page()
    link = link_mailed_to(asking, fresh, smtp_server)

    other = new_context()
    page = other.new_page()
    page.goto(link)

    expect(page.locator("#signin-problem")).to_contain_text("another browser")
    assert not signed_in(other)


def test_an_expired_link_is_a_clear_page_and_no_session(
    short_lived: Server, smtp_server: SMTPServer, new_context: Callable[..., BrowserContext]
) -> None:
    context = new_context()
    page = context.new_page()
    link = link_mailed_to(page, short_lived, smtp_server)
    page.wait_for_timeout(2500)

    page.goto(link)

    expect(page.locator("#signin-problem")).to_contain_text("expired")
    assert not signed_in(context)


def test_strangers_asking_for_an_address_never_lock_its_owner_out(
    fresh: Server,
    smtp_server: SMTPServer,
    new_context: Callable[..., BrowserContext],
    screenshot: Screenshot,
) -> None:
    """Issue 32, part 4: fifteen browsers ask for one address, then its owner does; the
    page says the same to all, one mail goes out, and the owner's browser gets in with it."""
    address = new_address()
    for _ in range(15):  # fifteen browsers ask for the same address (quicker over HTTP)
        with loopback_client(base_url=fresh.url) as other:
            token = other.get("/signin").cookies["anonbox_csrf"]
            asked = other.post("/signin/email", data={"csrf_token": token, "email": address})
            assert asked.status_code == 200, asked.text
    page = new_context().new_page()

    ask_for_link(page, fresh.url, address)

    expect(page.locator("#signin-email-sent")).to_contain_text(address)
    expect(page.locator("#signin-problem")).to_have_count(0)
    screenshot(page, "signin-asked-again")
    mail = smtp_server.mailbox.wait_for(address)
    assert len(smtp_server.mailbox.to(address)) == 1  # mail to one address stays bounded
    page.goto(signin_link_in(mail))
    page.wait_for_url(f"{fresh.url}/dashboard")
    expect(page.locator("#inbox")).to_be_visible()
