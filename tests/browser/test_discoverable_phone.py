"""The fediverse settings of a link on a 360 px phone, where the site federates (issue
42, item 2): the switch and, under it, whether servers may suggest the link and search
its answers, with the sentence saying what that does; ticked and saved without scripts'
help, both stay ticked. In English, Japanese and Korean, light and dark; screenshots in
test-artifacts/screenshots/fediverse-discoverable-*."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, expect

from tests.browser.conftest import Axe, Screenshot, own_server, signs_in_new
from tests.federation.conftest import wait_for
from tests.server import Server
from tests.support.http import loopback_client

PHONE_360 = {"width": 360, "height": 740}
LOCALES = {"en": "en-GB", "ja": "ja-JP", "ko": "ko-KR"}
HINTS = {"en": "suggestions", "ja": "おすすめ", "ko": "추천"}

federating_site = own_server(
    "federating_site", {"ANONBOX_FEDERATION_ALLOW_PRIVATE": "true"}, public_url=True
)


@pytest.mark.parametrize(
    ("lang", "theme"), [("en", "light"), ("ja", "light"), ("ko", "dark"), ("ja", "dark")]
)
def test_a_creator_lets_servers_suggest_the_link_on_a_phone(
    federating_site: Server,
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
    signs_in_new(page, federating_site, f"discoverable-{lang}")
    expect(page.locator("html")).to_have_attribute("lang", lang)
    link_id = page.locator("#inbox").get_attribute("data-link-id")
    assert link_id
    settings = f"{federating_site.url}/dashboard/links/{link_id}/settings"
    page.goto(settings)
    switch, discoverable = page.locator("#fediverse"), page.locator("#fediverse_discoverable")
    expect(switch).to_be_enabled()
    expect(discoverable).not_to_be_checked()
    expect(page.locator("#fediverse_discoverable-hint")).to_contain_text(HINTS[lang])
    switch.check()
    discoverable.check()
    page.locator("form:has(#fediverse) button[type=submit]").click()
    with loopback_client(base_url=federating_site.url, timeout=30) as api:

        def actor() -> dict[str, Any]:
            found = api.get(f"/ap/links/{link_id}", headers={"Accept": "application/activity+json"})
            return dict(found.json()) if found.status_code == 200 else {}

        wait_for(lambda: actor().get("discoverable") is True)
        assert actor()["indexable"] is True
    page.goto(settings)
    expect(page.locator("#fediverse_discoverable")).to_be_checked()
    page.locator("#fediverse_discoverable").scroll_into_view_if_needed()
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 360
    assert axe(page) == []
    backend = "postgresql" if federating_site.database_url.startswith("postgres") else "sqlite"
    screenshot(page, f"fediverse-discoverable-{lang}-{theme}-{backend}", full_page=False)
