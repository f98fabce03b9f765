"""What a person wrote, read in its own direction, and the pages' small texts of issue 31
(items 4 and 5): over HTTP as a browser gets the pages, on SQLite and PostgreSQL.

Every place a message, a reply, a prompt or a reason appears carries ``dir="auto"``
(an Arabic message reads right to left inside an English page); the tab title counts
unread messages; a timed pause says until when; prompt presets work without JavaScript.
"""

from __future__ import annotations

import html
import re
import uuid

import httpx

from tests.actions import post_message, post_reply
from tests.conftest import Creator
from tests.server import Server
from tests.support.admin import make_account
from tests.support.forms import csrf_of
from tests.support.signin import signed_in, signed_in_browser

ARABIC = "مرحبا، هل تحب القهوة؟"  # "Hello, do you like coffee?"


def shown_in_own_direction(page: str, text: str) -> int:
    """How many times ``text`` is shown as text; asserts each is in an element with
    ``dir="auto"`` (the element that directly holds it). Attribute values (a preview's
    description, a label) are not shown text and are skipped."""
    escaped = html.escape(text, quote=False)
    shown = 0
    for found in re.finditer(re.escape(escaped), page):
        before = page[: found.start()]
        if before.rfind("<") > before.rfind(">"):  # inside a tag: an attribute's value
            continue
        opening = before[before.rfind("<") :]
        assert 'dir="auto"' in opening, f"{opening!r} holds {text!r} without dir=auto"
        shown += 1
    return shown


def marked(word: str) -> str:
    return f"{ARABIC} {word}"


def test_person_written_text_has_dir_auto_on_every_page_family(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    tag = uuid.uuid4().hex[:8]
    prompt, message, reply = marked(f"p{tag}"), marked(f"m{tag}"), marked(f"r{tag}")
    changed = api.patch(
        f"/links/{creator.link_id}", json={"prompt": prompt}, headers=creator.headers
    )
    assert changed.status_code == 200, changed.text
    sent = api.post(
        f"/message/{creator.link_id}?receipt=true", json={"message_content": message}
    ).json()["data"]
    post_reply(api, creator, sent["id"], reply)
    muted_word = f"mute{tag}"
    muted = api.post("/muted-words", json={"word": muted_word}, headers=creator.headers)
    assert muted.status_code == 201, muted.text
    filtered_text = marked(muted_word)
    post_message(api, creator.link_id, filtered_text)
    reported = api.post(
        f"/message/{creator.link_id}/{sent['id']}/report", json={"reason": marked(f"why{tag}")}
    )
    assert reported.status_code == 201, reported.text

    public = api.get(f"/{creator.link_id}").text  # the send page, with its answers
    assert shown_in_own_direction(public, prompt) == 1
    assert shown_in_own_direction(public, message) == 1
    assert shown_in_own_direction(public, reply) == 1
    receipt = api.get(sent["receipt"]["url"].removeprefix(server.url)).text
    assert shown_in_own_direction(receipt, message) == 1
    assert shown_in_own_direction(receipt, reply) == 1

    base = f"/dashboard/links/{creator.link_id}"
    with signed_in(server, creator.user_id) as browser:
        inbox = browser.get(base).text
        assert shown_in_own_direction(inbox, message) == 1
        assert shown_in_own_direction(inbox, prompt) >= 1  # the heading
        settings = browser.get(f"{base}/settings").text
        assert shown_in_own_direction(settings, prompt) >= 1  # the heading and the field
        opened = browser.get(f"{base}/messages/{sent['id']}").text
        assert shown_in_own_direction(opened, message) == 1
        assert shown_in_own_direction(opened, reply) == 1
        assert shown_in_own_direction(opened, prompt) == 1  # beside "← Inbox"
        search = browser.get(f"{base}/search", params={"q": f"m{tag}"}).text
        assert shown_in_own_direction(search, message) == 1
        assert shown_in_own_direction(search, prompt) == 1
        filtered = browser.get(f"{base}/filtered").text
        assert shown_in_own_direction(filtered, filtered_text) == 1
        assert shown_in_own_direction(filtered, prompt) == 1
        links_page = browser.get("/dashboard/links").text
        assert shown_in_own_direction(links_page, prompt) == 1

    admin = make_account(server.database_url, admin=True)
    moderator = signed_in_browser(server, admin.email)
    try:
        queue = moderator.get("/admin").text
    finally:
        moderator.close()
    assert shown_in_own_direction(queue, message) == 1  # the report's excerpt
    assert shown_in_own_direction(queue, reply) == 1
    assert shown_in_own_direction(queue, marked(f"why{tag}")) == 1


def test_the_tab_title_counts_unread_messages(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    with signed_in(server, creator.user_id) as browser:
        assert "<title>Inbox · anonbox</title>" in browser.get("/dashboard").text
        for n in range(3):
            post_message(api, creator.link_id, f"unread {n}")
        shown = browser.get("/dashboard").text
        assert "<title>(3) Inbox · anonbox</title>" in shown
        # Shown is not read (issue 41): marked read, the next visit's title has nothing new.
        newest = re.search(r'name="up_to" value="(\w+)"', shown)
        assert newest
        read = f"/dashboard/links/{creator.link_id}/read"
        browser.post(read, data={"csrf_token": csrf_of(shown), "up_to": newest.group(1)})
        assert "<title>Inbox · anonbox</title>" in browser.get("/dashboard").text
        post_message(api, creator.link_id, "one more")
        japanese = browser.get("/dashboard", headers={"Accept-Language": "ja"})
        assert "<title>(1) " in japanese.text


def test_a_timed_pause_says_until_when_and_an_open_one_says_no_date(
    api: httpx.Client, creator: Creator
) -> None:
    link = f"/links/{creator.link_id}"
    timed = api.patch(link, json={"pause_for_hours": 24}, headers=creator.headers)
    assert timed.status_code == 200, timed.text
    until = timed.json()["data"]["paused_until"]

    page = api.get(f"/{creator.link_id}", headers={"Accept-Language": "ja"})
    paused = re.search(r'<p class="notice paused" id="paused">(.*?)</p>', page.text, re.S)
    assert paused, page.text
    assert f'<time datetime="{until}">' in paused.group(1)
    assert "までメッセージを受け付けていません" in paused.group(1)
    assert "1日後" in paused.group(1) or "24 時間後" in paused.group(1), paused.group(1)
    english = api.get(f"/{creator.link_id}", headers={"Accept-Language": "en"}).text
    assert "is not accepting messages until <time" in english

    open_ended = api.patch(link, json={"paused": True}, headers=creator.headers)
    assert open_ended.status_code == 200
    page = api.get(f"/{creator.link_id}")
    assert "is not accepting messages right now." in page.text
    assert "until" not in re.sub(r"\s+", " ", page.text.split('id="paused"')[1].split("</p>")[0])


def test_a_preset_picked_without_javascript_becomes_the_prompt_in_the_creators_language(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    with signed_in(server, creator.user_id) as browser:
        base = f"/dashboard/links/{creator.link_id}"
        # Asked in Japanese, the account's language.
        page = browser.get(f"{base}/settings", headers={"Accept-Language": "ja"}).text
        assert '<select id="prompt-preset" name="preset"' in page
        assert "なんでも聞いてください\uff01" in page

        def save(preset: str) -> httpx.Response:
            return browser.post(
                f"{base}/settings",
                data={"csrf_token": csrf_of(page), "prompt": "typed", "preset": preset},
            )

        assert save("anything").status_code == 303
        public = api.get(f"/links/{creator.link_id}/public").json()["data"]
        assert public["prompt"] == "なんでも聞いてください\uff01"
        assert save("").status_code == 303  # own words: the field
        assert api.get(f"/links/{creator.link_id}/public").json()["data"]["prompt"] == "typed"
        refused = save("not-a-preset")
        assert refused.status_code == 400
        assert api.get(f"/links/{creator.link_id}/public").json()["data"]["prompt"] == "typed"

        created = browser.post(
            "/dashboard/links",
            data={"csrf_token": csrf_of(page), "prompt": "", "preset": "secret"},
        )
        assert created.status_code == 303, created.text
        new_id = created.headers["location"].rsplit("/", 1)[1]
        made = api.get(f"/links/{new_id}/public").json()["data"]["prompt"]
        assert made == "秘密を教えて。あなただとは絶対にわかりません。"


def test_a_message_over_the_limit_without_javascript_is_explained(
    api: httpx.Client, creator: Creator
) -> None:
    api.get(f"/{creator.link_id}", headers={"Accept-Language": "es"})  # opened first
    sent = api.post(
        f"/{creator.link_id}",
        data={"message_content": "a" * 503},  # the same page for all: no token
        headers={"Accept-Language": "es"},
    )
    assert sent.status_code == 400
    note = re.search(r'<p id="limit-note"[^>]*>(.*?)</p>', sent.text, re.S)
    assert note, sent.text
    assert "500" in note.group(1)
    assert "503" in note.group(1)
    assert "Acórtalo" in html.unescape(note.group(1))


def test_after_sending_without_javascript_the_sender_is_offered_a_link_of_their_own(
    api: httpx.Client, creator: Creator
) -> None:
    page = api.get(f"/{creator.link_id}", headers={"Accept-Language": "ko"})
    assert re.search(r'<p id="own-link" class="notice own-link" hidden>', page.text)
    sent = api.post(
        f"/{creator.link_id}",
        data={"message_content": "안녕하세요"},
        headers={"Accept-Language": "ko"},
        follow_redirects=True,
    )
    assert sent.status_code == 200
    offer = re.search(r'<p id="own-link" class="notice own-link">(.*?)</p>', sent.text, re.S)
    assert offer, sent.text
    assert '<a href="/" id="get-own-link">내 링크 만들기</a>' in offer.group(1)
