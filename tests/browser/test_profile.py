"""The creator's public name, in Chromium on a 360 px phone speaking Japanese (issue 31):
signed up by e-mail as hanako.yamada@…, the send page calls her by a neutral name; the
dashboard asks for a name, she types one in Japanese, and the send page shows it with her
bio. Nothing public ever shows "hanako" or "yamada"."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.conftest import Screenshot, new_file_server
from tests.server import Server
from tests.support.mail import SMTPServer, signin_link_in
from tests.support.mail import smtp_server as smtp_server

SMALL_PHONE = {"width": 360, "height": 740}


@pytest.fixture(scope="module")
def mailing(smtp_server: SMTPServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server on a fresh SQLite file that sends its sign-in links to ``smtp_server``."""
    with new_file_server("profile", smtp_server.url, tmp_path_factory) as server:
        yield server


def public_text(page: Page, url: str) -> str:
    page.goto(url)
    return page.content().lower()


def signs_up_by_mail(
    page: Page, server: Server, mailbox: SMTPServer, name: str, form: tuple[str, str]
) -> None:
    """``name``@ a fresh domain signs up in ``page``, as a person does: the address typed
    into the sign-in form (its field's label and its button's name, in the page's
    language, are ``form``), the link mailed to it followed, up to the dashboard."""
    address = f"{name}@{uuid.uuid4().hex[:8]}.example.jp"
    label, button = form
    page.goto(f"{server.url}/signin")
    page.get_by_label(label).fill(address)
    page.get_by_role("button", name=button).click()
    page.goto(signin_link_in(mailbox.mailbox.wait_for(address)))
    page.wait_for_url(f"{server.url}/dashboard")


def test_hanako_names_herself_from_the_dashboard_prompt_in_japanese(
    mailing: Server,
    smtp_server: SMTPServer,
    new_context: Callable[..., BrowserContext],
    screenshot: Screenshot,
) -> None:
    context = new_context(locale="ja-JP", viewport=SMALL_PHONE)
    creator = context.new_page()
    signs_up_by_mail(
        creator,
        mailing,
        smtp_server,
        "hanako.yamada",
        ("メールアドレス", "ログインリンクをメールで受け取る"),
    )
    link_id = creator.locator("#inbox").get_attribute("data-link-id")
    assert link_id

    visitor = new_context(locale="ja-JP", viewport=SMALL_PHONE).new_page()
    before = public_text(visitor, f"{mailing.url}/{link_id}")
    assert "hanako" not in before
    assert "yamada" not in before
    expect(visitor.locator("#creator-name")).to_have_text("作成者")

    prompt = creator.locator("#profile-prompt")
    expect(prompt).to_be_visible()
    expect(prompt.locator("h2")).to_have_text("表示される名前を決めましょう")
    assert creator.evaluate("document.documentElement.scrollWidth") <= SMALL_PHONE["width"]
    creator.get_by_label("表示名").fill("やまだ はなこ")
    creator.get_by_label("ひとこと紹介\uff08任意\uff09").fill("灯台めぐりが好きです")
    screenshot(creator, "profile-prompt-ja", full_page=False)
    creator.get_by_role("button", name="名前を保存").click()

    # Back on the inbox the form was on, which no longer asks.
    expect(creator.locator("#inbox")).to_be_visible()
    assert creator.url.startswith(f"{mailing.url}/dashboard")
    expect(creator.locator("#profile-prompt")).to_have_count(0)
    creator.goto(f"{mailing.url}/dashboard/account")
    expect(creator.get_by_label("表示名")).to_have_value("やまだ はなこ")

    after = public_text(visitor, f"{mailing.url}/{link_id}")
    assert "hanako" not in after
    assert "yamada" not in after
    expect(visitor.locator("#creator-name")).to_have_text("やまだ はなこ")
    expect(visitor.locator("#creator-bio")).to_have_text("灯台めぐりが好きです")
    assert visitor.evaluate("document.documentElement.scrollWidth") <= SMALL_PHONE["width"]
    screenshot(visitor, "profile-public-ja", full_page=False)


def test_not_now_puts_the_prompt_away_without_choosing_a_name(
    mailing: Server,
    smtp_server: SMTPServer,
    new_context: Callable[..., BrowserContext],
) -> None:
    creator = new_context(viewport=SMALL_PHONE, java_script_enabled=False).new_page()
    signs_up_by_mail(
        creator,
        mailing,
        smtp_server,
        "kenji.sato",
        ("Your e-mail address", "Email me a sign-in link"),
    )
    expect(creator.locator("#profile-prompt")).to_be_visible()

    creator.get_by_role("button", name="Not now").click()

    expect(creator.locator("#profile-prompt")).to_have_count(0)
    expect(creator.locator("#inbox")).to_be_visible()
    creator.goto(f"{mailing.url}/dashboard")
    expect(creator.locator("#inbox")).to_be_visible()
    expect(creator.locator("#profile-prompt")).to_have_count(0)
    creator.goto(f"{mailing.url}/dashboard/account")
    expect(creator.get_by_label("Display name")).to_have_value("")
