"""Who sees a link's answers on the fediverse, chosen on a 360 px phone where the site
federates (issue 42, item 3): a select of three (everyone; everyone, off public
timelines; followers only) with the sentence saying what followers only does; chosen and
saved without scripts' help, it stays chosen and the link's Notes are addressed so. In
English, Japanese and Korean, light and dark; screenshots in
test-artifacts/screenshots/fediverse-visibility-*."""

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
FOLLOWERS_ONLY = {"en": "Its followers only", "ja": "フォロワーのみ", "ko": "팔로워만"}

federating_site = own_server(
    "federating_site", {"ANONBOX_FEDERATION_ALLOW_PRIVATE": "true"}, public_url=True
)


@pytest.mark.parametrize(
    ("lang", "theme"), [("en", "light"), ("ja", "light"), ("ko", "dark"), ("en", "dark")]
)
def test_a_creator_keeps_answers_to_followers_on_a_phone(
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
    signs_in_new(page, federating_site, f"visibility-{lang}-{theme}")
    expect(page.locator("html")).to_have_attribute("lang", lang)
    link_id = page.locator("#inbox").get_attribute("data-link-id")
    assert link_id
    settings = f"{federating_site.url}/dashboard/links/{link_id}/settings"
    page.goto(settings)
    choice = page.locator("#federation_visibility")
    expect(choice).to_have_value("public")
    expect(page.locator("#federation_visibility-help")).to_be_visible()
    page.locator("#fediverse").check()
    choice.select_option(label=FOLLOWERS_ONLY[lang])
    page.locator("form:has(#fediverse) button[type=submit]").click()
    with loopback_client(base_url=federating_site.url, timeout=30) as api:
        outbox = f"/ap/links/{link_id}/outbox"
        ap = {"Accept": "application/activity+json"}
        wait_for(lambda: api.get(outbox, headers=ap).status_code == 200)  # saved: followable
    page.goto(settings)
    expect(page.locator("#federation_visibility")).to_have_value("followers")
    page.locator("#federation_visibility-help").scroll_into_view_if_needed()
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 360
    assert axe(page) == []
    backend = "postgresql" if federating_site.database_url.startswith("postgres") else "sqlite"
    screenshot(page, f"fediverse-visibility-{lang}-{theme}-{backend}", full_page=False)
