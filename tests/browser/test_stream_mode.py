"""Stream mode in Chromium, as a creator on a phone in Japanese and OBS's browser source
would meet it: "Show on stream" on a message, the overlay's address on the settings page,
and the overlay changing to the next question without a reload."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from playwright.sync_api import BrowserContext, expect

from tests.browser.conftest import Axe, Screenshot, Site, off_the_loop
from tests.support.signin import signin_link_command

PHONE_360 = {"width": 360, "height": 740}


def test_a_creator_shows_questions_on_their_stream_overlay(
    site: Site, new_context: Callable[..., BrowserContext], screenshot: Screenshot, axe: Axe
) -> None:
    creator = new_context(viewport=PHONE_360, locale="ja-JP").new_page()
    creator.goto(
        off_the_loop(signin_link_command, site.server, f"st-{uuid.uuid4().hex[:10]}@x.org")
    )
    link_id = creator.locator("#inbox").get_attribute("data-link-id")
    assert link_id
    first = site.post_message(link_id, "最近ハマっているゲームは何")
    creator.reload()

    creator.locator(f"#m-{first}").get_by_role("link").click()  # its page
    # Loaded, its deferred in-place script with it: a click before it runs is the form's
    # own post (it works, with the notice on the next page instead of the toast).
    creator.wait_for_url(f"**/messages/{first}")
    creator.get_by_role("button", name="配信に表示").click()
    expect(creator.locator("#toast p")).to_have_text("配信オーバーレイに表示しました。")
    creator.goto(f"{site.url}/dashboard/stream")
    expect(creator.get_by_role("heading", name="配信モード", exact=True)).to_be_visible()
    expect(creator.locator("#overlay-showing")).to_have_text("質問を表示中です。")
    address = creator.locator("#overlay-url").input_value()
    assert address.startswith(f"{site.url}/stream/")
    assert axe(creator) == []
    screenshot(creator, f"stream-settings-ja-{site.backend}")

    obs = new_context(viewport={"width": 1280, "height": 720}).new_page()  # no cookies
    obs.goto(address)
    expect(obs.locator("#question")).to_have_text("最近ハマっているゲームは何")
    expect(obs.locator(".overlay-label")).to_have_text("匿名の質問")  # the creator's language

    second = site.post_message(link_id, "Favourite song this week?")
    creator.goto(f"{site.url}/dashboard")
    creator.locator(f"#m-{second}").get_by_role("link").click()
    creator.wait_for_url(f"**/messages/{second}")
    creator.get_by_role("button", name="配信に表示").click()

    # The overlay was not reloaded: the change came through the live stream.
    expect(obs.locator("#question")).to_have_text("Favourite song this week?")
    screenshot(obs, f"stream-overlay-{site.backend}", full_page=False)

    creator.goto(f"{site.url}/dashboard/stream")
    creator.get_by_role("button", name="質問を隠す").click()
    expect(obs.locator("#question")).to_be_hidden()
