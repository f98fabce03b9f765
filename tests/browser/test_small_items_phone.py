"""Issue 41's smaller items on a 360 px phone: the fediverse switch of a link's settings,
on a server without ANONBOX_PUBLIC_URL, shown off with the sentence saying what it needs;
the push opt-in a button at least 44 px tall. In English, Japanese and Korean, light and
dark; screenshots in test-artifacts/screenshots/fediverse-switch-* and push-open-*."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, expect

from tests.browser.conftest import Axe, Screenshot, Site, signs_in_new

PHONE_360 = {"width": 360, "height": 740}
LOCALES = {"en": "en-GB", "ja": "ja-JP", "ko": "ko-KR"}


@pytest.mark.parametrize(
    ("lang", "theme"), [("en", "light"), ("ja", "light"), ("ko", "dark"), ("ja", "dark")]
)
def test_the_fediverse_switch_says_what_it_needs_and_push_is_a_button(
    site: Site,
    new_context: Callable[..., BrowserContext],
    axe: Axe,
    screenshot: Screenshot,
    lang: str,
    theme: str,
) -> None:
    options: dict[str, Any] = {
        "viewport": PHONE_360,
        "color_scheme": theme,
        "locale": LOCALES[lang],
    }
    if lang != "en":
        options["extra_http_headers"] = {"Accept-Language": f"{LOCALES[lang]},{lang};q=0.9"}
    page = new_context(**options).new_page()
    signs_in_new(page, site.server, f"smaller-{lang}")
    expect(page.locator("html")).to_have_attribute("lang", lang)
    link_id = page.locator("#inbox").get_attribute("data-link-id")
    assert link_id
    tag = f"{lang}-{theme}-{site.backend}"

    page.goto(f"{site.url}/dashboard/links/{link_id}/settings")
    switch = page.locator("#fediverse")
    expect(switch).to_be_visible()
    expect(switch).to_be_disabled()
    hint = page.locator("#fediverse-hint")
    expect(hint).to_be_visible()
    expect(hint).to_contain_text("ANONBOX_PUBLIC_URL")
    hint.scroll_into_view_if_needed()
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 360
    assert axe(page) == []
    screenshot(page, f"fediverse-switch-{tag}", full_page=False)

    page.goto(f"{site.url}/dashboard/notifications")
    opt_in = page.locator("#push-open")
    expect(opt_in).to_be_visible()
    box = opt_in.bounding_box()
    assert box is not None
    assert box["height"] >= 44, box
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 360
    screenshot(page, f"push-open-{tag}", full_page=False)
    opt_in.click()
    expect(page).to_have_url(f"{site.url}/dashboard/push")
