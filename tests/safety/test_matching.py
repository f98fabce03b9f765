"""The muted-word matcher on its own (``safety.matching``): what text becomes before it is
compared, and what a list of words finds in it. The HTTP tests (``test_mutes.py``,
``moderation/test_muted_phrases.py``, ``messages/test_filtered.py``) show the same rules
at work on posts, on both databases."""

from __future__ import annotations

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from anonbox.safety.matching import DEFAULT_IGNORABLE, NOTHING, Matcher, normalised, vanishing

EVERY_CHARACTER = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
FOLDED_SCRIPTS = r"[\p{sc=Latin}\p{sc=Greek}\p{sc=Cyrillic}]"


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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # combining marks on Latin letters, one or stacked, with or without a precomposed
        # form, on a precomposed letter, in capitals, in full width
        pytest.param("i\u0301d\u0308iot", "idiot", id="combining"),
        pytest.param("I\u0301D\u0308IOT", "idiot", id="combining-capitals"),
        pytest.param("i\u0301\u0302\u0303\u0323d\u0308\u0324iot", "idiot", id="stacked"),
        pytest.param("\u00edd\u0308\u0301iot", "idiot", id="marks-after-a-precomposed-letter"),
        pytest.param("\u01d6\u0301", "u", id="precomposed-with-two-marks-and-one-more"),
        pytest.param("\uff49\u0301\uff44\uff49\uff4f\uff54", "idiot", id="full-width-combining"),
        pytest.param("i\u1ab0d\u1dc0i\u20ddo\ufe20t", "idiot", id="marks-of-other-blocks"),
        pytest.param("i\u0345diot", "idiot", id="ypogegrammeni-on-latin-not-an-iota"),
        pytest.param("i\u3099diot", "idiot", id="kana-voicing-on-a-latin-letter"),
        # Turkish i
        pytest.param("\u0130D\u0130OT", "idiot", id="turkish-dotted-capital"),
        pytest.param("\u0131d\u0131ot", "idiot", id="turkish-dotless"),
        pytest.param("I\u0307DIOT", "idiot", id="dotted-capital-decomposed"),
        pytest.param("\u0130stanbul \u0131span", "istanbul ispan", id="turkish-words"),
        # Greek and Cyrillic
        pytest.param(
            "\u1f00\u03bb\u03ae\u03b8\u03b5\u03b9\u03b1",
            "\u03b1\u03bb\u03b7\u03b8\u03b5\u03b9\u03b1",
            id="greek-polytonic",
        ),
        pytest.param(
            "\u0386\u0398\u0397\u039d\u0391",
            "\u03b1\u03b8\u03b7\u03bd\u03b1",
            id="greek-tonos-capital",
        ),
        pytest.param("\u03b1\u0301\u0313", "\u03b1", id="greek-combining"),
        pytest.param("\u0451\u043b\u043a\u0430", "\u0435\u043b\u043a\u0430", id="cyrillic-yo"),
        pytest.param(
            "\u0435\u0308\u043b\u043a\u0430", "\u0435\u043b\u043a\u0430", id="cyrillic-combining"
        ),
        pytest.param(
            "\u0414\u0423\u0301\u0420\u0410\u0306\u041a",
            "\u0434\u0443\u0440\u0430\u043a",
            id="cyrillic-capitals-stress",
        ),
        # marks on no letter
        pytest.param("\u0301idiot", "idiot", id="mark-at-the-start"),
        pytest.param("you \u0301\u0308idiot", "you idiot", id="marks-after-a-space"),
        pytest.param("(\u0301idiot)", "(idiot)", id="mark-after-punctuation"),
    ],
)
def test_marks_on_latin_greek_and_cyrillic_letters_fold(text: str, expected: str) -> None:
    assert normalised(text) == expected
    assert normalised(expected) == expected


@pytest.mark.parametrize(
    ("marked", "bare"),
    [
        pytest.param("\u3070", "\u306f", id="hiragana-voiced-precomposed"),
        pytest.param("\u306f\u3099", "\u306f", id="hiragana-voiced-combining"),
        pytest.param("\u3071", "\u306f", id="hiragana-semi-voiced-precomposed"),
        pytest.param("\u306f\u309a", "\u306f", id="hiragana-semi-voiced-combining"),
        pytest.param("\u30d0", "\u30cf", id="katakana-voiced"),
        pytest.param("\u30cf\u3099", "\u30cf", id="katakana-voiced-combining"),
        pytest.param("\uff8a\uff9e", "\uff8a", id="half-width-voiced"),
        pytest.param("\u0e44\u0e01\u0e48", "\u0e44\u0e01", id="thai-tone-mark"),
        pytest.param("\u0e01\u0e49", "\u0e01", id="thai-another-tone-mark"),
        pytest.param("\u0e01\u0e34", "\u0e01", id="thai-vowel-sign"),
        pytest.param("\u0915\u093f", "\u0915", id="devanagari-matra-i"),
        pytest.param("\u0915\u0947", "\u0915", id="devanagari-matra-e-nonspacing"),
        pytest.param("\u0915\u094d", "\u0915", id="devanagari-virama"),
        pytest.param("\u0915\u0902", "\u0915", id="devanagari-anusvara"),
        pytest.param("\u0995\u09bf", "\u0995", id="bengali-matra"),
        pytest.param("\u1112\u1161\u11ab", "\u1112\u1161", id="hangul-jamo-final"),
        pytest.param("\ud55c", "\ud558", id="hangul-syllable"),
        pytest.param("\u05e9\u05c1", "\u05e9", id="hebrew-point"),
        pytest.param("\u0643\u064e", "\u0643", id="arabic-haraka"),
    ],
)
def test_marks_of_other_scripts_keep_their_meaning(marked: str, bare: str) -> None:
    assert normalised(marked) != normalised(bare)
    assert Matcher.of([marked]).found_in(marked)
    assert not Matcher.of([marked]).found_in(bare)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\u306f\u3099\u304b", "\u30d0\u30ab"),
        ("\u0e44\u0e01\u0e48", "\u0e44\u0e01\u0e48"),
        ("\u0915\u093f\u0924\u093e\u092c", "\u0915\u093f\u0924\u093e\u092c"),
        ("\u1112\u1161\u11ab", "\ud55c"),  # conjoining jamo compose, as NFKC does
        ("\u1112\u119e\u11ab", "\u1112\u119e\u11ab"),  # archaic: no syllable, kept
    ],
)
def test_marks_of_other_scripts_are_kept_as_written(text: str, expected: str) -> None:
    assert normalised(text) == expected


def test_any_mark_on_a_latin_letter_folds() -> None:
    marks = regex.findall(r"\p{M}", EVERY_CHARACTER)
    assert len(marks) > 2000
    kept = [hex(ord(m)) for m in marks if normalised(f"i{m}diot I{m}DIOT") != "idiot idiot"]
    assert kept == []


def test_no_latin_greek_or_cyrillic_letter_keeps_a_mark() -> None:
    """Precomposed ones included, wherever they are in Unicode (the table of them is
    built from the Basic Multilingual Plane)."""
    letters = regex.findall(FOLDED_SCRIPTS, EVERY_CHARACTER)
    marked = [hex(ord(c)) for c in letters if regex.search(r"\p{M}", normalised(c))]
    assert marked == []


@given(st.text())
def test_normalising_twice_changes_nothing(text: str) -> None:
    assert normalised(normalised(text)) == normalised(text)


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
        "\u0130D\u0130OT",
        "you \u0131d\u0131ot",
        "i\u0301d\u0308iot",
        "\u00cd\u0308DIOT!",
        "\u306f\u3099\u304b",  # ばか with a combining voicing mark
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
        "\u0130D\u0130OTIC",
        "i\u0301d\u0308iots\u0301y",
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


@pytest.mark.parametrize(
    "word", ["idiot", "\u0130D\u0130OT", "i\u0301d\u0308iot", "\u0131diot", "\u00eddiot"]
)
@pytest.mark.parametrize(
    "text", ["IDIOT", "\u0130d\u0130ot", "i\u0301d\u0308iot", "\u00edd\u00eeot"]
)
def test_a_word_with_marks_and_a_text_with_marks_fold_alike(word: str, text: str) -> None:
    """The creators' words and the site's phrases go through the same folding as the text
    (``Matcher.of``), so a word typed with marks catches the bare word and the reverse."""
    assert Matcher.of([word]).found_in(f"you {text}!")
    assert Matcher.of(["other"]).joined(Matcher.of([word])).found_in(text)


VANISHING = "".join(chr(c) for first, last in vanishing() for c in range(first, last + 1))


def test_what_vanishes_is_what_normalising_removes_whole() -> None:
    """The API document's pattern for a muted word counts these as blank (a word of them
    alone is refused as "blank"): exactly the first plane's characters ``normalised``
    turns into nothing. (Controls aside: the pattern refuses them anyway.)"""
    plane = (chr(c) for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF)
    removed = {c for c in plane if not normalised(c)}
    controls = {chr(c) for c in [*range(0x20), *range(0x7F, 0xA0)]}
    assert set(VANISHING) - controls == removed - controls
    assert {"\u0301", "\u00b4", "\u309b", "\u200b", " ", "\u0e48"} <= set(VANISHING)


@given(st.text(alphabet=VANISHING, min_size=1))
def test_a_text_of_what_vanishes_is_blank(text: str) -> None:
    assert normalised(text) == ""
