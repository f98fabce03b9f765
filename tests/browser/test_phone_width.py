"""Every page on a 360 px phone (360x740), as a creator, an admin and a sender see it,
in light and dark in English and Japanese, and in Korean, Indonesian and Spanish: no page
is wider than the screen (``document.documentElement.scrollWidth <= 360``), the top
navigation stays on one row,
and every touch target is large enough or far enough from the others (WCAG 2.5.8).

The pages hold what makes them wide: two links, one paused until a time (its settings'
pause select), a long prompt, messages with a long unbroken word and a long URL, a
webhook with a failed delivery and its error, muted words and phrases, a report in the
admin queue. A screenshot of each goes to
``test-artifacts/screenshots/phone-<page>-<lang>-<theme>.png``.

The target check (docs/decisions.md, "Made for a phone"): a target (a link, button,
input, select or textarea in the page's header, main content or footer; a radio or checkbox is
measured by its label, which is what a finger presses) passes when it is at least 24x24
CSS px; a smaller one passes when a 24 px circle centred on it meets no other target
(WCAG 2.5.8's spacing exception). Links inside a sentence are left out, as the criterion
leaves them out (their size is the line's). On SQLite only, as in test_every_page: width
depends on HTML and CSS, not on the database."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page

from tests.actions import answer_path, post_reply
from tests.browser.conftest import Axe, Screenshot, account_pages, off_the_loop, own_server
from tests.browser.furnished import Furnished, furnish, post_from
from tests.server import Server
from tests.support.admin import make_account, mute_phrase
from tests.support.http import loopback_client
from tests.support.mail import SMTPServer, smtp_server

__all__ = ["smtp_server"]  # the fixture, used here

PHONE_360 = {"width": 360, "height": 740}
LONG_WORD = "Supercalifragilisticexpialidocious" * 4
LONG_URL = (
    "https://example.org/a/very/long/path/that/goes/on/and/on/without/any/space/"
    "?utm_source=somewhere&utm_medium=phone&utm_campaign=width-test-0123456789abcdef"
)
LONG_PROMPT = (
    "Ask me anything about drawing, inking, scanning, colours and the pens I use every day"
)
LONG_PHRASE = "averyveryverylongmutedphrasewithoutanyspacesatalltotestthewidth"


# A server whose senders are told apart by X-Forwarded-For, whose webhooks may point at
# loopback (a closed port: each delivery fails, with its error shown), with mail.
phone = own_server(
    "phone",
    {
        "ANONBOX_TRUSTED_PROXIES": "127.0.0.1/32",
        "ANONBOX_LIMIT_SENDER_LINK": "1000/60",
        "ANONBOX_WEBHOOK_ALLOW_PRIVATE": "true",
        "ANONBOX_WEBHOOK_RETRY_SECONDS": "0.2",
    },
    mail=True,
    backends=("sqlite",),
)


@dataclass(frozen=True)
class World(Furnished):
    second: str  # a second link, paused until a time, with a long prompt
    answered: str  # a message with a long reply, on its own page
    answer_page: str  # its public page, /{link_id}/a/{answer_id}
    reply: str
    unanswered: str


@pytest.fixture(scope="module")
def world(phone: Server, smtp_server: SMTPServer) -> World:
    admin = off_the_loop(lambda: make_account(phone.database_url, admin=True))
    creator = admin.creator
    headers = creator.headers
    with loopback_client(base_url=phone.url, timeout=30) as api:
        hook = api.post("/webhooks", json={"url": "http://127.0.0.1:9/hook"}, headers=headers)
        assert hook.status_code == 201, hook.text
        deliveries = f"/webhooks/{hook.json()['data']['id']}/deliveries"
        muted = api.post("/muted-words", json={"word": "spoiler"}, headers=headers)
        assert muted.status_code == 201, muted.text
        texts = [
            "What pens do you use?",
            f"Have you seen {LONG_URL} yet?",
            f"{LONG_WORD}!",
            "No spoiler please",  # to the filtered folder
            "Which pens for inking, and which paper?",
        ]
        ids = [
            post_from(api, creator.link_id, text, n).json()["data"]["id"]
            for n, text in enumerate(texts)
        ]
        reply = post_reply(api, creator, ids[1], f"Yes: {LONG_WORD} {LONG_URL}")
        reported = api.post(f"/message/{creator.link_id}/{ids[2]}/report", json={"reason": "spam"})
        assert reported.status_code == 201, reported.text
        mute_phrase(api, admin, LONG_PHRASE)
        second = api.post("/links", json={"prompt": LONG_PROMPT}, headers=headers)
        assert second.status_code == 201, second.text
        second_id = second.json()["data"]["id"]
        paused = api.patch(f"/links/{second_id}", json={"pause_for_hours": 24}, headers=headers)
        assert paused.status_code == 200, paused.text
        shared = furnish(phone, smtp_server, api, admin)
        answer_page = answer_path(api, creator.link_id, ids[1])
        # The webhook's deliveries fail (nothing listens on port 9): wait for one to show.
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            listed = api.get(deliveries, headers=headers).json()["data"]["items"]
            if any(item["attempts"] for item in listed):
                break
            time.sleep(0.2)
    return World(
        **shared,
        second=second_id,
        answered=ids[1],
        answer_page=answer_page,
        reply=reply,
        unanswered=ids[0],
    )


def public_pages(w: World) -> list[tuple[str, str]]:
    link = w.admin.creator.link_id
    return [
        ("home", "/"),
        ("signin", "/signin"),
        ("send", f"/{link}"),
        ("answer", w.answer_page),
        ("send-paused", f"/{w.second}"),
        ("receipt", w.receipt),
        ("error-404", "/no-such-link-here"),
        ("error-410", f"/{w.gone}"),
        ("email-confirmed", w.confirm),
        ("email-unsubscribe", w.unsubscribe),
    ]


def creator_pages(w: World) -> list[tuple[str, str]]:
    link = w.admin.creator.link_id
    base = f"/dashboard/links/{link}"
    return [
        ("dashboard", "/dashboard"),
        ("dashboard-answered", "/dashboard?filter=answered"),
        ("link-paused", f"/dashboard/links/{w.second}"),
        ("search", f"{base}/search?q=pens"),
        ("link-settings", f"{base}/settings"),
        ("message", f"{base}/messages/{w.answered}?done=replied"),
        ("message-unanswered", f"{base}/messages/{w.unanswered}"),
        ("confirm-message-delete", f"{base}/messages/{w.answered}/delete"),
        ("confirm-reply-delete", f"{base}/messages/{w.answered}/replies/{w.reply}/delete"),
        *account_pages(base),
    ]


# What a finger can press, per page: each target's box (a radio's or checkbox's by its
# label), less links in running text; the ones under 24x24 whose 24 px circle meets
# another target; how wide the page is; whether the header's items share one row.
MEASURE = """() => {
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden';
  };
  const inSentence = (el) => {
    if (el.tagName !== 'A' || getComputedStyle(el).display !== 'inline') return false;
    const block = el.parentElement;
    return block.textContent.trim().length > el.textContent.trim().length;
  };
  const selector = 'a[href], button, input:not([type=hidden]), select, textarea';
  const targets = [];
  for (const el of document.querySelectorAll(
      `header.site :is(${selector}), main :is(${selector}), footer.site :is(${selector})`)) {
    let box = el;
    if (el.matches('input[type=radio], input[type=checkbox]')) {
      box = el.closest('label') || (el.id && document.querySelector(`label[for="${el.id}"]`)) || el;
    }
    if (!visible(box) || inSentence(box) || targets.some((t) => t.el === box)) continue;
    const r = box.getBoundingClientRect();
    const name = (box.id ? '#' + box.id : box.tagName.toLowerCase()) + ' "' +
      (box.textContent || box.value || box.name || '').trim().slice(0, 30) + '"';
    targets.push({el: box, r, name});
  }
  const small = [];
  const distance = (x, y, r) => Math.hypot(
    Math.max(r.left - x, 0, x - r.right), Math.max(r.top - y, 0, y - r.bottom));
  for (const t of targets) {
    if (t.r.width >= 23.5 && t.r.height >= 23.5) continue;
    const cx = t.r.left + t.r.width / 2, cy = t.r.top + t.r.height / 2;
    const near = targets.filter((o) => o !== t && !o.el.contains(t.el) && !t.el.contains(o.el)
      && (distance(cx, cy, o.r) < 12 ||
          ((o.r.width < 23.5 || o.r.height < 23.5) &&
           Math.hypot(cx - (o.r.left + o.r.width / 2), cy - (o.r.top + o.r.height / 2)) < 24)));
    if (near.length) small.push(`${t.name} ${Math.round(t.r.width)}x${Math.round(t.r.height)}` +
      ` next to ${near.map((o) => o.name).join(', ')}`);
  }
  const wide = [...document.querySelectorAll('body *')]
    .filter((el) => visible(el) && el.getBoundingClientRect().right > 360.5)
    .filter((el) => !el.closest('.deliveries-scroll, .table-scroll'))
    .slice(0, 4).map((el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
      (typeof el.className === 'string' && el.className ? '.' + el.className.split(' ')[0] : '') +
      ' ' + Math.round(el.getBoundingClientRect().right));
  const middle = (el) => { const r = el.getBoundingClientRect(); return r.top + r.height / 2; };
  const pages = [...document.querySelectorAll('header.site nav a')].filter(visible).map(middle);
  const brand = document.querySelector('header.site .brand');
  const signOut = document.querySelector('header.site nav button');
  const off = brand && signOut ? Math.abs(middle(brand) - middle(signOut)) : 0;
  return {width: document.documentElement.scrollWidth, small, wide,
          navRows: new Set(pages.map(Math.round)).size, signOutOff: off};
}"""


def check(page: Page, name: str) -> list[str]:
    measured: dict[str, Any] = page.evaluate(MEASURE)
    problems = []
    if measured["width"] > PHONE_360["width"]:
        problems.append(f"{name}: {measured['width']} px wide: {measured['wide']}")
    if measured["navRows"] > 1:
        problems.append(f"{name}: the navigation wraps onto {measured['navRows']} rows")
    if measured["signOutOff"] > 4:
        problems.append(f"{name}: Sign out is not on the brand's row")
    problems.extend(f"{name}: target too small and too close: {s}" for s in measured["small"])
    return problems


def visit(page: Page, url: str, name: str, screenshot: Screenshot, axe: Axe | None) -> list[str]:
    response = page.goto(url)
    assert response is not None
    page.wait_for_load_state("load")
    problems = check(page, name)
    if axe is not None:
        problems.extend(f"{name}: axe: {v}" for v in axe(page))
    screenshot(page, f"phone-{name}")
    return problems


# Every language the catalogs speak; light and dark in English and Japanese (the themes
# change colours, not widths, so once is enough for the others).
@pytest.mark.parametrize(
    ("lang", "theme"),
    [
        ("en", "light"),
        ("en", "dark"),
        ("ja", "light"),
        ("ja", "dark"),
        ("ko", "light"),
        ("id", "light"),
        ("es", "light"),
    ],
)
def test_no_page_is_wider_than_a_360_px_phone_and_targets_are_big_enough(
    lang: str,
    theme: str,
    world: World,
    new_context: Callable[..., BrowserContext],
    axe: Axe,
    screenshot: Screenshot,
) -> None:
    url = world.server.url
    tag = f"{lang}-{theme}"
    options: dict[str, Any] = {
        "color_scheme": theme,
        "locale": {"en": "en-GB", "ja": "ja-JP", "ko": "ko-KR", "id": "id-ID", "es": "es-ES"}[lang],
        "viewport": PHONE_360,
    }
    if lang != "en":
        options["extra_http_headers"] = {"Accept-Language": f"{options['locale']},{lang};q=0.9"}
    # The creators' pages speak the creator's setting, not the browser's: set, as if
    # they had chosen it on the account page.
    world.speak(lang)
    problems: list[str] = []
    sender = new_context(**options).new_page()
    for name, path in public_pages(world):
        problems.extend(visit(sender, url + path, f"{name}-{tag}", screenshot, axe))

    creator = new_context(**options).new_page()
    world.sign_in(creator, world.admin.email, r"/dashboard")
    for name, path in creator_pages(world):
        problems.extend(visit(creator, url + path, f"{name}-{tag}", screenshot, axe))
    world.sign_in(creator, world.leaving, r"/dashboard/deletion")
    problems.extend(visit(creator, f"{url}/dashboard/deletion", f"deletion-{tag}", screenshot, axe))
    assert not problems, "\n".join(problems)
