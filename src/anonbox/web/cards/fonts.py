"""The fonts the share cards draw with, and which of them draws each piece of text.

Debian's Noto packages give every script the cards promise: ``fonts-noto-core`` (Latin,
Cyrillic, Greek, Hebrew, Arabic, Thai), ``fonts-noto-cjk`` (one collection with a face per
language: Japanese, Korean and Simplified Chinese forms of the same ideographs differ) and
``fonts-noto-color-emoji`` (colour bitmaps, one size: drawn at 109 px and scaled). ``make
install``, ``.ci/run`` and the Dockerfile install them. Where they are missing (a self-hoster
without root) the cards draw with DejaVu Sans or Pillow's built-in font, and one warning says
what to install; the scripts those lack show as boxes.

Which font draws a grapheme is decided from the fonts' own character maps (their ``cmap``
tables, read here once per font, in milliseconds): the emoji font for anything with emoji
presentation, else the first font that has every code point, trying the CJK face of the
text's language.
"""

from __future__ import annotations

import bisect
import functools
import logging
import mmap
import struct
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import regex
from PIL import Image, ImageFont, features

NOTO_DIR = Path("/usr/share/fonts/truetype/noto")
NOTO_CJK = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
DEJAVU = (
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
    Path("/usr/share/fonts/dejavu/DejaVuSans.ttf"),
)
EMOJI_SIZE = 109  # the one size of Noto Color Emoji's bitmaps
RAQM = features.check("raqm")  # shaping (Arabic joining, Thai marks, emoji sequences)
LAYOUT = ImageFont.Layout.RAQM if RAQM else ImageFont.Layout.BASIC
_CJK_FACES = {"ja": 0, "ko": 1, "zh": 2}  # the faces of NotoSansCJK-Regular.ttc

_log = logging.getLogger("anonbox.web")

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


@dataclass(frozen=True, slots=True, eq=False)  # one object per font: hashed by identity
class Face:
    """One font file (one face of a collection); ``path`` None is Pillow's built-in font."""

    name: str
    path: Path | None
    index: int = 0
    emoji: bool = False  # colour bitmaps at EMOJI_SIZE, scaled to the text


@dataclass(frozen=True, slots=True)
class FontSet:
    """The faces found on this machine, in the order they are tried."""

    text: tuple[Face, ...]  # tried in order; a CJK face stands for all three languages
    cjk: dict[str, Face]
    emoji: Face | None
    missing: tuple[str, ...]  # what a complete installation would add

    @classmethod
    def discover(cls, noto_dir: Path = NOTO_DIR, noto_cjk: Path = NOTO_CJK) -> FontSet:
        wanted = [
            Face("latin", noto_dir / "NotoSans-Regular.ttf"),
            Face("hebrew", noto_dir / "NotoSansHebrew-Regular.ttf"),
            Face("arabic", noto_dir / "NotoSansArabic-Regular.ttf"),
            Face("thai", noto_dir / "NotoSansThai-Regular.ttf"),
        ]
        text = [face for face in wanted if face.path is not None and face.path.is_file()]
        missing = [str(face.path) for face in wanted if face not in text]
        cjk = {}
        if noto_cjk.is_file():
            cjk = {lang: Face(f"cjk-{lang}", noto_cjk, index) for lang, index in _CJK_FACES.items()}
        else:
            missing.append(str(noto_cjk))
        emoji_path = noto_dir / "NotoColorEmoji.ttf"
        emoji = Face("emoji", emoji_path, emoji=True) if emoji_path.is_file() else None
        if emoji is None:
            missing.append(str(emoji_path))
        dejavu = next((path for path in DEJAVU if path.is_file()), None)
        text.append(Face("dejavu", dejavu) if dejavu else Face("builtin", None))
        return cls(tuple(text), cjk, emoji, tuple(missing))

    @property
    def fallback(self) -> Face:
        return self.text[0]

    def faces_for(self, lang: str) -> tuple[Face, ...]:
        """The text faces in the order tried for a text whose ideographs are ``lang``."""
        cjk = self.cjk.get(lang)
        if cjk is None:
            return self.text
        return (*self.text[:-1], cjk, self.text[-1])


@functools.cache
def installed() -> FontSet:
    """This machine's fonts, found once; a warning if the Noto fonts are not all there."""
    fonts = FontSet.discover(NOTO_DIR, NOTO_CJK)
    if fonts.missing:
        _log.warning(
            "share cards: fonts missing (%s); cards draw with %s and show boxes for the "
            "scripts and emoji those lack. Install Debian's fonts-noto-core, fonts-noto-cjk "
            "and fonts-noto-color-emoji (make install does, as root).",
            ", ".join(fonts.missing),
            "DejaVu Sans" if fonts.text[-1].name == "dejavu" else "Pillow's built-in font",
        )
    return fonts


class Coverage:
    """The code points a font has glyphs for, as sorted ranges."""

    def __init__(self, ranges: list[tuple[int, int]]) -> None:
        merged: list[tuple[int, int]] = []
        for start, end in sorted(ranges):
            if merged and start <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        self._starts = [start for start, _ in merged]
        self._ends = [end for _, end in merged]

    def __contains__(self, point: int) -> bool:
        at = bisect.bisect_right(self._starts, point) - 1
        return at >= 0 and point <= self._ends[at]


@functools.cache
def coverage(face: Face) -> Coverage:
    """The code points the face has a glyph for (its cmap)."""
    if face.path is None:
        return Coverage([(0x20, 0x7E)])
    with face.path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return Coverage(cmap_ranges(data, face.index))


def cmap_ranges(data: bytes | mmap.mmap, index: int = 0) -> list[tuple[int, int]]:
    """The mapped code points of an OpenType font (face ``index`` of a collection), from
    its Unicode cmap subtable: format 12 (all planes) if it has one, else format 4."""
    offset = struct.unpack_from(">I", data, 12 + 4 * index)[0] if data[:4] == b"ttcf" else 0
    (tables,) = struct.unpack_from(">H", data, offset + 4)
    cmap = next(
        struct.unpack_from(">I", data, record + 8)[0]
        for record in range(offset + 12, offset + 12 + 16 * tables, 16)
        if data[record : record + 4] == b"cmap"
    )
    (count,) = struct.unpack_from(">H", data, cmap + 2)
    subtables = {}
    for record in range(cmap + 4, cmap + 4 + 8 * count, 8):
        platform, encoding, at = struct.unpack_from(">HHI", data, record)
        subtables[platform, encoding] = cmap + at
    for key in ((3, 10), (0, 6), (0, 4), (3, 1), (0, 3)):
        at = subtables.get(key)
        if at is None:
            continue
        (kind,) = struct.unpack_from(">H", data, at)
        if kind == 12:
            (groups,) = struct.unpack_from(">I", data, at + 12)
            found = []
            for group in range(at + 16, at + 16 + 12 * groups, 12):
                start, end, glyph = struct.unpack_from(">III", data, group)
                if glyph != 0 or start != end:  # a lone code point on glyph 0 is missing
                    found.append((start, end))
            return found
        if kind == 4:
            return _format4(data, at)
    return []


def _format4(data: bytes | mmap.mmap, at: int) -> list[tuple[int, int]]:
    (segments,) = struct.unpack_from(">H", data, at + 6)
    segments //= 2
    ends = struct.unpack_from(f">{segments}H", data, at + 14)
    starts = struct.unpack_from(f">{segments}H", data, at + 16 + 2 * segments)
    range_at = at + 16 + 6 * segments
    offsets = struct.unpack_from(f">{segments}H", data, range_at)
    ranges = []
    for n, (start, end) in enumerate(zip(starts, ends, strict=True)):
        if start == 0xFFFF:
            continue
        if offsets[n] == 0:
            ranges.append((start, end))  # every code point maps (delta arithmetic)
            continue
        for point in range(start, end + 1):  # glyph 0 in the array is "missing"
            where = range_at + 2 * n + offsets[n] + 2 * (point - start)
            if struct.unpack_from(">H", data, where)[0] != 0:
                ranges.append((point, point))
    return ranges


@functools.cache
def font(face: Face, size: int) -> Font:
    if face.path is None:
        return ImageFont.load_default(size=size)
    if face.emoji:
        size = EMOJI_SIZE
    return ImageFont.truetype(str(face.path), size, index=face.index, layout_engine=LAYOUT)


# Code points that only modify the grapheme they are in: no font needs a glyph for them.
_INVISIBLE = frozenset({0x200C, 0x200D, 0xFE0E, 0xFE0F, *range(0xE0100, 0xE01F0)})
_EMOJI_PRESENTATION = regex.compile(
    r"\p{Emoji_Presentation}|\p{Emoji_Modifier}|\p{Regional_Indicator}|\u20E3|\uFE0F"
    r"|\p{Extended_Pictographic}.*\u200D"
)
_LETTER = regex.compile(r"[\p{L}\p{M}]")  # not a space, digit, punctuation or symbol


def is_emoji(grapheme: str) -> bool:
    """Whether the grapheme is drawn as a colour emoji (emoji presentation, not U+FE0E)."""
    return "\ufe0e" not in grapheme and _EMOJI_PRESENTATION.search(grapheme) is not None


def needed(grapheme: str) -> list[int]:
    """The code points of a grapheme a font must have."""
    return [ord(char) for char in grapheme if ord(char) not in _INVISIBLE]


def covers(face: Face, grapheme: str) -> bool:
    have = coverage(face)
    return all(point in have for point in needed(grapheme))


def choose(fonts: FontSet, grapheme: str, faces: tuple[Face, ...], previous: Face | None) -> Face:
    """The face that draws this grapheme: emoji first, a neutral (space, digit, punctuation)
    stays with the font before it when that font has it, else the first face that does."""
    if fonts.emoji is not None and is_emoji(grapheme) and covers(fonts.emoji, grapheme[0]):
        return fonts.emoji
    neutral = not _LETTER.search(grapheme)
    if neutral and previous is not None and not previous.emoji and covers(previous, grapheme):
        return previous
    for face in faces:
        if covers(face, grapheme):
            return face
    if fonts.emoji is not None and covers(fonts.emoji, grapheme):
        return fonts.emoji  # a symbol only the emoji font has
    return faces[0]


_KANA = regex.compile(r"[\p{Hiragana}\p{Katakana}]")
_HANGUL = regex.compile(r"\p{Hangul}")


def cjk_language(text: str) -> str:
    """Which forms the ideographs take: Japanese next to kana, Korean next to hangul, else
    Simplified Chinese (the same code points are drawn differently in each)."""
    if _KANA.search(text):
        return "ja"
    if _HANGUL.search(text):
        return "ko"
    return "zh"


def emoji_scale(size: int) -> float:
    """From Noto Color Emoji's one bitmap size to a text ``size`` (its bitmaps fill less of
    the em than its letters)."""
    return size * 1.1 / EMOJI_SIZE


@functools.lru_cache(maxsize=16384)
def emoji_advance(face: Face, grapheme: str) -> float:
    """A colour emoji's advance at the bitmaps' size: shaped (a sequence the font lacks is
    several pictures), never drawn; a few microseconds, the same at every text size."""
    big = font(face, EMOJI_SIZE)
    assert isinstance(big, ImageFont.FreeTypeFont)
    return big.getlength(grapheme)


def emoji_width(face: Face, grapheme: str, size: int) -> int:
    """A colour emoji's advance at a text ``size``, as ``emoji_image`` draws it: what lines
    are measured with, without drawing a picture (that costs a hundred times more)."""
    return round(emoji_advance(face, grapheme) * emoji_scale(size))


@functools.lru_cache(maxsize=1024)
def emoji_image(face: Face, grapheme: str, size: int) -> tuple[Image.Image, int, int]:
    """A colour emoji scaled to a text ``size``: the image, its offset above the baseline,
    and its advance width (``emoji_width``). Only for drawing: the one costly step."""
    big = font(face, EMOJI_SIZE)
    assert isinstance(big, ImageFont.FreeTypeFont)
    ascent, _ = big.getmetrics()
    scale = emoji_scale(size)
    # The picture straight from FreeType, placed by its own bounding box (no canvas to draw
    # into), averaged down to the text's size: a box filter, a fifth of Lanczos' cost and
    # as sharp when shrinking by 2 to 5 times.
    mask, (left, top) = big.getmask2(grapheme, mode="RGBA", anchor="ls")
    picture = Image.Image()._new(mask)
    if picture.width == 0 or picture.height == 0:
        picture = Image.new("RGBA", (1, 1), (0, 0, 0, 0))
    width = max(1, round((left + picture.width) * scale))
    height = max(1, round((ascent + top + picture.height) * scale))
    canvas = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    scaled = picture.resize(
        (max(1, round(picture.width * scale)), max(1, round(picture.height * scale))),
        Image.Resampling.BOX,
    )
    canvas.paste(scaled, (round(left * scale), round((ascent + top) * scale)))
    return canvas, round(ascent * scale), emoji_width(face, grapheme, size)


def bidi_class(grapheme: str) -> str:
    """``R`` (Hebrew, Arabic…), ``L`` (other letters), ``N`` (digits) or ``O`` (neutral)."""
    kind = unicodedata.bidirectional(grapheme[0])
    if kind in {"R", "AL"}:
        return "R"
    if kind == "L":
        return "L"
    if kind in {"EN", "AN"}:
        return "N"
    return "O"
