"""The one matcher of muted words: a creator's muted words, the site's muted phrases
(``moderation``) and the scan that moves waiting messages when a word is muted later
(``safety.service.move_muted``) all find words through ``Matcher``.

Text and words are normalised the same way (``normalised``) before they are compared:

- default-ignorable code points are removed (zero-width space, joiner and non-joiner,
  word joiner, soft hyphen, BOM, combining grapheme joiner, variation selectors, bidi
  marks, tags: the Unicode ``Default_Ignorable_Code_Point`` set), so an invisible
  character cannot split a word that looks whole;
- NFKC, which also folds widths (full-width letters, half-width katakana);
- the marks on a Latin, Greek or Cyrillic letter are removed, precomposed or combining,
  one or stacked ("ídiot", "i\u0301d\u0308iot" and "ἀλήθεια" are "idiot" and
  "αληθεια"), and so are marks on no letter (after a space, punctuation or a symbol);
  Turkish dotted and dotless i are "i" ("İDİOT", "\u0131d\u0131ot"). The marks of every other
  script stay, for there they make another letter: kana voicing ("ばか" is not "はか"),
  Thai tone marks, Indic vowel signs, Hebrew and Arabic points; then case folding;
- hiragana become katakana ("ばか", "バカ" and "ﾊﾞｶ" are one word); curly apostrophes
  become straight ones; runs of whitespace become one space.

Where a word is found depends on its script. A word's edge in a script written without
spaces between words, or with particles attached to words (Han, Hiragana, Katakana,
Hangul, Thai, Lao, Khmer, Myanmar), matches anywhere: "ばか" in "お前はばかだ", "바보" in
"너는 바보야". Any other edge needs a boundary: the next character must not be a letter
or digit of a spaced script, so a muted "ass" never catches "class" and "idiot" not
"idiotic"; at the end, a plural or possessive form is the word too ("spoilers",
"spoiler's", "boxes").

All the words of one list are in one Aho-Corasick automaton (``pyahocorasick``), built
once per list and kept by ``safety.service`` until the list changes: matching a post is
one pass over its normalised text, whatever the list's length.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any

import ahocorasick
import regex

# The Unicode Default_Ignorable_Code_Point set (DerivedCoreProperties.txt, unchanged from
# Unicode 14 to 16), inclusive ranges; tests compare it with ``regex``'s own table.
DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)


def _class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(f"\\U{first:08x}-\\U{last:08x}" for first, last in ranges)


_IGNORABLE = re.compile(f"[{_class(DEFAULT_IGNORABLE)}]+")
# A letter's marks are folded when the letter is Latin, Greek or Cyrillic (by its Unicode
# script, whatever block the marks come from): there they are accents, and a reader
# sees the bare word. In other scripts a mark makes another letter (kana voicing, Thai
# tone marks, Indic vowel signs), so it stays. After NFKC a letter with marks is either
# precomposed ("í": a canonical decomposition), or followed by combining marks that have
# no precomposed form ("d\u0308"), or both. Marks
# on no letter (at the start, after a space, punctuation or a symbol) mean nothing in
# any script: they go too.
_FOLDED_SCRIPTS = r"\p{sc=Latin}\p{sc=Greek}\p{sc=Cyrillic}"
_MARKS = regex.compile(r"\p{M}+")


def _precomposed() -> dict[int, str]:
    """Every precomposed Latin, Greek or Cyrillic letter, and its letters without marks.
    (All are in the Basic Multilingual Plane; a test holds it.)"""
    plane = "".join(map(chr, range(0x80, 0xD800))) + "".join(map(chr, range(0xE000, 0x10000)))
    letters = regex.findall(rf"(?V1)[[{_FOLDED_SCRIPTS}]&&\p{{dt=Canonical}}]", plane)
    return {ord(c): _MARKS.sub("", unicodedata.normalize("NFD", c)) for c in letters}


def _ranges(code_points: Iterable[int]) -> tuple[tuple[int, int], ...]:
    ranges: list[tuple[int, int]] = []
    for c in sorted(code_points):
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1] = (ranges[-1][0], c)
        else:
            ranges.append((c, c))
    return tuple(ranges)


# Precomposed letters are looked up in a table, and the text is scanned for them with
# ``re`` (a class of ranges), rather than decomposing and recomposing all of it: a
# 10 kB post with an accent in every word folds in a third of the time, and text
# without them (most Japanese, Korean, Thai) is not decomposed at all.
_BARE = _precomposed()
_PRECOMPOSED = re.compile(f"[{_class(_ranges(_BARE))}]+")
_MARKS_TO_FOLD = regex.compile(
    rf"(?V1)\p{{M}}(?<=[{_FOLDED_SCRIPTS}\s\p{{P}}\p{{S}}]\p{{M}})\p{{M}}*"  # on such a letter
    r"|^\p{M}+"  # on nothing
)
# Turkish dotless i; its capital (I) casefolds to "i", and so does the dotted one, bare.
_DOTLESS_I = "\u0131"
_HIRAGANA = re.compile("[\u3041-\u3096\u309d\u309e]")
_TO_KATAKANA = {c: c + 0x60 for c in range(0x3041, 0x3097)} | {0x309D: 0x30FD, 0x309E: 0x30FE}
_APOSTROPHES = re.compile("[\u2018\u2019\u02bc]")

# A run of letters or digits of scripts written with spaces between words (what is not
# one of these is a boundary): each run is fenced by MARK on both sides before matching.
_UNSPACED_SCRIPTS = (
    r"\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}"
    r"\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}"
)
_SPACED_RUN = regex.compile(rf"(?V1)[\w--[{_UNSPACED_SCRIPTS}]]+")
_ASCII_BOUNDARY = re.compile(r"\b", re.ASCII)
_UNSPACED = regex.compile(rf"[{_UNSPACED_SCRIPTS}]")
MARK = "\x01"  # a control character: refused in every text a person sends
_FENCED = f"{MARK}\\g<0>{MARK}"
# What may follow a word that ends in a letter of a spaced script: its plural. (The
# possessive needs nothing: in "spoiler's" the word is fenced before the apostrophe.)
_SUFFIXES = ("s", "es")


def normalised(text: str) -> str:
    """``text`` as words are compared: see the module's docstring."""
    if text.isascii():  # nothing to remove or fold but case and spacing
        return " ".join(text.lower().split())
    text = unicodedata.normalize("NFKC", _IGNORABLE.sub("", text))
    # Marks go before case folding, which would make some of them letters ("\u0345" an
    # iota) or bring others back ("İ" is "i\u0307" folded; bare, it is "I", then "i").
    text = _MARKS_TO_FOLD.sub("", _PRECOMPOSED.sub(_bare, text)).casefold()
    if _DOTLESS_I in text:
        text = text.replace(_DOTLESS_I, "i")
    if _HIRAGANA.search(text):
        text = text.translate(_TO_KATAKANA)
    return " ".join(_APOSTROPHES.sub("'", text).split())


def _bare(run: re.Match[str]) -> str:
    return run[0].translate(_BARE)


def vanishing() -> tuple[tuple[int, int], ...]:
    """The code points of the first plane that ``normalised`` removes whole, as ranges:
    whitespace, default-ignorables, marks, and what NFKC makes marks after a space ("\\u00b4"
    is " \\u0301"). A word made only of them is blank; the API document's pattern for a
    muted word says so (``safety.schemas``)."""
    plane = "".join(map(chr, range(0xD800))) + "".join(map(chr, range(0xE000, 0x10000)))
    # Only these can vanish (a test holds it); Hangul syllables are left out of the
    # decomposable ones since they are more than half of them and none vanishes.
    candidates = regex.findall(
        r"(?V1)[\p{M}[\P{dt=None}--\p{sc=Hangul}]\p{Default_Ignorable_Code_Point}\s]", plane
    )
    return _ranges(ord(c) for c in candidates if not normalised(c))


def _fenced(text: str) -> str:
    """Normalised text with MARK around every run of a spaced script's letters, so that a
    word fenced the same way is found only whole (written with | for MARK: "|idiot|" is
    in "|idiot|'|s|", not in "|idiotic|"); a word of an unspaced script has no fence and
    is found anywhere."""
    text = text.replace(MARK, "")
    if text.isascii():  # where ASCII letters and digits begin or end: \b, and quicker
        return _ASCII_BOUNDARY.sub(MARK, text)
    fenced: str = _SPACED_RUN.sub(_FENCED, text)
    return fenced


def _forms(word: str) -> list[str]:
    """A normalised word as the automaton holds it: fenced, with its plurals."""
    forms = [_fenced(word)]
    if word[-1].isalpha() and _UNSPACED.match(word[-1]) is None:
        forms += [_fenced(word + suffix) for suffix in _SUFFIXES]
    return forms


class _List:
    """One list of normalised words, all their forms in one automaton."""

    __slots__ = ("automaton", "words")

    def __init__(self, words: frozenset[str]) -> None:
        self.words = words
        self.automaton: Any = ahocorasick.Automaton()
        for word in words:
            for form in _forms(word):
                self.automaton.add_word(form, word)
        self.automaton.make_automaton()

    def found_in(self, fenced: str) -> bool:
        """Whether the fenced text holds one of the words: every match is whole."""
        return next(self.automaton.iter(fenced), None) is not None


class Matcher:
    """Muted words ready to match: built once from a list (``of``), joined with another
    without rebuilding either (``joined``), asked about any number of texts."""

    __slots__ = ("_lists",)

    def __init__(self, lists: tuple[_List, ...] = ()) -> None:
        self._lists = lists

    @classmethod
    def of(cls, words: Iterable[str]) -> Matcher:
        """A matcher of these words, as typed or stored (normalised here)."""
        return cls.of_normalised(normalised(word) for word in words)

    @classmethod
    def of_normalised(cls, words: Iterable[str]) -> Matcher:
        kept = frozenset(word for word in words if word)
        return cls((_List(kept),) if kept else ())

    def joined(self, other: Matcher) -> Matcher:
        return Matcher(self._lists + other._lists)

    @property
    def size(self) -> int:
        """How many words it holds (a list's words counted once per list)."""
        return sum(len(part.words) for part in self._lists)

    def __bool__(self) -> bool:
        return bool(self._lists)

    def found_in(self, text: str) -> bool:
        """Whether ``text`` holds one of the words (see the module's docstring)."""
        if not self._lists:
            return False
        fenced = _fenced(normalised(text))
        return any(part.found_in(fenced) for part in self._lists)


NOTHING = Matcher()
