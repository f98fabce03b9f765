"""Times on the pages of a creator in Tokyo, over HTTP as a browser gets them: the send
page and the receipt show the creator's time in the visitor's language (no seconds, no
"UTC"); the account page's picker saves a zone and refuses an unknown one; the first
dashboard page's report of the browser's zone is taken once. Expected strings are built
here by hand (weekday and day-period names written out), not by the code under test.
Each test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import httpx
import pytest

from tests.conftest import Creator
from tests.server import Server
from tests.support.forms import csrf_of
from tests.support.signin import signed_in

HTML = {"Accept": "text/html"}
TOKYO = ZoneInfo("Asia/Tokyo")


@pytest.fixture
def browser(server: Server, creator: Creator) -> Iterator[httpx.Client]:
    with signed_in(server, creator.user_id) as client:
        yield client


def read_in_tokyo(iso: str, language: str) -> str:
    """How a person in Tokyo writes the moment, in ``language``."""
    at = datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone(TOKYO)
    other_year = at.year != datetime.now(UTC).astimezone(TOKYO).year
    hour12 = at.hour % 12 or 12
    if language == "ja":
        year = f"{at.year}年" if other_year else ""
        weekday = "月火水木金土日"[at.weekday()]
        return f"{year}{at.month}月{at.day}日({weekday}) {at.hour}:{at.minute:02d}"
    if language == "ko":
        year = f"{at.year}년 " if other_year else ""
        period = "오전" if at.hour < 12 else "오후"
        weekday = "월화수목금토일"[at.weekday()]
        return f"{year}{at.month}월 {at.day}일 ({weekday}) {period} {hour12}:{at.minute:02d}"
    day = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")[at.weekday()]
    month = at.strftime("%b")
    year = f", {at.year}" if other_year else ""
    period = "AM" if at.hour < 12 else "PM"
    return f"{day}, {month} {at.day}{year}, {hour12}:{at.minute:02d} {period}"


def zone_on_account_page(browser: httpx.Client) -> str:
    page = browser.get("/dashboard/account")
    assert page.status_code == 200, page.text
    found = re.search(
        r'<input type="text" id="time-zone" name="time_zone" value="([^"]*)"', page.text
    )
    assert found, page.text
    return html.unescape(found.group(1))


def pick_zone(browser: httpx.Client, zone: str, language: str = "en") -> httpx.Response:
    """The account page's form, with ``zone`` typed (or picked) into its time-zone field."""
    page = browser.get("/dashboard/account")
    return browser.post(
        "/dashboard/account/preferences",
        data={"csrf_token": csrf_of(page.text), "language": language, "time_zone": zone},
    )


@pytest.mark.parametrize("language", ["ja", "ko", "en"])
def test_a_paused_send_page_shows_the_creators_time_in_the_visitors_language(
    api: httpx.Client, creator: Creator, browser: httpx.Client, language: str
) -> None:
    assert pick_zone(browser, "Asia/Tokyo").status_code == 303
    paused = api.patch(
        f"/links/{creator.link_id}", json={"pause_for_hours": 24}, headers=creator.headers
    )
    assert paused.status_code == 200, paused.text

    page = api.get(f"/{creator.link_id}", headers={**HTML, "Accept-Language": language})

    notice = re.search(r'id="paused">(.*?)</p>', page.text)
    assert notice, page.text
    at, shown = re.findall(r'<time datetime="([^"]+)">([^<]+)</time>', notice.group(1))[0]
    assert html.unescape(shown) == read_in_tokyo(at, language)
    assert "UTC" not in notice.group(1)


@pytest.mark.parametrize("language", ["ko", "ja"])
def test_the_receipt_shows_the_creators_time_in_the_senders_language(
    api: httpx.Client, creator: Creator, browser: httpx.Client, language: str
) -> None:
    assert pick_zone(browser, "Asia/Tokyo").status_code == 303
    sent = api.post(
        f"/message/{creator.link_id}",
        params={"receipt": "true"},
        json={"message_content": "what time is it there?"},
    )
    assert sent.status_code == 201, sent.text
    token = sent.json()["data"]["receipt"]["token"]

    page = api.get(f"/r/{token}", headers={**HTML, "Accept-Language": language})

    assert page.status_code == 200, page.text
    times = re.findall(r'<time datetime="([^"]+)" title="([^"]+)">', page.text)
    assert len(times) >= 2, page.text  # when it was sent, and until when the receipt works
    for at, exact in times:
        assert html.unescape(exact) == read_in_tokyo(at, language)


def test_the_picker_saves_a_zone_and_refuses_an_unknown_one(
    api: httpx.Client, browser: httpx.Client
) -> None:
    suggestions = api.get("/time-zones.json")  # what the page's field suggests, for anyone
    assert ["Asia/Seoul", "Asia/Seoul (UTC+9)"] in suggestions.json()
    assert suggestions.headers["cache-control"] == "public, max-age=3600"
    assert "set-cookie" not in suggestions.headers
    kept = api.get("/time-zones.json", headers={"If-None-Match": suggestions.headers["etag"]})
    assert kept.status_code == 304
    page = browser.get("/dashboard/account").text
    assert "Asia/Seoul (UTC+9)" not in page  # the page carries none of the 419: its budget

    assert pick_zone(browser, "Asia/Seoul").status_code == 303
    assert zone_on_account_page(browser) == "Asia/Seoul"

    for unknown in ("Asia/Atlantis", "atlantis", "", "US/Eastern"):
        refused = pick_zone(browser, unknown, language="ja")
        assert refused.status_code == 400, unknown
    assert zone_on_account_page(browser) == "Asia/Seoul"  # nothing changed


@pytest.mark.parametrize(
    ("typed", "zone"), [("tokyo", "Asia/Tokyo"), ("New York", "America/New_York")]
)
def test_without_the_suggestions_a_city_names_its_zone(
    browser: httpx.Client, typed: str, zone: str
) -> None:
    assert pick_zone(browser, typed).status_code == 303
    assert zone_on_account_page(browser) == zone
    assert 'lang="en"' in browser.get("/dashboard/account").text  # nor the language


def test_the_first_dashboard_page_reports_the_browsers_zone_once(
    server: Server, creator: Creator, browser: httpx.Client
) -> None:
    dashboard = browser.get("/dashboard").text
    assert 'id="first-time-zone"' in dashboard  # an account without a zone asks
    assert zone_on_account_page(browser) == "UTC"  # and reads UTC meanwhile
    token = csrf_of(dashboard)

    def report(zone: str) -> int:
        sent = browser.post(
            "/dashboard/account/time-zone", data={"csrf_token": token, "time_zone": zone}
        )
        return sent.status_code

    assert report("Mars/Olympus_Mons") == 400
    assert report("Asia/Jakarta") == 204
    assert zone_on_account_page(browser) == "Asia/Jakarta"
    assert 'id="first-time-zone"' not in browser.get("/dashboard").text

    assert report("Asia/Tokyo") == 204  # another browser later: the first zone stays
    assert zone_on_account_page(browser) == "Asia/Jakarta"
    assert pick_zone(browser, "Asia/Tokyo").status_code == 303  # the picker still changes it
    assert zone_on_account_page(browser) == "Asia/Tokyo"
