"""Muted words: whole words, whatever their case, accents or width, keep a message out of
the inbox (in the link's filtered folder, or dropped on a link set to drop).

The sender is answered exactly as if the message had been stored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.actions import assert_error, inbox_ids, post_message
from tests.conftest import Creator, make_creator_in
from tests.safety.conftest import (
    ULID,
    assert_created_message,
    assert_same_answer,
    new_sender,
    send,
    utc_instant,
)
from tests.server import Server
from tests.support.http import loopback_client

SOME_ULID = "01jabcdefghjkmnpqrstvwxyz0"
FULL_WIDTH_IDIOT = "\uff49\uff44\uff49\uff4f\uff54"  # "idiot" in full-width letters


def mute(api: httpx.Client, creator: Creator, word: str) -> httpx.Response:
    return api.post("/muted-words", json={"word": word}, headers=creator.headers)


def muted(api: httpx.Client, creator: Creator, word: str) -> dict[str, Any]:
    response = mute(api, creator, word)
    assert response.status_code == 201, response.text
    return dict(response.json()["data"])


def muted_words(api: httpx.Client, creator: Creator) -> list[dict[str, Any]]:
    listed = api.get("/muted-words", headers=creator.headers)
    assert listed.status_code == 200, listed.text
    return list(listed.json()["data"]["items"])


def test_mute_list_and_unmute_a_word(api: httpx.Client, creator: Creator) -> None:
    response = mute(api, creator, "idiot")
    assert response.status_code == 201, response.text
    word = response.json()["data"]
    assert set(word) == {"id", "word", "created_at"}
    assert ULID.match(word["id"])
    assert word["word"] == "idiot"
    utc_instant(word["created_at"])
    assert muted_words(api, creator) == [word]

    unmuted = api.delete(f"/muted-words/{word['id']}", headers=creator.headers)
    assert unmuted.status_code == 200, unmuted.text
    assert unmuted.json()["data"] is None
    assert muted_words(api, creator) == []
    again = api.delete(f"/muted-words/{word['id']}", headers=creator.headers)
    assert_error(again, 404, "not_found")


@pytest.mark.parametrize(
    "text",
    [
        "you IDIOT",
        "ídiot!",
        FULL_WIDTH_IDIOT,
        "Idiot",
        "what an idiot.",
        "idiot, idiot",
    ],
)
def test_a_muted_word_drops_the_message_whatever_its_case_accents_or_width(
    api: httpx.Client, make_creator: Callable[[], Creator], text: str
) -> None:
    creator = make_creator()
    muted(api, creator, "idiot")
    assert_created_message(send(api, creator.link_id, text), text)
    assert inbox_ids(api, creator) == []


@pytest.mark.parametrize("text", ["idiotic", "idiots", "myidiot"])
def test_a_muted_word_inside_a_longer_word_does_not_drop(
    api: httpx.Client, make_creator: Callable[[], Creator], text: str
) -> None:
    creator = make_creator()
    muted(api, creator, "idiot")
    kept = post_message(api, creator.link_id, text)
    assert inbox_ids(api, creator) == [kept]


@pytest.mark.parametrize(
    ("text", "dropped"),
    [
        ("such a Bad   Word", True),
        ("BAD WORD!", True),
        ("bad\nword", True),
        ("a bad, word", False),
        ("bad", False),
        ("word bad", False),
        ("bad words", False),
    ],
)
def test_a_muted_phrase_matches_whole_with_any_spacing(
    api: httpx.Client, make_creator: Callable[[], Creator], text: str, dropped: bool
) -> None:
    creator = make_creator()
    assert muted(api, creator, "bad word")["word"] == "bad word"
    sent = send(api, creator.link_id, text)
    assert_created_message(sent, text)
    expected = [] if dropped else [sent.json()["data"]["id"]]
    assert inbox_ids(api, creator) == expected


def test_a_muted_drop_is_indistinguishable_from_a_stored_message(
    proxied: httpx.Client, new_creator: Callable[[], Creator]
) -> None:
    creator = new_creator()
    drop = proxied.patch(
        f"/links/{creator.link_id}", json={"muted": "drop"}, headers=creator.headers
    )
    assert drop.status_code == 200, drop.text
    muted(proxied, creator, "secret")
    stored = send(proxied, creator.link_id, "tell me a s3cret", new_sender())
    dropped = send(proxied, creator.link_id, "tell me a secret", new_sender())
    assert_same_answer(stored, "tell me a s3cret", dropped, "tell me a secret")
    assert inbox_ids(proxied, creator) == [stored.json()["data"]["id"]]
    lost = f"/message/{creator.link_id}/{dropped.json()['data']['id']}"
    assert_error(proxied.get(lost, headers=creator.headers), 404, "not_found")


def test_unmuting_lets_the_word_through_again(api: httpx.Client, creator: Creator) -> None:
    word = muted(api, creator, "idiot")
    send(api, creator.link_id, "idiot")
    deleted = api.delete(f"/muted-words/{word['id']}", headers=creator.headers)
    assert deleted.status_code == 200, deleted.text
    kept = post_message(api, creator.link_id, "idiot")
    assert inbox_ids(api, creator) == [kept]


def test_muted_words_are_each_creators_own(
    api: httpx.Client, make_creator: Callable[[], Creator]
) -> None:
    creator, other = make_creator(), make_creator()
    word = muted(api, creator, "idiot")
    kept = post_message(api, other.link_id, "idiot")
    assert inbox_ids(api, other) == [kept]
    assert muted_words(api, other) == []
    refused = api.delete(f"/muted-words/{word['id']}", headers=other.headers)
    assert_error(refused, 404, "not_found")
    assert muted_words(api, creator) == [word]


@pytest.mark.parametrize("again", ["idiot", "IDIOT", "  idiot ", "ídiot", FULL_WIDTH_IDIOT])
def test_muting_a_word_twice_is_409(
    api: httpx.Client, make_creator: Callable[[], Creator], again: str
) -> None:
    creator = make_creator()
    first = muted(api, creator, "idiot")
    assert_error(mute(api, creator, again), 409, "conflict")
    assert muted_words(api, creator) == [first]


@pytest.mark.parametrize(
    ("word", "status"),
    [
        pytest.param("", 400, id="empty"),
        pytest.param("x", 201, id="1"),
        pytest.param("x" * 100, 201, id="100"),
        pytest.param("x" * 101, 400, id="101"),
        pytest.param("é" * 100, 201, id="100-non-ascii"),
        pytest.param("   ", 400, id="spaces"),
        pytest.param("\t\n \u3000", 400, id="whitespace"),
        pytest.param("a\x00b", 400, id="nul"),  # was a 500 on PostgreSQL
        pytest.param("a\x7fb", 400, id="control-character"),
    ],
)
def test_a_muted_word_is_1_to_100_characters_not_only_whitespace(
    api: httpx.Client, make_creator: Callable[[], Creator], word: str, status: int
) -> None:
    creator = make_creator()
    response = mute(api, creator, word)
    if status == 400:
        assert_error(response, 400, "validation_failed")
        assert muted_words(api, creator) == []
    else:
        assert response.status_code == 201, response.text
        assert muted_words(api, creator) == [response.json()["data"]]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({}, id="missing"),
        pytest.param({"word": 5}, id="number"),
        pytest.param({"word": None}, id="null"),
        pytest.param({"word": ["idiot"]}, id="list"),
    ],
)
def test_a_muted_word_must_be_a_string(
    api: httpx.Client, creator: Creator, body: dict[str, Any]
) -> None:
    response = api.post("/muted-words", json=body, headers=creator.headers)
    assert_error(response, 400, "validation_failed")


def test_muted_words_need_a_credential(api: httpx.Client, creator: Creator) -> None:
    assert_error(api.post("/muted-words", json={"word": "x"}), 401, "unauthorized")
    assert_error(api.get("/muted-words"), 401, "unauthorized")
    assert_error(api.delete(f"/muted-words/{SOME_ULID}"), 401, "unauthorized")
    assert muted_words(api, creator) == []


def test_unmuting_an_unknown_or_bad_id(api: httpx.Client, creator: Creator) -> None:
    missing = api.delete(f"/muted-words/{SOME_ULID}", headers=creator.headers)
    assert_error(missing, 404, "not_found")
    bad = api.delete("/muted-words/not-a-ulid", headers=creator.headers)
    assert_error(bad, 400, "validation_failed")


# --- a long list: capped, and no slower to match -------------------------------------------

MAX_MUTED_WORDS = 1000


def test_a_creator_may_mute_a_thousand_words_and_a_full_list_still_matches_each(
    api: httpx.Client, creator: Creator
) -> None:
    """Every post used to compile one pattern of all the words: 30,000 of them stalled the
    service. The list is capped, and what a full list matches is unchanged."""
    for n in range(MAX_MUTED_WORDS - 3):
        muted(api, creator, f"filler{n}")
    for word in ("c++", "two  words", "ídiot"):
        muted(api, creator, word)

    refused = mute(api, creator, "one too many")
    assert_error(refused, 409, "too_many_muted_words")
    assert "1000" in refused.json()["message"]
    assert_error(mute(api, creator, "filler7"), 409, "conflict")  # already muted: as before

    kept = post_message(api, creator.link_id, "filler7x and c+ and words two are all fine")
    for text in ("I love C++!", "two words", "you IDIOT", "and filler996 too"):
        post_message(api, creator.link_id, text)
    assert inbox_ids(api, creator) == [kept]

    word_id = next(w["id"] for w in muted_words(api, creator) if w["word"] == "filler0")
    assert api.delete(f"/muted-words/{word_id}", headers=creator.headers).status_code == 200
    assert mute(api, creator, "one more now").status_code == 201


def test_a_word_muted_on_one_instance_is_matched_at_once_on_another(
    redis_pair: tuple[Server, Server],
) -> None:
    first, second = redis_pair  # one database
    creator = make_creator_in(first.database_url)
    with loopback_client(base_url=first.url) as one, loopback_client(base_url=second.url) as two:
        muted(one, creator, "alpha")
        kept = post_message(two, creator.link_id, "gamma is fine")  # two now holds {alpha}
        muted(one, creator, "beta")
        post_message(two, creator.link_id, "beta again")
        assert inbox_ids(two, creator) == [kept]

        [beta] = [w for w in muted_words(one, creator) if w["word"] == "beta"]
        assert one.delete(f"/muted-words/{beta['id']}", headers=creator.headers).status_code == 200
        through = post_message(two, creator.link_id, "beta once more")
        assert inbox_ids(two, creator) == [through, kept]
