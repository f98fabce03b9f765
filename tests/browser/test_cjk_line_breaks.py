# ruff: noqa: RUF001 - Japanese text has its own full-width punctuation
"""Korean and Japanese lines break between words, never inside one, on a 360 px phone
(issue 41, item 6; docs/decisions.md, "Type set for CJK").

The real pages (home, sign-in, the send page, the answer pages, a receipt, the inbox, a
message, the links, the account and the notifications), in Korean, Japanese and English,
with messages in Korean and Japanese on them (marked with their language on a page in
another). Each character is measured with a Range (``getBoundingClientRect``): a word
whose characters lie on more than one line is broken. In Korean a word is what
``Intl.Segmenter`` calls one: an eojeol without its punctuation ("메시지를", "주세요").
In Japanese, where Chromium's ``word-break: auto-phrase`` breaks between the phrases a
model finds (which may cross a dictionary word: "…する方|法も"), a word is a katakana word
("ダウンロード") or one the issue saw broken ("受け取る"), and no line of a wrapped text
holds a single character. A word wider than its line on its own may break (it must, to
stay on a 360 px screen), and is left out.

That the measure finds what it looks for is shown on the same pages: with the rules
turned off (``word-break: normal`` injected), it finds broken words in both languages.
On SQLite only: line breaking depends on HTML and CSS, not on the database."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from playwright.sync_api import BrowserContext, Page

from tests.actions import post_reply
from tests.browser.conftest import Screenshot, off_the_loop, own_server
from tests.browser.furnished import post_from
from tests.server import Server
from tests.support.admin import Admin, make_account
from tests.support.db import execute
from tests.support.http import loopback_client
from tests.support.signin import signin_link_command

PHONE_360 = {"width": 360, "height": 740}
LOCALES = {"ko": "ko-KR", "ja": "ja-JP", "en": "en-GB"}

# Messages in either language, as senders write them: long enough to wrap at 360 px.
MESSAGES = {
    "ko": "요즘 가장 즐겨 듣는 노래가 뭐예요? 출근길에 들을 만한 신나는 노래를 추천해 주세요! "
    "저는 요즘 메시지를 보내는 것도 링크를 만드는 것도 재미있어요",
    "ja": "最近ハマっているものは何ですか？通勤中に聴ける明るい曲があったら教えてください！"
    "メッセージを受け取る方法やシェア画像をダウンロードする方法も知りたいです",
}
REPLIES = {
    "ko": "요즘은 아이유의 노래를 자주 들어요. 가사가 정말 아름다워서 마음이 편해져요.",
    "ja": "最近はよく散歩をしながらポッドキャストを聴いています。おすすめはまた今度教えますね！",
}

# Senders told apart by X-Forwarded-For (tests.browser.furnished.post_from).
typeset = own_server(
    "typeset",
    {"ANONBOX_TRUSTED_PROXIES": "127.0.0.1/32", "ANONBOX_LIMIT_SENDER_LINK": "1000/60"},
    backends=("sqlite",),
)


@dataclass(frozen=True)
class World:
    server: Server
    admin: Admin
    receipt: str  # the receipt page of the Korean message
    messages: dict[str, str]  # language -> the id of the message in it
    answers: list[str]  # the answer pages' paths

    def pages(self) -> list[tuple[str, str]]:
        link = self.admin.creator.link_id
        base = f"/dashboard/links/{link}"
        return [
            ("home", "/"),
            ("signin", "/signin"),
            ("send", f"/{link}"),
            ("receipt", self.receipt),
            *((f"answer-{n}", path) for n, path in enumerate(self.answers)),
            ("dashboard", "/dashboard"),
            *((f"message-{lang}", f"{base}/messages/{id_}") for lang, id_ in self.messages.items()),
            ("links", "/dashboard/links"),
            ("account", "/dashboard/account"),
            ("notifications", "/dashboard/notifications"),
        ]


@pytest.fixture(scope="module")
def world(typeset: Server) -> World:
    admin = off_the_loop(lambda: make_account(typeset.database_url, admin=False))
    creator = admin.creator
    with loopback_client(base_url=typeset.url, timeout=30) as api:
        ids = {}
        for n, (lang, text) in enumerate(MESSAGES.items()):
            ids[lang] = post_from(api, creator.link_id, text, n).json()["data"]["id"]
            post_reply(api, creator, ids[lang], REPLIES[lang])
        receipt = post_from(api, creator.link_id, MESSAGES["ko"], 9, receipt="true")
        send_page = api.get(f"/{creator.link_id}").text
    answers = sorted(set(re.findall(rf'href="(/{creator.link_id}/a/[\w-]+)"', send_page)))
    assert len(answers) == 2, send_page
    receipt_path = "/r/" + receipt.json()["data"]["receipt"]["token"]
    return World(typeset, admin, receipt_path, ids, answers)


# What must stay on one line, in each rendered text node of the page: in Korean each
# word (Intl.Segmenter's: an eojeol without its punctuation); in Japanese each katakana
# word ("ダウンロード", "メッセージ") and each of ``known`` ("受け取る"), and no line
# of a wrapped text holds a single character. A word wider than its block is left out.
# Each finding as "what (the element)"; and every word measured.
BROKEN_WORDS = r"""([lang, known]) => {
  const segmenter = new Intl.Segmenter(lang, {granularity: 'word'});
  const katakana = /[\p{Script=Katakana}ー]{2,}/gu;
  const letter = /[\p{L}\p{N}]/u;
  const japanese = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;
  const blockOf = (el) => {
    while (el.parentElement && getComputedStyle(el).display === 'inline') el = el.parentElement;
    const s = getComputedStyle(el);
    return el.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
  };
  const nameOf = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    (typeof el.className === 'string' && el.className ? '.' + el.className.split(' ')[0] : '');
  const wordsOf = (text) => {
    if (lang === 'ko') {
      return [...segmenter.segment(text)]
        .filter((s) => s.isWordLike && /\p{Script=Hangul}/u.test(s.segment))
        .map((s) => [s.index, s.segment]);
    }
    const found = [...text.matchAll(katakana)].map((m) => [m.index, m[0]]);
    for (const word of known) {
      for (let at = text.indexOf(word); at >= 0; at = text.indexOf(word, at + 1)) {
        found.push([at, word]);
      }
    }
    return found;
  };
  const broken = [];
  const words = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!el || el.closest('script, style, template, textarea, select, .visually-hidden')) continue;
    if (!el.getClientRects().length) continue;  // not rendered
    // Each character's line (0, 1, …) and width; -1 for what takes no room.
    const line = [], width = [];
    let previous = null, n = -1;
    for (let i = 0; i < node.data.length; i++) {
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const rect = range.getBoundingClientRect();
      if (!rect.width) { line.push(-1); width.push(0); continue; }
      if (!previous || rect.top > previous.top + previous.height / 2) n++;
      previous = rect;
      line.push(n);
      width.push(rect.width);
    }
    for (const [index, word] of wordsOf(node.data)) {
      words.push(word);
      const lines = new Set(line.slice(index, index + word.length).filter((l) => l >= 0));
      const wide = width.slice(index, index + word.length).reduce((a, b) => a + b, 0);
      if (lines.size > 1 && wide <= blockOf(el)) broken.push(`${word} (${nameOf(el)})`);
    }
    if (lang === 'ja' && n > 0 && japanese.test(node.data)) {
      for (let l = 0; l <= n; l++) {
        const on = [];
        for (let i = 0; i < node.data.length; i++) {
          if (line[i] === l && letter.test(node.data[i])) on.push(node.data[i]);
        }
        if (on.length === 1) {
          broken.push(`${on[0]} alone on a line of "${node.data.trim()}" (${nameOf(el)})`);
        }
      }
    }
  }
  return {broken, words};
}"""

# The rules turned off, as a constructed style sheet (the pages' CSP refuses a <style>).
TURNED_OFF = """() => {
  const sheet = new CSSStyleSheet();
  sheet.replaceSync('* { word-break: normal !important; }');
  document.adoptedStyleSheets = [sheet];
}"""


@dataclass
class Tour:
    broken: list[str]
    words: dict[str, set[str]]  # script ("ko", "ja") -> the words measured in it


def tour(
    world: World,
    contexts: Callable[[], BrowserContext],
    lang: str,
    screenshot: Screenshot,
    *,
    off: bool,
) -> Tour:
    """Every page of ``world`` in ``lang``, a sender's and the creator's (each in a
    context of ``contexts``), its Korean and its Japanese measured (with the rules turned
    off when ``off``); screenshots of each as ``typeset-<page>-<lang>[-dark].png``."""
    found = Tour([], {"ko": set(), "ja": set()})
    sender = contexts().new_page()
    creator = contexts().new_page()
    creator.goto(off_the_loop(signin_link_command, world.server, world.admin.email))
    creator.wait_for_url("**/dashboard**")
    for name, path in world.pages():
        page: Page = creator if path.startswith("/dashboard") else sender
        answer = page.goto(world.server.url + path)
        assert answer is not None
        assert answer.status == 200, path
        assert page.locator("html").get_attribute("lang") == lang, path
        if off:
            page.evaluate(TURNED_OFF)
        else:  # to look at, in both themes (colours only: the lines are the same)
            screenshot(page, f"typeset-{name}-{lang}")
            page.emulate_media(color_scheme="dark")
            screenshot(page, f"typeset-{name}-{lang}-dark")
            page.emulate_media(color_scheme="light")
        for script in ("ko", "ja"):
            measured = page.evaluate(BROKEN_WORDS, [script, sorted(KNOWN[script])])
            found.broken += [f"{name}: {word}" for word in measured["broken"]]
            found.words[script] |= set(measured["words"])
    return found


def speaking(
    world: World, lang: str, new_context: Callable[..., BrowserContext]
) -> Callable[[], BrowserContext]:
    """The creator speaks ``lang`` from now on; phone-sized browsers that speak it."""
    off_the_loop(
        execute,
        world.server.database_url,
        "UPDATE users SET language = $1 WHERE email = $2",
        lang,
        world.admin.email,
    )
    locale = LOCALES[lang]
    return lambda: new_context(
        viewport=PHONE_360,
        locale=locale,
        extra_http_headers={"Accept-Language": f"{locale},{lang};q=0.9"},
    )


# The words the issue saw broken ("메시/지를", "링/크", "주세/요!", "受け取/る", "ダウンロー/ド"),
# which the pages must show (on buttons, in prompts and in messages) for the test to hold them.
KNOWN = {"ko": {"메시지를", "링크", "주세요"}, "ja": {"受け取る", "ダウンロード"}}


@pytest.mark.parametrize("lang", ["ko", "ja", "en"])
def test_no_line_breaks_inside_a_word(
    lang: str, world: World, new_context: Callable[..., BrowserContext], screenshot: Screenshot
) -> None:
    """The pages in Korean and Japanese, and what senders wrote in either on pages in
    the other or in English (marked with its own language)."""
    found = tour(world, speaking(world, lang, new_context), lang, screenshot, off=False)

    if lang in KNOWN:
        assert KNOWN[lang] <= found.words[lang], f"not seen: {KNOWN[lang] - found.words[lang]}"
    # The messages' words at least, in each script: the measure measured something.
    assert len(found.words["ko"]) > 20
    assert len(found.words["ja"]) > 5
    assert not found.broken, "words broken across lines:\n" + "\n".join(found.broken)


@pytest.mark.parametrize("lang", ["ko", "ja"])
def test_without_the_rules_the_measure_finds_broken_words(
    lang: str, world: World, new_context: Callable[..., BrowserContext], screenshot: Screenshot
) -> None:
    found = tour(world, speaking(world, lang, new_context), lang, screenshot, off=True)

    assert len(found.broken) >= 3, found.broken
