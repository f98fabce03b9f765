"""The muted-word matcher on its own (``safety.matching``): what text becomes before it is
compared, and what a list of words finds in it. The HTTP tests (``test_mutes.py``,
``moderation/test_muted_phrases.py``, ``messages/test_filtered.py``) show the same rules
at work on posts, on both databases."""

from __future__ import annotations

import pytest
import regex

from anonbox.safety.matching import DEFAULT_IGNORABLE, NOTHING, Matcher, normalised


def test_the_ignorable_table_is_unicodes_default_ignorable_set() -> None:
    unicode_set = regex.compile(r"\p{Default_Ignorable_Code_Point}")
    listed = {c for first, last in DEFAULT_IGNORABLE for c in range(first, last + 1)}
    assert listed == {c for c in range(0x110000) if unicode_set.match(chr(c))}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("  Hello\n  World ", "hello world"),
        ("ÍDIOT", "idiot"),
        ("\uff49\uff44\uff49\uff4f\uff54", "idiot"),  # full-width
        ("Straße", "strasse"),
        ("ばか", "バカ"),
        ("ﾊﾞｶ", "バカ"),  # half-width, voicing mark apart
        ("は\u3099か", "バカ"),  # decomposed voicing mark
        ("はか", "ハカ"),  # voicing kept: not バカ
        ("ぱ", "パ"),  # semi-voiced kept
        ("ゝゞ", "ヽヾ"),
        ("id\u200b\u200c\u200d\u2060\u00ad\ufeff\u034f\ufe0f\U000e0100\u200e\u202eiot", "idiot"),
        ("spoiler\u2019s", "spoiler's"),
        ("바보", "바보"),
        ("โง่", "โง่"),  # Thai tone mark kept
        ("й", "и"),  # a Cyrillic breve is an accent of the generic block, as before
    ],
)
def test_normalised(text: str, expected: str) -> None:
    assert normalised(text) == expected
    assert normalised(expected) == expected  # normalising twice changes nothing


WORDS = Matcher.of(["ばか", "바보", "idiot", "spoiler", "ass", "bad word", "c++", "box"])


@pytest.mark.parametrize(
    "text",
    [
        "お前はばかだ",
        "お前はバカだ",
        "ﾊﾞｶ",
        "ばかwww",
        "너는 바보야",
        "お前はidiotだ",
        "you idiot!",
        "IDIOTS",
        "idiot's",
        "spoilers",
        "spoilers'",
        "spoiler\u2019s",
        "what an ass",
        "asses",
        "a BAD   word",
        "bad words",
        "I love C++!",
        "c++s",  # an edge that is not a letter or digit has no boundary to keep
        "boxes",
        "id\u200biot",
    ],
)
def test_found(text: str) -> None:
    assert WORDS.found_in(text)


@pytest.mark.parametrize(
    "text",
    [
        "はか",
        "お前ははかだ",
        "class",
        "assassin",
        "passes",
        "idiotic",
        "myidiot",
        "idiot2",
        "spoilery",
        "bad, word",
        "cc++",
        "",
        "   ",
    ],
)
def test_not_found(text: str) -> None:
    assert not WORDS.found_in(text)


def test_joined_lists_each_match_and_empty_words_are_left_out() -> None:
    own, site = Matcher.of(["alpha"]), Matcher.of(["ベータ", "\u200b"])
    both = own.joined(site)
    assert both.size == 2
    assert both.found_in("alpha")
    assert both.found_in("べーた")
    assert not both.found_in("gamma")
    assert not NOTHING
    assert not NOTHING.found_in("anything")
    assert not Matcher.of(["\u200b", "  "])
