# ruff: noqa: RUF001 - Japanese text has its own full-width punctuation
"""The creator's everyday loop on a phone, in Japanese, as issue 31 asks it: sign up,
choose a name, a question arrives, the creator opens it, answers without a reload, is
offered Share at once, puts it on the stream overlay, deletes it by mistake and undoes
that, then deletes it for good. At 360x740 and 390x844, on a fresh SQLite server with a
real SMTP server; no page is wider than the phone, axe finds nothing, and each step leaves
a screenshot (``loop-<step>-<width>``)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.actions import answer_path, post_message
from tests.browser.conftest import Axe, Screenshot, new_file_server
from tests.browser.test_phone_sharing import FAKE_SHARE, PNG_SIGNATURE, shared
from tests.server import Server
from tests.support.http import loopback_client
from tests.support.mail import SMTPServer, signin_link_in


@pytest.fixture(scope="module")
def fresh(smtp_server: SMTPServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with new_file_server("loop", smtp_server.url, tmp_path_factory) as server:
        yield server


def fits(page: Page) -> None:
    width = page.viewport_size["width"] if page.viewport_size else 0
    assert page.evaluate("document.documentElement.scrollWidth") <= width


@pytest.mark.parametrize(
    "phone", [{"width": 360, "height": 740}, {"width": 390, "height": 844}], ids=["360", "390"]
)
def test_a_creator_answers_and_shares_from_a_phone_in_japanese(
    phone: dict[str, int],
    fresh: Server,
    smtp_server: SMTPServer,
    new_context: Callable[..., BrowserContext],
    screenshot: Screenshot,
    axe: Axe,
) -> None:
    context = new_context(viewport=phone, locale="ja-JP")
    context.add_init_script("const CAN_SHARE_FILES = true;" + FAKE_SHARE)
    page = context.new_page()
    size = str(phone["width"])

    # Sign up in Japanese: the first link asks in Japanese.
    address = f"hanako-{uuid.uuid4().hex[:8]}@example.jp"
    page.goto(f"{fresh.url}/signin")
    page.locator("#email").fill(address)
    page.locator("#signin-email-send").click()
    expect(page.locator("#signin-email-sent")).to_contain_text(address)
    page.goto(signin_link_in(smtp_server.mailbox.wait_for(address)))
    page.wait_for_url(f"{fresh.url}/dashboard")
    link_id = page.locator("#inbox").get_attribute("data-link-id")
    assert link_id
    expect(page.locator("#inbox")).to_contain_text("匿名でメッセージを送ってね！")

    # A name of one's own, asked for at once; the e-mail's name is never shown publicly.
    page.get_by_label("表示名").fill("山田花子")
    page.get_by_role("button", name="名前を保存").click()
    expect(page.locator("#profile-prompt")).to_have_count(0)
    public = context.new_page()
    public.goto(f"{fresh.url}/{link_id}")
    expect(public.locator(".creator-name")).to_have_text("山田花子")
    assert address.split("@")[0] not in public.content()
    public.close()

    # A question arrives while the inbox is open: a line in the list, marked new.
    page.goto(f"{fresh.url}/dashboard")
    # Her own navigation calls her by that name too: a screen she shares on a stream or in
    # a screenshot shows nothing of her address.
    expect(page.locator(".account-nav")).to_contain_text("山田花子")
    expect(page.locator(".account-nav")).not_to_contain_text(address.split("@")[0])
    with loopback_client(base_url=fresh.url, timeout=30) as api:
        message_id = post_message(api, link_id, "最近ハマっているものは何ですか？")
    row = page.locator(f"#m-{message_id}")
    expect(row).to_contain_text("最近ハマっているもの")
    expect(row).to_contain_text("新着")
    expect(page).to_have_title("（1）受信箱 · anonbox")
    fits(page)
    assert axe(page) == []
    screenshot(page, f"loop-inbox-{size}")

    # Open it and answer, without a reload; Share is offered at once.
    row.get_by_role("link").click()
    page.wait_for_url(f"**/messages/{message_id}")
    fits(page)
    assert axe(page) == []
    page.evaluate("window.notReloaded = true")
    page.get_by_label("あなたの回答").fill("自転車です！毎朝走っています。")
    page.get_by_role("button", name="返信する").click()
    expect(page.locator("article.message .reply-content")).to_have_text(
        "自転車です！毎朝走っています。"
    )
    expect(page.locator("#share")).to_be_focused()
    expect(page.locator("#toast p")).to_have_text("返信しました。下から回答をシェアできます。")
    assert page.evaluate("window.notReloaded") is True, "answering reloaded the page"
    fits(page)
    assert axe(page) == []
    screenshot(page, f"loop-answered-{size}", full_page=False)
    page.locator("#share").get_by_role("button", name="シェア", exact=True).click()
    [call] = shared(page)
    assert call["head"] == PNG_SIGNATURE
    with loopback_client(base_url=fresh.url, timeout=30) as api:
        assert call["url"] == f"{fresh.url}{answer_path(api, link_id, message_id)}"

    # On the stream overlay, in place.
    page.get_by_role("button", name="配信に表示").click()
    expect(page.locator("#toast p")).to_have_text("配信オーバーレイに表示しました。")
    assert page.evaluate("window.notReloaded") is True

    # Deleted by mistake: undone, and nothing was deleted.
    page.get_by_role("link", name="メッセージを削除…").click()
    expect(page.locator("article.message")).to_be_hidden()
    expect(page.locator("#undo")).to_be_visible()
    screenshot(page, f"loop-undo-{size}", full_page=False)
    page.locator("#undo").click()
    expect(page.locator("article.message")).to_be_visible()
    page.wait_for_timeout(6_000)  # past the undo's few seconds: still nothing was sent
    page.reload()
    expect(page.locator("article.message .message-content")).to_have_text(
        "最近ハマっているものは何ですか？"
    )

    # Deleted for good: back in the inbox, which says so, without the message.
    page.get_by_role("link", name="メッセージを削除…").click()
    expect(page.locator("#toast p")).to_have_text("メッセージを削除しました。", timeout=15_000)
    page.wait_for_url(f"{fresh.url}/dashboard/links/{link_id}")
    expect(page.locator(f"#m-{message_id}")).to_have_count(0)
    expect(page.locator("#inbox-empty")).to_be_visible()
    with loopback_client(base_url=fresh.url, timeout=30) as api:
        gone = api.get(f"/{link_id}")
    assert "最近ハマっているもの" not in gone.text
    fits(page)
    screenshot(page, f"loop-deleted-{size}")
