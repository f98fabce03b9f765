"""Muted words: whole words (with their plural) in spaced scripts, anywhere in Japanese,
Chinese, Korean or Thai, whatever their case, accents, width, kana or invisible
characters, keep a message out of the inbox (in the link's filtered folder, or dropped
on a link set to drop).

The sender is answered exactly as if the message had been stored.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.actions import assert_error, data_of, inbox_ids, post_message
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
from tests.support.admin import make_account, mute_phrase, unique_phrase, unmute_phrase
from tests.support.http import loopback_client

SOME_ULID = "01jabcdefghjkmnpqrstvwxyz0"
FULL_WIDTH_IDIOT = "\uff49\uff44\uff49\uff4f\uff54"  # "idiot" in full-width letters


def mute(api: httpx.Client, creator: Creator, word: str) -> httpx.Response:
    return api.post("/muted-words", json={"word": word}, headers=creator.headers)


def muted(api: httpx.Client, creator: Creator, word: str) -> dict[str, Any]:
    return dict(data_of(mute(api, creator, word), 201))


def muted_words(api: httpx.Client, creator: Creator) -> list[dict[str, Any]]:
    return list(data_of(api.get("/muted-words", headers=creator.headers))["items"])


@pytest.fixture
def muting(api: httpx.Client, make_creator: Callable[[], Creator]) -> Callable[[str], Creator]:
    """A new creator who has muted ``word`` (and nothing else)."""

    def make(word: str) -> Creator:
        creator = make_creator()
        muted(api, creator, word)
        return creator

    return make


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
        "idiots",
        "two IDIOTS!",
        "the idiot's fault",
    ],
)
def test_a_muted_word_drops_the_message_whatever_its_case_accents_or_width(
    api: httpx.Client, muting: Callable[[str], Creator], text: str
) -> None:
    creator = muting("idiot")
    assert_created_message(send(api, creator.link_id, text), text)
    assert inbox_ids(api, creator) == []


@pytest.mark.parametrize("text", ["idiotic", "idiotsy", "myidiot", "idiot_", "idiot2"])
def test_a_muted_word_inside_a_longer_word_does_not_drop(
    api: httpx.Client, muting: Callable[[str], Creator], text: str
) -> None:
    creator = muting("idiot")
    kept = post_message(api, creator.link_id, text)
    assert inbox_ids(api, creator) == [kept]


# --- every script ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "text"),
    [
        pytest.param("ばか", "お前はばかだ", id="japanese-in-a-sentence"),
        pytest.param("바보", "너는 바보야", id="korean-with-a-particle"),
        pytest.param("ばか", "バカ", id="katakana"),
        pytest.param("ばか", "ﾊﾞｶ", id="half-width-katakana"),
        pytest.param("ばか", "お前はﾊﾞｶだよ", id="half-width-in-a-sentence"),
        pytest.param("ﾊﾞｶ", "お前はばかだ", id="muted-half-width-catches-hiragana"),
        pytest.param("馬鹿", "お前は馬鹿だ", id="han"),
        pytest.param("โง่", "คุณโง่มาก", id="thai"),
        pytest.param("idiot", "お前はidiotだ", id="latin-between-japanese"),
        pytest.param("ばか", "ばかwww", id="japanese-before-latin-laughter"),
        pytest.param("바보", "ㅋㅋ바보ok", id="korean-beside-latin"),
    ],
)
def test_a_muted_word_is_found_in_scripts_written_without_spaces(
    api: httpx.Client, muting: Callable[[str], Creator], word: str, text: str
) -> None:
    """Matching split text on non-word characters: a muted Japanese or Korean word was
    never found inside a sentence, and kana of another kind or width got through."""
    creator = muting(word)
    assert_created_message(send(api, creator.link_id, text), text)
    assert inbox_ids(api, creator) == []


@pytest.mark.parametrize(
    ("word", "text"),
    [
        pytest.param("ばか", "はか", id="unvoiced-kana"),
        pytest.param("ばか", "お前ははかだ", id="unvoiced-in-a-sentence"),
        pytest.param("バカ", "ﾊｶ", id="unvoiced-half-width"),
        pytest.param("바보", "너는 바부야", id="another-hangul-syllable"),
    ],
)
def test_voicing_marks_and_syllables_still_tell_words_apart(
    api: httpx.Client, muting: Callable[[str], Creator], word: str, text: str
) -> None:
    """Folding stripped every combining mark: a muted "ばか" caught the word "はか"."""
    creator = muting(word)
    kept = post_message(api, creator.link_id, text)
    assert inbox_ids(api, creator) == [kept]


def filtered_ids(api: httpx.Client, creator: Creator) -> list[str]:
    listed = api.get(
        f"/message/{creator.link_id}/filtered", params={"limit": 100}, headers=creator.headers
    )
    assert listed.status_code == 200, listed.text
    return [item["id"] for item in listed.json()["data"]["items"]]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("you \u0130D\u0130OT", id="turkish-dotted-capital-i"),
        pytest.param("you \u0131d\u0131ot", id="turkish-dotless-i"),
        pytest.param("you i\u0301d\u0308iot", id="combining-marks"),
        pytest.param("you I\u0301\u0302D\u0308\u0324IOT!", id="stacked-marks-in-capitals"),
        pytest.param("you \u00edd\u0308iot", id="mark-after-a-precomposed-letter"),
    ],
)
def test_marks_and_turkish_i_do_not_hide_a_muted_word(
    api: httpx.Client, muting: Callable[[str], Creator], text: str
) -> None:
    """ "İDİOT" and "i\u0301d\u0308iot" passed a muted "idiot" while "ídiot" was caught."""
    creator = muting("idiot")
    harmless = post_message(api, creator.link_id, "you are kind")
    caught = send(api, creator.link_id, text)
    assert_created_message(caught, unicodedata.normalize("NFC", text))  # stored as NFC
    assert inbox_ids(api, creator) == [harmless]
    assert filtered_ids(api, creator) == [caught.json()["data"]["id"]]


def test_a_word_muted_with_marks_catches_the_bare_word(
    api: httpx.Client, make_creator: Callable[[], Creator]
) -> None:
    """The creator's word is folded as the text is: muted as typed with marks, it catches
    the plain word, and muting the plain word then is a duplicate."""
    creator = make_creator()
    assert muted(api, creator, "\u0130D\u0130OT")["word"] == "\u0130D\u0130OT"  # shown as typed
    assert_error(mute(api, creator, "i\u0301d\u0308iot"), 409, "conflict")
    caught = send(api, creator.link_id, "what an idiot")
    assert inbox_ids(api, creator) == []
    assert filtered_ids(api, creator) == [caught.json()["data"]["id"]]


@pytest.mark.parametrize(
    "word",
    [
        pytest.param("\u0301", id="a-mark"),
        pytest.param("\u0301\u0308 \u0323", id="marks-and-a-space"),
        pytest.param("\u00b4", id="acute-accent-a-space-and-a-mark-in-nfkc"),
        pytest.param("\u309b", id="spacing-voicing-mark"),
        pytest.param("\u200b\u0e48", id="invisible-then-thai-tone-mark"),
    ],
)
def test_a_word_of_marks_on_no_letter_is_blank_as_the_document_says(
    api: httpx.Client, creator: Creator, word: str
) -> None:
    """Marks on no letter are folded away, so a word of them alone would match nothing:
    refused as blank, and the API document's pattern refuses it too."""
    document = api.get("/openapi.json")
    assert document.status_code == 200, document.text
    schema = document.json()["components"]["schemas"]
    [pattern] = {
        prop["word"]["pattern"]
        for component in schema.values()
        if (prop := component.get("properties", {})).get("word", {}).get("pattern")
    }
    assert re.search(pattern, word) is None
    body = assert_error(mute(api, creator, word), 400, "validation_failed")
    assert body["error"]["fields"] == [{"field": "word", "problem": "blank"}]
    assert muted_words(api, creator) == []
    assert re.search(pattern, f"a{word}")
    assert muted(api, creator, f"a{word}")["word"] == " ".join(f"a{word}".split())


def test_a_site_phrase_folds_marks_as_a_creators_word_does(
    api: httpx.Client, server: Server, make_creator: Callable[[], Creator]
) -> None:
    """The site's phrases go through the same folding, as typed by the admin and as sent."""
    admin, creator = make_account(server.database_url, admin=True), make_creator()
    label = unique_phrase()
    added = mute_phrase(api, admin, f"{label} i\u0301d\u0308iot")
    try:
        harmless = post_message(api, creator.link_id, f"{label} idiotic")
        caught = [
            send(api, creator.link_id, f"{label.upper()} \u0130D\u0130OT").json()["data"]["id"],
            send(api, creator.link_id, f"{label} \u0131diots").json()["data"]["id"],
        ]
        assert inbox_ids(api, creator) == [harmless]
        assert sorted(filtered_ids(api, creator)) == sorted(caught)
    finally:
        unmute_phrase(api, admin, added["id"])


@pytest.mark.parametrize(
    ("word", "text"),
    [
        pytest.param("\u3070\u304b", "\u306f\u304b", id="voiced-precomposed"),
        pytest.param("\u306f\u3099\u304b", "\u306f\u304b", id="voiced-combining"),
        pytest.param("\u3070\u304b", "\u306f\u309a\u304b", id="semi-voiced-is-another"),
        pytest.param("\u0e44\u0e01\u0e48", "\u0e44\u0e01", id="thai-tone-mark"),
        pytest.param("\u0915\u0947\u0932\u093e", "\u0915\u0932", id="devanagari-matras"),
    ],
)
def test_marks_of_other_scripts_still_tell_words_apart(
    api: httpx.Client, muting: Callable[[str], Creator], word: str, text: str
) -> None:
    creator = muting(word)
    kept = post_message(api, creator.link_id, text)
    assert inbox_ids(api, creator) == [kept]
    assert filtered_ids(api, creator) == []
    caught = send(api, creator.link_id, word)
    assert filtered_ids(api, creator) == [caught.json()["data"]["id"]]


INVISIBLE = {
    "zero-width space": "\u200b",
    "zero-width non-joiner": "\u200c",
    "zero-width joiner": "\u200d",
    "word joiner": "\u2060",
    "soft hyphen": "\u00ad",
    "byte order mark": "\ufeff",
    "combining grapheme joiner": "\u034f",
    "variation selector 16": "\ufe0f",
    "variation selector 17": "\U000e0100",
    "left-to-right mark": "\u200e",
    "right-to-left mark": "\u200f",
    "arabic letter mark": "\u061c",
    "right-to-left override": "\u202e",
    "left-to-right isolate": "\u2066",
    "tag space": "\U000e0020",
}


def test_invisible_characters_inside_a_word_do_not_hide_it(
    api: httpx.Client, creator: Creator
) -> None:
    """ "id\u200biot" looks like "idiot" and got through."""
    muted(api, creator, "idiot")
    muted(api, creator, "ばか")
    for name, invisible in INVISIBLE.items():
        for text in (f"you id{invisible}iot", f"お前はば{invisible}かだ", f"{invisible}idiot"):
            assert_created_message(send(api, creator.link_id, text), text)
            assert inbox_ids(api, creator) == [], f"{name} in {text!r}"


def test_a_word_with_invisible_characters_is_muted_as_the_word_itself(
    api: httpx.Client, creator: Creator
) -> None:
    first = muted(api, creator, "sp\u200boiler")
    assert first["word"] == "sp\u200boiler"  # shown as typed
    assert_error(mute(api, creator, "spoiler"), 409, "conflict")
    assert_error(mute(api, creator, "\u200b\u2060"), 400, "validation_failed")
    send(api, creator.link_id, "no spoilers please")
    assert inbox_ids(api, creator) == []


@pytest.mark.parametrize(
    ("word", "text", "dropped"),
    [
        pytest.param("spoiler", "no spoilers!", True, id="plural"),
        pytest.param("spoiler", "the spoiler's end", True, id="possessive"),
        pytest.param("spoiler", "the spoiler\u2019s end", True, id="curly-possessive"),
        pytest.param("spoiler", "the spoilers' end", True, id="plural-possessive"),
        pytest.param("spoiler", "SPOILERS", True, id="upper-case-plural"),
        pytest.param("box", "two boxes", True, id="es-plural"),
        pytest.param("spoiler", "spoilery", False, id="longer-word"),
        pytest.param("spoiler", "unspoiler", False, id="prefixed"),
        pytest.param("ass", "a class of its own", False, id="inside-another-word"),
        pytest.param("ass", "assassin", False, id="start-of-another-word"),
        pytest.param("ass", "you ass", True, id="the-word"),
        pytest.param("ass", "asses", True, id="its-plural"),
    ],
)
def test_a_word_catches_its_plural_and_possessive_but_not_the_inside_of_another(
    api: httpx.Client, muting: Callable[[str], Creator], word: str, text: str, dropped: bool
) -> None:
    creator = muting(word)
    sent = send(api, creator.link_id, text)
    assert_created_message(sent, text)
    expected = [] if dropped else [sent.json()["data"]["id"]]
    assert inbox_ids(api, creator) == expected


@pytest.mark.parametrize(
    ("text", "dropped"),
    [
        ("such a Bad   Word", True),
        ("BAD WORD!", True),
        ("bad\nword", True),
        ("a bad, word", False),
        ("bad", False),
        ("word bad", False),
        ("bad words", True),
        ("bad wordy", False),
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
