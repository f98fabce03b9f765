"""The site's muted phrases: an admin mutes a phrase and it acts on every link exactly as a
creator's muted word acts on theirs. The sender's answer is that of a stored message, to
the byte once the values any two messages differ in are set aside.

A phrase here applies to every link of the shared server, so each test mutes phrases no
other test sends (``unique_phrase``) and removes them when it is done.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from anonbox.core.clock import now_us
from anonbox.core.database import connect
from anonbox.core.ids import new_ulid
from tests.actions import assert_error, inbox_ids, post_message
from tests.conftest import Creator, make_creator_in
from tests.safety.conftest import assert_created_message, assert_same_answer
from tests.server import Server
from tests.support.admin import (
    Admin,
    make_account,
    mute_phrase,
    muted_phrases,
    unique_phrase,
    unmute_phrase,
)
from tests.support.http import loopback_client
from tests.support.metrics import scrape, value

ULID = re.compile(r"^[0-9a-hjkmnp-tv-z]{26}$")
UNKNOWN_ULID = "01jabcdefghjkmnpqrstvwxyz0"
# Letters and digits in their full-width forms, which NFKC folds back.
FULL_WIDTH = {ord(c): ord(c) - ord("a") + 0xFF41 for c in "abcdefghijklmnopqrstuvwxyz"} | {
    ord(c): ord(c) - ord("0") + 0xFF10 for c in "0123456789"
}


@pytest.fixture(scope="module")
def site_admin(server: Server) -> Admin:
    return make_account(server.database_url, admin=True)


@pytest.fixture
def phrase(api: httpx.Client, site_admin: Admin) -> Iterator[tuple[str, dict[str, Any]]]:
    """A two-word phrase muted on every link for the test, removed after it."""
    text = f"{unique_phrase('bad')} word"
    added = mute_phrase(api, site_admin, text)
    yield text, added
    api.delete(f"/admin/muted-phrases/{added['id']}", headers=site_admin.headers)


def send(api: httpx.Client, link_id: str, text: str) -> httpx.Response:
    return api.post(f"/message/{link_id}", json={"message_content": text})


# --- the list ------------------------------------------------------------------------------


def test_an_admin_mutes_lists_and_unmutes_a_phrase(api: httpx.Client, site_admin: Admin) -> None:
    text = unique_phrase()
    added = api.post(
        "/admin/muted-phrases", json={"phrase": f"  {text}  "}, headers=site_admin.headers
    )
    assert added.status_code == 201, added.text
    data = added.json()["data"]
    assert set(data) == {"id", "phrase", "created_at"}
    assert ULID.match(data["id"])
    assert data["phrase"] == text
    assert data["created_at"].endswith("Z")
    assert data in muted_phrases(api, site_admin)

    removed = api.delete(f"/admin/muted-phrases/{data['id']}", headers=site_admin.headers)
    assert removed.status_code == 200, removed.text
    assert removed.json()["data"] is None
    assert data not in muted_phrases(api, site_admin)
    again = api.delete(f"/admin/muted-phrases/{data['id']}", headers=site_admin.headers)
    assert_error(again, 404, "not_found")
    unknown = api.delete(f"/admin/muted-phrases/{UNKNOWN_ULID}", headers=site_admin.headers)
    assert_error(unknown, 404, "not_found")
    assert_error(api.delete("/admin/muted-phrases/nope", headers=site_admin.headers), 400)


# --- on every link ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "dropped"),
    [
        pytest.param(lambda p: f"such a {p}!", True, id="inside"),
        pytest.param(lambda p: p.upper(), True, id="upper-case"),
        pytest.param(lambda p: p.replace(" ", " \n  "), True, id="any-spacing"),
        pytest.param(lambda p: p.translate(FULL_WIDTH), True, id="full-width"),
        pytest.param(lambda p: p.replace("word", "wörd"), True, id="accent"),
        pytest.param(lambda p: p + "s", True, id="plural"),
        pytest.param(lambda p: p + "y", False, id="longer-word"),
        pytest.param(lambda p: p.replace(" ", ", "), False, id="split"),
        pytest.param(lambda p: p.split()[0], False, id="half"),
    ],
)
def test_a_muted_phrase_drops_matching_posts_on_every_link(
    api: httpx.Client,
    make_creator: Callable[[], Creator],
    phrase: tuple[str, dict[str, Any]],
    shape: Callable[[str], str],
    dropped: bool,
) -> None:
    text = shape(phrase[0])
    for creator in (make_creator(), make_creator()):
        sent = send(api, creator.link_id, text)
        assert_created_message(sent, text)
        expected = [] if dropped else [sent.json()["data"]["id"]]
        assert inbox_ids(api, creator) == expected, text


def unique_kana() -> str:
    """A hiragana word no other test sends, starting with a voiced kana."""
    return "ば" + "".join(chr(0x3042 + 2 * int(c, 16)) for c in uuid.uuid4().hex[:10])


def test_a_japanese_phrase_is_muted_inside_sentences_in_either_kana_on_every_link(
    api: httpx.Client, make_creator: Callable[[], Creator], site_admin: Admin
) -> None:
    """A site phrase is matched as a creator's word is: anywhere in a Japanese sentence,
    hiragana and katakana alike, voicing marks kept."""
    hiragana = unique_kana()
    katakana = hiragana.translate({c: c + 0x60 for c in range(0x3041, 0x3097)})
    unvoiced = "は" + hiragana[1:]
    added = mute_phrase(api, site_admin, hiragana)
    try:
        for creator in (make_creator(), make_creator()):
            for text in (f"お前は{hiragana}だ", f"お前は{katakana}だよ"):
                assert_created_message(send(api, creator.link_id, text), text)
            kept = post_message(api, creator.link_id, f"お前は{unvoiced}だ")
            assert inbox_ids(api, creator) == [kept]
    finally:
        unmute_phrase(api, site_admin, added["id"])


def test_the_sender_gets_the_answer_of_a_stored_message_to_the_byte(
    api: httpx.Client, creator: Creator, phrase: tuple[str, dict[str, Any]]
) -> None:
    muted_text = f"hello {phrase[0]}"
    stored_text = "hello " + "x" * len(phrase[0])  # the same length: the same bytes
    stored = send(api, creator.link_id, stored_text)
    muted = send(api, creator.link_id, muted_text)

    assert_same_answer(stored, stored_text, muted, muted_text)
    assert masked(stored, stored_text) == masked(muted, muted_text)
    volatile = {"date", "x-request-id", "content-length"}
    assert [(k, v) for k, v in stored.headers.items() if k not in volatile] == [
        (k, v) for k, v in muted.headers.items() if k not in volatile
    ]
    assert inbox_ids(api, creator) == [stored.json()["data"]["id"]]
    lost = f"/message/{creator.link_id}/{muted.json()['data']['id']}"
    assert_error(api.get(lost, headers=creator.headers), 404, "not_found")


def masked(response: httpx.Response, text: str) -> bytes:
    """The body with what differs between any two messages (id, times, the text) blanked."""
    body = response.content.decode()
    assert body.count(json.dumps(text)[1:-1]) == 1, body
    body = body.replace(json.dumps(text)[1:-1], "TEXT")
    body = re.sub(r'"id":"[0-9a-z]{26}"', '"id":"ID"', body)
    body = re.sub(r'"(created_at|timestamp)":"[^"]+"', r'"\1":"TIME"', body)
    body = re.sub(r'"execution_time_ms":[0-9.e+-]+', '"execution_time_ms":0', body)
    return body.encode()


def test_a_muted_phrase_and_a_creators_own_muted_words_both_apply(
    api: httpx.Client, site_admin: Admin, creator: Creator
) -> None:
    own = unique_phrase("own")
    muted = api.post("/muted-words", json={"word": own}, headers=creator.headers)
    assert muted.status_code == 201, muted.text
    site = mute_phrase(api, site_admin, unique_phrase("site"))
    try:
        send(api, creator.link_id, f"a {own}")
        send(api, creator.link_id, f"a {site['phrase']}")
        assert inbox_ids(api, creator) == []
        # Removing the site's phrase leaves the creator's word alone, and the other way round.
        unmute_phrase(api, site_admin, site["id"])
        let_through = post_message(api, creator.link_id, f"a {site['phrase']}")
        send(api, creator.link_id, f"a {own}")
        assert inbox_ids(api, creator) == [let_through]
    finally:
        api.delete(f"/admin/muted-phrases/{site['id']}", headers=site_admin.headers)


def test_unmuting_lets_the_phrase_through_again_and_a_swap_is_seen_at_once(
    api: httpx.Client, site_admin: Admin, creator: Creator
) -> None:
    first = mute_phrase(api, site_admin, unique_phrase())
    send(api, creator.link_id, first["phrase"])
    assert inbox_ids(api, creator) == []
    # One phrase out, another in: the list is as long as before, and still seen as new.
    unmute_phrase(api, site_admin, first["id"])
    second = mute_phrase(api, site_admin, unique_phrase())
    try:
        kept = post_message(api, creator.link_id, first["phrase"])
        send(api, creator.link_id, second["phrase"])
        assert inbox_ids(api, creator) == [kept]
    finally:
        unmute_phrase(api, site_admin, second["id"])
    kept_too = post_message(api, creator.link_id, second["phrase"])
    assert inbox_ids(api, creator) == [kept_too, kept]


# --- bounds, as for a creator's muted words ------------------------------------------------


@pytest.mark.parametrize(
    ("text", "status"),
    [
        pytest.param("", 400, id="empty"),
        pytest.param("\ua66e", 201, id="1"),  # a letter no test sends
        pytest.param("q" * 100, 201, id="100"),
        pytest.param("q" * 101, 400, id="101"),
        pytest.param("\u00e9" * 99 + "q", 201, id="100-non-ascii"),
        pytest.param("   ", 400, id="spaces"),
        pytest.param("\t\n \u3000", 400, id="whitespace"),
        pytest.param("a\x00b", 400, id="nul"),
        pytest.param("a\x7fb", 400, id="control-character"),
        pytest.param("\ufdfa" * 100, 400, id="spelled-out-too-long"),
    ],
)
def test_a_muted_phrase_is_1_to_100_characters_not_only_whitespace(
    api: httpx.Client, site_admin: Admin, text: str, status: int
) -> None:
    before = muted_phrases(api, site_admin)
    response = api.post("/admin/muted-phrases", json={"phrase": text}, headers=site_admin.headers)
    if status == 400:
        assert_error(response, 400, "validation_failed")
        assert muted_phrases(api, site_admin) == before
        return
    assert response.status_code == 201, response.text
    unmute_phrase(api, site_admin, response.json()["data"]["id"])


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({}, id="missing"),
        pytest.param({"phrase": 5}, id="number"),
        pytest.param({"phrase": None}, id="null"),
        pytest.param({"phrase": ["x"]}, id="list"),
    ],
)
def test_a_muted_phrase_must_be_a_string(
    api: httpx.Client, site_admin: Admin, body: dict[str, Any]
) -> None:
    refused = api.post("/admin/muted-phrases", json=body, headers=site_admin.headers)
    assert_error(refused, 400)


@pytest.mark.parametrize("again", ["UPPER", "spaced", "full-width", "accented"])
def test_muting_a_phrase_twice_is_409(api: httpx.Client, site_admin: Admin, again: str) -> None:
    text = f"{unique_phrase('twice')} word"
    first = mute_phrase(api, site_admin, text)
    try:
        variant = {
            "UPPER": text.upper(),
            "spaced": text.replace(" ", "   ") + " ",
            "full-width": text.translate(FULL_WIDTH),
            "accented": text.replace("word", "wórd"),
        }[again]
        refused = api.post(
            "/admin/muted-phrases", json={"phrase": variant}, headers=site_admin.headers
        )
        assert_error(refused, 409, "conflict")
        assert [p for p in muted_phrases(api, site_admin) if p["id"] == first["id"]] == [first]
    finally:
        unmute_phrase(api, site_admin, first["id"])


# --- on a server of its own ------------------------------------------------------------------


def fill_phrases(database_url: str, count: int) -> None:
    async def run() -> None:
        db = await connect(database_url)
        try:
            for n in range(count):
                now = now_us()
                await db.execute(
                    "INSERT INTO muted_phrases (id, phrase, normalized, created_at)"
                    " VALUES ($1, $2, $2, $3)",
                    new_ulid(now),
                    f"filler{n}",
                    now,
                )
        finally:
            await db.close()

    asyncio.run(run())


@pytest.mark.slow
def test_the_site_mutes_at_most_1000_phrases(lone_server: Server) -> None:
    admin = make_account(lone_server.database_url, admin=True)
    fill_phrases(lone_server.database_url, 999)
    with loopback_client(base_url=lone_server.url, timeout=30) as api:
        last = mute_phrase(api, admin, "the thousandth")
        refused = api.post(
            "/admin/muted-phrases", json={"phrase": "one more"}, headers=admin.headers
        )
        assert_error(refused, 409, "too_many_muted_phrases")
        assert len(muted_phrases(api, admin)) == 1000
        unmute_phrase(api, admin, last["id"])
        mute_phrase(api, admin, "one more")


def queries(api: httpx.Client) -> float:
    return value(scrape(api), "anonbox_db_queries")


@pytest.mark.slow
def test_a_post_makes_no_more_queries_with_site_phrases_than_without(
    lone_server: Server,
) -> None:
    """The site's list is checked in the query that checks the creator's, never its own."""
    admin = make_account(lone_server.database_url, admin=True)
    creator = make_creator_in(lone_server.database_url)
    posts = 100

    def measured(api: httpx.Client) -> float:
        post_message(api, creator.link_id, "warm-up")  # loads a changed list, once
        before = queries(api)
        for n in range(posts):
            # With the creator's muted word: it goes to the filtered folder, so it makes no
            # event, and the outbox relay (whose reads the counter counts too) has nothing
            # to hand over. The lists are looked up as for any post.
            post_message(api, creator.link_id, f"my own message {n}")
        return queries(api) - before

    with loopback_client(base_url=lone_server.url, timeout=30) as api:
        assert api.post("/muted-words", json={"word": "own"}, headers=creator.headers).is_success
        # The fewest of three runs: the counter also counts the service's background reads
        # (the outbox relay's, whose number depends on how posts fall into its batches, and
        # its polls while a busy machine makes the posts slow), which only ever add.
        without = min(measured(api) for _ in range(3))
        mute_phrase(api, admin, unique_phrase())
        with_phrases = min(measured(api) for _ in range(3))
    # One query more per post would be 100. The relay's reads vary from run to run (12 of
    # 190 seen on a busy machine, 56 of 591 once): half a query per post of slack.
    assert with_phrases - without < posts / 2, (without, with_phrases)


@pytest.mark.slow
def test_another_instance_sees_a_new_or_removed_phrase_at_once(
    lone_server: Server, tmp_path: Path
) -> None:
    """Two instances on one database: the one the admin did not talk to matches the new
    list on its very next post, whatever it had cached."""
    second = Server(lone_server.database_url, tmp_path / "second.log").start()
    try:
        admin = make_account(lone_server.database_url, admin=True)
        creator = make_creator_in(lone_server.database_url)
        text = unique_phrase()
        with (
            loopback_client(base_url=lone_server.url, timeout=30) as first_api,
            loopback_client(base_url=second.url, timeout=30) as second_api,
        ):
            mute_phrase(first_api, admin, unique_phrase())  # the second caches a list of one
            # (Without the phrase: muted later, it would move to the filtered folder.)
            landed = post_message(second_api, creator.link_id, "one, before the phrase")
            added = mute_phrase(first_api, admin, text)
            post_message(second_api, creator.link_id, f"{text} two")
            assert inbox_ids(second_api, creator) == [landed]
            unmute_phrase(first_api, admin, added["id"])
            again = post_message(second_api, creator.link_id, f"{text} three")
            assert inbox_ids(second_api, creator) == [again, landed]
    finally:
        second.stop()
