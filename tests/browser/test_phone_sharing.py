"""Sharing from a phone, in Chromium: "Share" hands the answer's card (a PNG file) to the
Web Share API where the browser can share files, else the link; without the API the
fallbacks "Download card" and "Copy link" do the job. The dashboard shows the link as a
QR code (SVG, drawn on the server, for its owner only) next to "Download link card". A
shared link previews with Open Graph and Twitter card tags, and anonbox installs as an
app (manifest, icons, theme colours) without losing its push service worker."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from html.parser import HTMLParser
from typing import Any

from PIL import Image
from playwright.sync_api import BrowserContext, Locator, Page, expect

from tests.actions import answer_path, post_message, post_reply
from tests.browser.conftest import PHONE, Screenshot, Site, Watch
from tests.browser.test_full_path import sign_in
from tests.conftest import Creator
from tests.support.http import loopback_get

# Records what a page hands to the share sheet: a stand-in for a phone's navigator.share.
FAKE_SHARE = """
window.__shared = [];
Object.defineProperty(navigator, "canShare", { configurable: true, value: (data) =>
  CAN_SHARE_FILES && !!data && Array.isArray(data.files) &&
  data.files.every((f) => f instanceof File && f.type === "image/png") });
Object.defineProperty(navigator, "share", { configurable: true, value: async (data) => {
  const file = data.files ? data.files[0] : null;
  const head = file ? Array.from(new Uint8Array(await file.slice(0, 8).arrayBuffer())) : null;
  window.__shared.push({ url: data.url || null, files: data.files ? data.files.length : 0,
                         type: file && file.type, size: file && file.size, head: head });
} });
"""
PNG_SIGNATURE = [137, 80, 78, 71, 13, 10, 26, 10]


def answered(site: Site) -> tuple[Creator, str]:
    """A creator with one message answered; the message's id."""
    creator = site.new_creator()
    with site.api() as api:
        message_id = post_message(api, creator.link_id, "Which lighthouse is your favourite?")
        post_reply(api, creator, message_id, "The one at the end of the pier.")
    return creator, message_id


def answer_on(page: Page) -> tuple[Locator, str]:
    """The public page's (only) answer and its answer id (``#answer-{answer_id}``)."""
    answer = page.locator("#answers .answer")
    answer_id = str(answer.get_attribute("id")).removeprefix("answer-")
    return answer, answer_id


def shared(page: Page) -> list[dict[str, Any]]:
    page.wait_for_function("() => window.__shared.length > 0")
    return list(page.evaluate("window.__shared"))


def on_a_sharing_phone(
    site: Site, new_context: Callable[..., BrowserContext], *, can_share_files: bool
) -> tuple[Creator, str, Page]:
    """An answered message's public page, open on a phone whose share sheet is faked (and
    takes files when ``can_share_files``); the creator, the message's id and the page."""
    creator, message_id = answered(site)
    context = new_context(viewport=PHONE)
    flag = "true" if can_share_files else "false"
    context.add_init_script(f"const CAN_SHARE_FILES = {flag};" + FAKE_SHARE)
    page = context.new_page()
    page.goto(f"{site.url}/{creator.link_id}")
    return creator, message_id, page


def test_share_hands_the_card_png_to_the_share_sheet(
    site: Site, new_context: Callable[..., BrowserContext], screenshot: Screenshot
) -> None:
    creator, _, page = on_a_sharing_phone(site, new_context, can_share_files=True)
    answer, answer_id = answer_on(page)
    share = answer.get_by_role("button", name="Share", exact=True)
    expect(share).to_be_visible()
    screenshot(page, "public-share-buttons")
    share.click()
    [call] = shared(page)
    assert call["files"] == 1
    assert call["type"] == "image/png"
    assert call["head"] == PNG_SIGNATURE, "the shared file is not a PNG"
    assert call["size"] > 10_000
    assert call["url"] == f"{site.url}/{creator.link_id}/a/{answer_id}"


def test_share_falls_back_to_the_link_where_files_cannot_be_shared(
    site: Site, new_context: Callable[..., BrowserContext]
) -> None:
    creator, _, page = on_a_sharing_phone(site, new_context, can_share_files=False)
    answer, answer_id = answer_on(page)
    answer.get_by_role("button", name="Share", exact=True).click()
    [call] = shared(page)
    assert call == {
        "url": f"{site.url}/{creator.link_id}/a/{answer_id}",
        "files": 0,
        "type": None,
        "size": None,
        "head": None,
    }


def test_without_the_share_api_download_card_and_copy_link_do_it(
    site: Site, new_context: Callable[..., BrowserContext]
) -> None:
    creator, _ = answered(site)
    context = new_context(viewport=PHONE, accept_downloads=True)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site.url)
    page = context.new_page()
    page.goto(f"{site.url}/{creator.link_id}")
    assert page.evaluate("typeof navigator.share") == "undefined"  # headless Linux Chromium
    answer, answer_id = answer_on(page)
    expect(answer.get_by_role("button", name="Share", exact=True)).to_be_hidden()

    download = answer.get_by_role("link", name="Download card")
    expect(download).to_have_attribute("href", f"/{creator.link_id}/a/{answer_id}/card.png")
    with page.expect_download() as started:
        download.click()
    saved = started.value.path()
    with Image.open(saved) as card:
        assert card.format == "PNG"

    answer.get_by_role("button", name="Copy link").click()
    expect(answer.locator(".share-status")).to_have_text("Link copied.")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == f"{site.url}/{creator.link_id}/a/{answer_id}"


def test_the_dashboard_shares_answers_and_shows_the_link_as_a_qr_code(
    site: Site, new_context: Callable[..., BrowserContext], watch: Watch, screenshot: Screenshot
) -> None:
    context = new_context()
    context.add_init_script("const CAN_SHARE_FILES = true;" + FAKE_SHARE)
    page = context.new_page()
    sign_in(page, site, watch)
    link_id = page.locator("#inbox").get_attribute("data-link-id")
    assert link_id
    with site.api() as api:
        waiting = post_message(api, link_id, "Not answered yet")
        done = post_message(api, link_id, "Answered already")
    inbox = page.url
    page.goto(f"{site.url}/dashboard/links/{link_id}/messages/{waiting}")
    expect(page.locator(".share-actions")).to_have_count(0)  # nothing to share yet
    page.goto(f"{site.url}/dashboard/links/{link_id}/messages/{done}")
    page.get_by_label("Your answer").fill("Here is my answer.")
    page.get_by_role("button", name="Send reply").click()
    expect(page.locator(f"#m-{done} .reply-content")).to_have_text("Here is my answer.")
    # Share is offered at once, with the card: the share sheet (bound after the page came
    # in place), the download and the copy.
    share = page.locator("#share")
    expect(share).to_be_focused()
    share.get_by_role("button", name="Share", exact=True).click()
    [call] = shared(page)
    assert call["head"] == PNG_SIGNATURE
    with site.api() as api:  # the answer's own page and card, by its answer id
        public = answer_path(api, link_id, done)
    assert call["url"] == f"{site.url}{public}"
    expect(share.get_by_role("link", name="Download card")).to_have_attribute(
        "href", f"{public}/card.png"
    )
    screenshot(page, "dashboard-answered-share")
    page.goto(inbox)

    qr = page.locator("#link-qr")
    expect(qr).to_have_attribute("alt", "QR code of your link")
    assert page.evaluate("document.getElementById('link-qr').naturalWidth") > 0  # it loaded
    expect(page.locator("#link-card")).to_have_attribute("href", f"/{link_id}/card.png")
    expect(page.locator("#link-card")).to_have_attribute("download", "")
    screenshot(page, "dashboard-qr")

    svg = page.context.request.get(f"{site.url}/dashboard/links/{link_id}/qr.svg")
    assert svg.status == 200
    assert svg.headers["content-type"].startswith("image/svg+xml")
    url = f"{site.url}/{link_id}"
    assert qr_modules(svg.body()) == expected_modules(url)
    assert url in svg.text()  # in its <title>, for screen readers

    # Not for anyone else: a stranger is asked to sign in, another creator finds nothing.
    with site.api() as api:
        stranger = api.get(f"/dashboard/links/{link_id}/qr.svg")
    assert stranger.status_code == 401
    assert "<svg" not in stranger.text
    other = new_context().new_page()
    sign_in(other, site, watch)
    theirs = other.context.request.get(f"{site.url}/dashboard/links/{link_id}/qr.svg")
    assert theirs.status == 403  # the API's rule for another creator's link
    assert b"<svg" not in theirs.body()


# Byte-mode capacity at error correction level M, versions 1 to 10 (ISO/IEC 18004 table 7).
_BYTES_AT_M = [14, 26, 42, 62, 84, 106, 122, 152, 180, 213]


def expected_modules(url: str) -> int:
    """A QR code's side in modules for ``url`` at level M, with a quiet zone of four."""
    version = next(v for v, room in enumerate(_BYTES_AT_M, 1) if room >= len(url.encode()))
    return 17 + 4 * version + 2 * 4


def qr_modules(svg: bytes) -> int:
    """The side of a one-unit-per-module SVG, checked to be a well-formed square SVG."""
    root = ET.fromstring(svg)  # noqa: S314 - our own server's answer, in a test
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    width, height = root.get("width"), root.get("height")
    viewbox = root.get("viewBox")
    assert width == height, (width, height)
    if viewbox:
        assert viewbox.split()[2:] == [width, width]
    assert width is not None
    dark = [el for el in root.iter() if el.tag.endswith("path")]
    assert dark, "no modules drawn"
    return int(width)


class _Meta(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.meta: dict[str, list[str]] = {}
        self.links: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "meta":
            key = a.get("property") or a.get("name")
            if key:
                media = a.get("media")
                self.meta.setdefault(key, []).append(
                    f"{a.get('content', '')}|{media}" if media else a.get("content", "")
                )
        if tag == "link" and "rel" in a:
            self.links[a["rel"]] = a.get("href", "")


def meta_of(html: str) -> _Meta:
    parsed = _Meta()
    parsed.feed(html)
    return parsed


def test_a_shared_link_previews_with_its_card(site: Site) -> None:
    creator = site.new_creator()
    with site.api() as api:
        api.patch(
            f"/links/{creator.link_id}",
            json={"prompt": "Ask me about lighthouses"},
            headers=creator.headers,
        ).raise_for_status()
        send_page = api.get(f"/{creator.link_id}").text
        home = api.get("/").text
        receipt = api.post(
            f"/message/{creator.link_id}",
            params={"receipt": "true"},
            json={"message_content": "hi"},
        ).json()["data"]["receipt"]["url"]
        receipt_page = api.get(receipt).text
        card = api.get(f"/{creator.link_id}/card.png")
    tags = meta_of(send_page).meta
    assert tags["og:url"] == [f"{site.url}/{creator.link_id}"]
    # The landscape preview (issue 41): what summary_large_image and LINE show whole.
    assert tags["og:image"] == [f"{site.url}/{creator.link_id}/preview.png"]
    assert tags["twitter:image"] == tags["og:image"]
    assert tags["twitter:card"] == ["summary_large_image"]
    assert tags["og:description"] == ["Ask me about lighthouses"]
    assert tags["og:title"][0].startswith("Send ")
    assert tags["og:locale"] == ["en_US"]
    assert tags["og:image:width"] == ["1200"]
    assert tags["og:image:height"] == ["630"]
    assert tags["og:image:alt"][0]
    if card.status_code == 200:  # the link card (its own part of this work) once it is there
        with Image.open(io.BytesIO(card.content)) as drawn:
            assert drawn.size == (1080, 1920)

    home_tags = meta_of(home).meta
    assert home_tags["og:url"] == [f"{site.url}/"]
    assert home_tags["og:image"] == [f"{site.url}/static/icons/icon-512.png"]
    # A receipt is the sender's private page: it must not preview anywhere.
    assert not any(key.startswith(("og:", "twitter:")) for key in meta_of(receipt_page).meta)


def test_anonbox_installs_as_an_app(site: Site, new_context: Callable[..., BrowserContext]) -> None:
    with site.api() as api:
        answer = api.get("/manifest.webmanifest")
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("application/manifest+json")
        manifest = json.loads(answer.text)
        assert manifest["start_url"] == "/dashboard"
        assert manifest["display"] == "standalone"
        assert manifest["name"]
        assert manifest["short_name"]
        assert re.fullmatch(r"#[0-9a-f]{6}", manifest["theme_color"])
        assert re.fullmatch(r"#[0-9a-f]{6}", manifest["background_color"])
        sizes = set()
        for icon in manifest["icons"]:
            png = api.get(icon["src"])
            assert png.status_code == 200, icon
            with Image.open(io.BytesIO(png.content)) as drawn:
                assert drawn.format == "PNG"
                assert f"{drawn.width}x{drawn.height}" == icon["sizes"]
            sizes.add((icon["sizes"], icon.get("purpose", "any")))
        assert {("192x192", "any"), ("512x512", "any"), ("512x512", "maskable")} <= sizes

        head = meta_of(api.get("/signin").text)
        assert head.links["manifest"] == "/manifest.webmanifest"
        touch = api.get(head.links["apple-touch-icon"])
        with Image.open(io.BytesIO(touch.content)) as drawn:
            assert drawn.size == (180, 180)
        assert sorted(head.meta["theme-color"]) == [
            "#131316|(prefers-color-scheme: dark)",
            "#f6f5f2|(prefers-color-scheme: light)",
        ]

    # Chromium reads the manifest and the push service worker still registers and runs.
    page = new_context().new_page()
    page.goto(f"{site.url}/signin")
    read = page.evaluate(
        """async () => {
             const link = document.querySelector('link[rel=manifest]');
             const answer = await fetch(link.href);
             return (await answer.json()).start_url;
           }"""
    )
    assert read == "/dashboard"
    state = page.evaluate(
        """async () => {
             const registration = await navigator.serviceWorker.register('/sw.js');
             await navigator.serviceWorker.ready;
             return (registration.active || registration.waiting || registration.installing).state;
           }"""
    )
    assert state in {"activating", "activated"}
    worker = loopback_get(f"{site.url}/sw.js")
    assert worker.headers["content-type"].startswith("text/javascript")
    # Its notices show the app icon, a PNG (Android draws no SVG in a notification).
    icon = re.search(r'icon: "([^"]+)"', worker.text)
    assert icon
    with Image.open(io.BytesIO(loopback_get(site.url + icon.group(1)).content)) as drawn:
        assert drawn.format == "PNG"
