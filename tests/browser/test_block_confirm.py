"""Blocking in the browser at 360 px (issue 41): "Block sender…" asks in place (a page of
its own without scripts), the message then says it is blocked with Undo, another message
of the same sender says nothing, and Undo takes the block back. In English, Japanese and
Korean, light and dark; screenshots in test-artifacts/screenshots/block-*."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.conftest import Axe, Screenshot, Site, signs_in_new

PHONE_360 = {"width": 360, "height": 740}
LOCALES = {"en": "en-GB", "ja": "ja-JP", "ko": "ko-KR"}


def phone(new_context: Callable[..., BrowserContext], lang: str, theme: str, **more: Any) -> Page:
    options: dict[str, Any] = {
        "viewport": PHONE_360,
        "color_scheme": theme,
        "locale": LOCALES[lang],
        **more,
    }
    if lang != "en":
        options["extra_http_headers"] = {"Accept-Language": f"{LOCALES[lang]},{lang};q=0.9"}
    return new_context(**options).new_page()


def fits(page: Page) -> None:
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 360, f"{page.url} is {width} px wide"


@pytest.mark.parametrize(("lang", "theme"), [("en", "light"), ("ja", "dark"), ("ko", "light")])
def test_block_asks_in_place_shows_blocked_on_its_message_only_and_undoes(
    site: Site,
    new_context: Callable[..., BrowserContext],
    axe: Axe,
    screenshot: Screenshot,
    lang: str,
    theme: str,
) -> None:
    page = phone(new_context, lang, theme)
    signs_in_new(page, site.server, f"blocker-{lang}")
    expect(page.locator("html")).to_have_attribute("lang", lang)
    link_id = page.locator("#inbox").get_attribute("data-link-id")
    assert link_id
    rude = site.post_message(link_id, "ばか、바보, you fool")
    other = site.post_message(link_id, "a kinder word from the same sender")
    base = f"{site.url}/dashboard/links/{link_id}/messages"
    tag = f"{lang}-{theme}-{site.backend}"

    page.goto(f"{base}/{rude}")
    expect(page.locator("#blocked-sender")).to_have_count(0)
    page.locator("#block-sender").click()
    asked = page.locator("#confirm-inplace")
    expect(asked).to_be_visible()
    expect(page).to_have_url(f"{base}/{rude}")  # asked here, not on another page
    expect(page.locator("#confirm")).to_be_focused()
    fits(page)
    assert axe(page) == []
    screenshot(page, f"block-asked-{tag}")
    # Cancel: nothing blocked, the question gone.
    asked.locator("#cancel").click()
    expect(asked).to_have_count(0)
    expect(page.locator("#blocked-sender")).to_have_count(0)

    page.locator("#block-sender").click()
    page.locator("#confirm").click()
    state = page.locator("#blocked-sender")
    expect(state).to_be_visible()
    expect(page.locator("#toast p")).not_to_be_empty()
    expect(page.locator("#block-sender")).to_have_count(0)
    undo = state.get_by_role("button")
    expect(undo).to_be_visible()
    assert (undo.bounding_box() or {"height": 0})["height"] >= 44
    fits(page)
    assert axe(page) == []
    screenshot(page, f"block-blocked-{tag}")

    # Another message of that sender: nothing says it shares one with the blocked message.
    page.goto(f"{base}/{other}")
    expect(page.locator(".blocked-state")).to_have_count(0)
    expect(page.locator("#block-sender")).to_be_visible()

    page.goto(f"{base}/{rude}")
    page.locator("#blocked-sender").get_by_role("button").click()
    expect(page.locator("#blocked-sender")).to_have_count(0)
    expect(page.locator("#block-sender")).to_be_visible()
    # The question's own page, for browsers without scripts, is as readable.
    page.goto(f"{base}/{rude}/block-network")
    expect(page.locator("#confirm-title")).to_be_visible()
    fits(page)
    assert axe(page) == []
    after = site.post_message(link_id, "heard again after the undo")
    page.goto(f"{site.url}/dashboard/links/{link_id}")
    expect(page.locator(f'[data-message-id="{after}"]')).to_be_visible()


@pytest.mark.parametrize(("lang", "theme"), [("en", "dark"), ("ja", "light"), ("ko", "dark")])
def test_without_scripts_blocking_a_network_asks_on_a_page_of_its_own(
    site: Site,
    new_context: Callable[..., BrowserContext],
    screenshot: Screenshot,
    lang: str,
    theme: str,
) -> None:
    page = phone(new_context, lang, theme, java_script_enabled=False)
    signs_in_new(page, site.server, f"noscript-{lang}")
    link_id = page.locator("#inbox").get_attribute("data-link-id")
    assert link_id
    rude = site.post_message(link_id, "from a rotating address")
    message = f"{site.url}/dashboard/links/{link_id}/messages/{rude}"
    tag = f"{lang}-{theme}-{site.backend}"

    page.goto(message)
    page.locator("#block-network").click()
    expect(page).to_have_url(f"{message}/block-network")
    expect(page.locator("#confirm-title")).to_be_visible()
    fits(page)  # (axe runs in pages with scripts: the first test checks this page)
    screenshot(page, f"block-network-page-{tag}")
    page.locator("#cancel").click()
    expect(page).to_have_url(message)
    expect(page.locator(".blocked-state")).to_have_count(0)

    page.locator("#block-network").click()
    page.locator("#confirm").click()
    expect(page.locator("#blocked-network")).to_be_visible()
    expect(page.locator("#done")).not_to_be_empty()
    fits(page)
    screenshot(page, f"block-network-blocked-{tag}")
    page.locator("#blocked-network").get_by_role("button").click()
    expect(page.locator("#blocked-network")).to_have_count(0)
    expect(page.locator("#block-network")).to_be_visible()
