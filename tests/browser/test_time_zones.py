"""Time zones as a creator meets them on a 360x740 phone: signing up takes the browser's
zone (Playwright's ``timezone_id``), or UTC without JavaScript; the account page's picker
offers this device's zone first and saves a zone typed into it; the dashboard's live
times (Intl) read as the server wrote them; a visitor in another zone and language sees
a timed pause in the creator's time. Screenshots in Japanese, Korean and English, light
and dark. Each test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.conftest import Axe, Screenshot, Site, off_the_loop, signs_in_new
from tests.support.db import execute, query

SMALL_PHONE = {"width": 360, "height": 740}
REPORTED = "/dashboard/account/time-zone"


def signs_up_in(page: Page, site: Site, name: str) -> str:
    """A new account signs in on ``page``, whose first dashboard page reports its zone;
    its address."""
    with page.expect_response(lambda answer: answer.url.endswith(REPORTED)) as reported:
        email = signs_in_new(page, site.server, name)
    assert reported.value.status == 204
    return email


def link_of(site: Site, email: str) -> str:
    [row] = off_the_loop(
        query,
        site.server.database_url,
        "SELECT l.id FROM links l JOIN users u ON u.id = l.user_id WHERE u.email = $1",
        email,
    )
    return str(row["id"])


def test_signing_up_takes_the_browsers_zone_and_without_javascript_utc(
    site: Site, new_context: Callable[..., BrowserContext]
) -> None:
    page = new_context(viewport=SMALL_PHONE, locale="ja-JP", timezone_id="Asia/Tokyo").new_page()
    signs_up_in(page, site, "tokyo")
    page.goto(f"{site.url}/dashboard/account")
    expect(page.locator("#time-zone")).to_have_value("Asia/Tokyo")
    expect(page.locator("#device-time-zone")).to_be_hidden()  # already this device's

    plain = new_context(
        viewport=SMALL_PHONE, timezone_id="Asia/Tokyo", java_script_enabled=False
    ).new_page()
    signs_in_new(plain, site.server, "no-script")
    plain.goto(f"{site.url}/dashboard/account")
    expect(plain.locator("#time-zone")).to_have_value("UTC")


@pytest.mark.parametrize(
    ("locale", "save"),
    [
        ("ko-KR", "언어 및 시간대 저장"),
        ("ja-JP", "言語とタイムゾーンを保存"),
        ("en-GB", "Save language and time zone"),
    ],
)
def test_the_picker_starts_with_this_devices_zone_and_saves_a_typed_one(
    site: Site,
    new_context: Callable[..., BrowserContext],
    screenshot: Screenshot,
    axe: Axe,
    locale: str,
    save: str,
) -> None:
    page = new_context(viewport=SMALL_PHONE, locale=locale, timezone_id="Asia/Seoul").new_page()
    signs_up_in(page, site, "seoul")
    page.goto(f"{site.url}/dashboard/account")
    field = page.locator("#time-zone")
    expect(field).to_have_value("Asia/Seoul")

    field.fill("Asia/Tokyo")  # typed, as the suggestions would fill it
    page.get_by_role("button", name=save).click()
    expect(field).to_have_value("Asia/Tokyo")
    device = page.locator("#device-time-zone")
    expect(device).to_be_visible()  # the account's zone is not this device's: one tap back
    expect(device).to_contain_text("Asia/Seoul")
    first = page.locator("#time-zones option").first
    expect(first).to_have_attribute("value", "Asia/Seoul")
    assert page.evaluate("document.documentElement.scrollWidth") <= SMALL_PHONE["width"]
    assert axe(page) == []
    language = locale[:2]
    device.scroll_into_view_if_needed()
    screenshot(page, f"time-zone-picker-{language}-light-360", full_page=False)
    page.emulate_media(color_scheme="dark")
    screenshot(page, f"time-zone-picker-{language}-dark-360", full_page=False)
    assert axe(page) == []

    device.click()
    expect(field).to_have_value("Asia/Seoul")
    page.get_by_role("button", name=save).click()
    expect(field).to_have_value("Asia/Seoul")
    expect(device).to_be_hidden()


@pytest.mark.parametrize("locale", ["ko-KR", "en-US"])
def test_the_dashboards_live_times_read_as_the_server_wrote_them(
    site: Site, new_context: Callable[..., BrowserContext], locale: str
) -> None:
    page = new_context(viewport=SMALL_PHONE, locale=locale, timezone_id="Asia/Seoul").new_page()
    email = signs_up_in(page, site, "live")
    site.post_message(link_of(site, email), "몇 시예요?")
    page.goto(f"{site.url}/dashboard")
    time = page.locator("main time[datetime]").first
    written = time.get_attribute("title")  # by the server (core.i18n.exact_time)
    assert written
    assert "UTC" not in written
    time.evaluate("element => { element.title = ''; window.anonboxSayTime(element); }")
    expect(time).to_have_attribute("title", written)  # by the page (Intl), the same


@pytest.mark.parametrize("locale", ["ja-JP", "ko-KR", "en-GB"])
def test_a_visitor_elsewhere_reads_the_pause_in_the_creators_time(
    site: Site,
    new_context: Callable[..., BrowserContext],
    screenshot: Screenshot,
    axe: Axe,
    locale: str,
) -> None:
    creator = site.new_creator()
    zone_set = "UPDATE users SET time_zone = $1 WHERE id = $2"  # as the picker stores it
    zone_of = (site.server.database_url, zone_set, "Asia/Tokyo", creator.user_id)
    assert off_the_loop(execute, *zone_of) == 1
    with site.api() as api:
        paused = api.patch(
            f"/links/{creator.link_id}", json={"pause_for_hours": 24}, headers=creator.headers
        )
    assert paused.status_code == 200, paused.text
    visitor = new_context(viewport=SMALL_PHONE, locale=locale, timezone_id="America/New_York")
    for scheme in ("light", "dark"):
        page = visitor.new_page()
        page.emulate_media(color_scheme=scheme)
        page.goto(f"{site.url}/{creator.link_id}")
        notice = page.locator("#paused")
        shown = notice.locator("time").inner_text()
        tokyo = page.evaluate(
            """at => new Intl.DateTimeFormat(document.documentElement.lang, {weekday: "short",
                 month: "short", day: "numeric", hour: "numeric", minute: "2-digit",
                 timeZone: "Asia/Tokyo"}).format(new Date(at))""",
            notice.locator("time").get_attribute("datetime"),
        )
        assert shown == tokyo  # Tokyo's time, not New York's, nor UTC
        assert "UTC" not in notice.inner_text()
        assert page.evaluate("document.documentElement.scrollWidth") <= SMALL_PHONE["width"]
        assert axe(page) == []
        screenshot(page, f"send-page-paused-tokyo-{locale[:2]}-{scheme}-360", full_page=False)
