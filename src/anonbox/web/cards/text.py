"""Text on the share cards: graphemes, fonts, line breaks and right-to-left order.

A text is cut into grapheme clusters (an emoji ZWJ sequence, a skin tone, a flag, a keycap
or a letter with its marks is one, never split) and each is given a font
(``web.cards.fonts``). Lines break where the script breaks them: after spaces (Latin,
Cyrillic, Greek, Arabic, Hebrew, Korean, Thai between phrases), and between any two
Japanese or Chinese characters or emoji, except before closing punctuation and small kana
or after opening brackets (basic kinsoku). Thai words have no spaces between them and no
small, maintained pure-Python segmenter exists, so a Thai phrase wider than the line
breaks between grapheme clusters, like any word wider than the line.

Each line's consecutive graphemes of one font and one direction are a run; runs are put
in visual order with the Unicode bidirectional algorithm's rules for a line of strong
left-to-right and right-to-left text, digits and neutrals (rules N1/N2, W7 and L2,
without explicit embeddings), and a right-to-left run is drawn by raqm (FriBidi and
HarfBuzz), which shapes Arabic and orders the run. A paragraph whose first strong letter is
right-to-left is right-aligned.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import regex
from PIL import Image, ImageDraw

from anonbox.web.cards.fonts import (
    RAQM,
    Face,
    FontSet,
    bidi_class,
    choose,
    cjk_language,
    emoji_advance,
    emoji_image,
    emoji_width,
    font,
)

_BLANK_RUNS = re.compile(r"\n{3,}")
_GRAPHEME = regex.compile(r"\X")
# Characters between which a line may break without a space (UAX #14's ID class, roughly).
_IDEOGRAPHIC = regex.compile(
    r"[\p{Han}\p{Hiragana}\p{Katakana}\u3000-\u303F\uFF01-\uFF60\u30FC]"
    r"|\p{Extended_Pictographic}|\p{Regional_Indicator}"
)
# Basic kinsoku: never at the start of a line, never at the end of one.
_NO_START = frozenset(
    "、。，．・：；？！ー」』）】〕〉》〙〗｝］”’ゝゞヽヾぁぃぅぇぉっゃゅょゎゕゖァィゥェォッャュョヮヵヶ"  # noqa: RUF001
    "々〻‐゠–〜～…‥,.:;?!)]}%"  # noqa: RUF001
)
_NO_END = frozenset("「『（【〔〈《〘〖｛［“‘([{")  # noqa: RUF001


@dataclass(frozen=True, slots=True)
class Glyphs:
    """Graphemes of one paragraph with the face of each, in logical order."""

    graphemes: tuple[str, ...]
    faces: tuple[Face, ...]
    classes: tuple[str, ...]  # bidi_class of each
    rtl: bool  # the paragraph's direction (its first strong letter)
    segments: tuple[range, ...]  # between break opportunities, trailing spaces included


@dataclass(frozen=True, slots=True)
class Run:
    text: str
    face: Face
    rtl: bool
    width: float


@dataclass(frozen=True, slots=True)
class Line:
    runs: tuple[Run, ...]  # in visual order, left to right
    width: float
    rtl: bool  # its paragraph's direction: aligned right

    @property
    def text(self) -> str:
        """The line's characters in visual order (for tests and logs)."""
        return "".join(run.text[::-1] if run.rtl else run.text for run in self.runs)


# Colour emoji pictures drawn for one text at most: each is a PNG decoded by FreeType and
# scaled (about a millisecond, where a letter costs microseconds), so a wall of distinct
# emoji or flags is cut here with an ellipsis, as a text too long for the card is.
EMOJI_PER_TEXT = 120
ELLIPSIS = "…"


def paragraphs(text: str, fonts: FontSet, rtl: bool | None = None) -> list[Glyphs]:
    """The text's paragraphs (at most two blank lines in a row kept), each graphemes with
    fonts, cut with an ellipsis after ``EMOJI_PER_TEXT`` emoji. ``rtl`` forces the
    direction (a label's is its language's, not its name's)."""
    faces_tried = fonts.faces_for(cjk_language(text))
    result = []
    pictures = 0
    for paragraph in _BLANK_RUNS.sub("\n\n", text.replace("\t", "    ").strip()).split("\n"):
        graphemes = _GRAPHEME.findall(paragraph)
        faces: list[Face] = []
        previous: Face | None = None
        for at, grapheme in enumerate(graphemes):
            previous = choose(fonts, grapheme, faces_tried, previous)
            pictures += previous.emoji
            if pictures > EMOJI_PER_TEXT:
                del graphemes[at:]
                graphemes.append(ELLIPSIS)
                faces.append(choose(fonts, ELLIPSIS, faces_tried, None))
                break
            faces.append(previous)
        result.append(_glyphs(tuple(graphemes), tuple(faces), rtl))
        if pictures > EMOJI_PER_TEXT:
            break
    return result


def _glyphs(graphemes: tuple[str, ...], faces: tuple[Face, ...], rtl: bool | None) -> Glyphs:
    classes = tuple(bidi_class(grapheme) for grapheme in graphemes)
    strong = next((kind for kind in classes if kind in {"L", "R"}), "L")
    direction = strong == "R" if rtl is None else rtl
    return Glyphs(graphemes, faces, classes, direction, _segments(graphemes))


def _may_break(before: str, after: str) -> bool:
    """Whether a line may break between these two graphemes (after a space is handled by
    the caller)."""
    if after[0] in _NO_START or before[-1] in _NO_END or after.isspace():
        return False
    return bool(_IDEOGRAPHIC.match(before) or _IDEOGRAPHIC.match(after))


def _segments(graphemes: tuple[str, ...]) -> tuple[range, ...]:
    """Index ranges between break opportunities; a segment keeps its trailing spaces."""
    segments, start = [], 0
    for i in range(1, len(graphemes)):
        before, after = graphemes[i - 1], graphemes[i]
        if (before.isspace() and not after.isspace()) or _may_break(before, after):
            segments.append(range(start, i))
            start = i
    segments.append(range(start, len(graphemes)))
    return tuple(segments)


@functools.lru_cache(maxsize=65536)
def _measure(face: Face, size: int, text: str, rtl: bool) -> float:
    """The advance of a run of one face."""
    if face.emoji:
        return sum(emoji_width(face, g, size) for g in _GRAPHEME.findall(text))
    drawn = font(face, size)
    if RAQM:
        return drawn.getlength(text, direction="rtl" if rtl else "ltr")
    return drawn.getlength(text)


# Line breaking measures every word at every size it tries: a word is measured once, at
# this size, and scaled. Shaped advances are not hinted, so they grow with the size to
# within 1/64 px a glyph (a line at most a pixel off); lines are drawn at exact widths.
_REFERENCE = 256


@functools.lru_cache(maxsize=65536)
def _advance(face: Face, text: str, rtl: bool) -> float:
    return _measure(face, _REFERENCE, text, rtl)


def _estimate(face: Face, size: int, text: str, rtl: bool) -> float:
    """The advance of a run of one face at ``size``, for line breaking."""
    if face.emoji or face.path is None:  # emoji widths are scaled already; bitmap fonts
        return _measure(face, size, text, rtl)
    return _advance(face, text, rtl) * size / _REFERENCE


def forget() -> None:
    """Forget every width measured and emoji picture drawn (``bench/cards.py``: a card as
    costly as a text never seen before)."""
    _measure.cache_clear()
    _advance.cache_clear()
    emoji_advance.cache_clear()
    emoji_image.cache_clear()


def _width(glyphs: Glyphs, indices: range, size: int) -> float:
    """The width of graphemes side by side, measured a face at a time (runs are shaped as
    a whole when drawn; kerning across a break opportunity is not worth measuring)."""
    total = 0.0
    start = indices.start
    for i in range(indices.start, indices.stop + 1):
        if i == indices.stop or glyphs.faces[i] != glyphs.faces[start]:
            if i > start:
                text = "".join(glyphs.graphemes[start:i])
                total += _estimate(glyphs.faces[start], size, text, glyphs.classes[start] == "R")
            start = i
    return total


def _trim(glyphs: Glyphs, indices: range) -> range:
    """Without the spaces at its end (they hang past the line)."""
    stop = indices.stop
    while stop > indices.start and glyphs.graphemes[stop - 1].isspace():
        stop -= 1
    return range(indices.start, stop)


def wrap(glyphs: Glyphs, size: int, width: int) -> list[Line]:
    """The paragraph's lines at this size."""
    return [_line(glyphs, indices, size) for indices in breaks(glyphs, size, width)]


def breaks(glyphs: Glyphs, size: int, width: int) -> list[range]:
    """The graphemes of each line, by greedy line breaking at the break opportunities; a
    segment wider than the line is broken between grapheme clusters. A line's width is
    the sum of its segments' (each measured once and cached): filling one reshapes
    nothing."""
    lines: list[range] = []
    start = stop = 0
    used = 0.0  # the width of range(start, stop), its trailing spaces included
    for segment in glyphs.segments:
        words = _trim(glyphs, segment)  # measured once; its spaces on their own
        trimmed = _width(glyphs, words, size)
        full = trimmed + _width(glyphs, range(words.stop, segment.stop), size)
        if used + trimmed <= width:
            used += full
            stop = segment.stop
            continue
        if stop > start:
            lines.append(range(start, stop))
        start = stop = segment.start
        used = full
        if trimmed <= width:
            stop = segment.stop
            continue
        used = 0.0  # too wide alone: between grapheme clusters
        for i in segment:
            advance = _width(glyphs, range(i, i + 1), size)
            if i > start and used + advance > width and not glyphs.graphemes[i].isspace():
                lines.append(range(start, i))
                start, used = i, 0.0
            used += advance
        stop = segment.stop
    lines.append(range(start, stop))
    return [_trim(glyphs, indices) for indices in lines]


def _levels(glyphs: Glyphs, indices: range) -> list[int]:
    """Bidi embedding levels of a line's graphemes: strong letters their direction, digits
    left-to-right inside right-to-left text (W7, I1/I2), neutrals the direction of the
    strong text on both sides when it agrees, else the paragraph's (N1, N2)."""
    base = 1 if glyphs.rtl else 0
    classes = [glyphs.classes[i] for i in indices]
    # Digits take the direction of the strong letter before them for neutrals (W7, N1).
    strong: list[str] = []
    last = "R" if glyphs.rtl else "L"
    for kind in classes:
        if kind in {"L", "R"}:
            last = kind
        strong.append(kind if kind in {"L", "R"} else ("N" + last if kind == "N" else "O"))
    resolved = []
    for i, kind in enumerate(strong):
        if kind == "O":
            before = next((k for k in reversed(strong[:i]) if k != "O"), "sos")
            after = next((k for k in strong[i + 1 :] if k != "O"), "eos")
            sides = {_direction(before, glyphs.rtl), _direction(after, glyphs.rtl)}
            kind = sides.pop() if len(sides) == 1 else ("R" if glyphs.rtl else "L")
        resolved.append(kind)
    levels = []
    for kind in resolved:
        if kind == "R":
            levels.append(1)
        elif kind == "L":
            levels.append(2 if base else 0)
        else:  # digits: one level above the text they are in
            levels.append(2 if kind == "NR" or base else 0)
    return levels


def _direction(kind: str, rtl: bool) -> str:
    if kind in {"sos", "eos"}:
        return "R" if rtl else "L"
    if kind.startswith("N"):  # digits count as right-to-left next to neutrals (N1)
        return "R" if kind == "NR" else "L"
    return kind


def _line(glyphs: Glyphs, indices: range, size: int) -> Line:
    """A line's runs in visual order (rule L2, a run at a time)."""
    levels = _levels(glyphs, indices)
    pieces: list[tuple[int, Face, list[str]]] = []
    for offset, i in enumerate(indices):
        level, face = levels[offset], glyphs.faces[i]
        if pieces and pieces[-1][0] == level and pieces[-1][1] == face:
            pieces[-1][2].append(glyphs.graphemes[i])
        else:
            pieces.append((level, face, [glyphs.graphemes[i]]))
    for level in range(max((p[0] for p in pieces), default=0), 0, -1):
        ordered: list[tuple[int, Face, list[str]]] = []
        i = 0
        while i < len(pieces):
            j = i
            while j < len(pieces) and pieces[j][0] >= level:
                j += 1
            if j > i:
                ordered.extend(reversed(pieces[i:j]))
                i = j
            else:
                ordered.append(pieces[i])
                i += 1
        pieces = ordered
    runs = tuple(
        Run(
            "".join(graphemes),
            face,
            level % 2 == 1,
            _measure(face, size, "".join(graphemes), level % 2 == 1),
        )
        for level, face, graphemes in pieces
    )
    return Line(runs, sum(run.width for run in runs), glyphs.rtl)


def layout(text: str, fonts: FontSet, size: int, width: int, rtl: bool | None = None) -> list[Line]:
    return [line for glyphs in paragraphs(text, fonts, rtl) for line in wrap(glyphs, size, width)]


def draw_line(
    image: Image.Image,
    line: Line,
    *,
    left: int,
    right: int,
    baseline: int,
    size: int,
    fill: tuple[int, int, int],
) -> None:
    """Draw a line on ``baseline``, from ``left`` or, right-to-left, flush with ``right``."""
    draw = ImageDraw.Draw(image)
    x = float(right) - line.width if line.rtl else float(left)
    for run in line.runs:
        if run.face.emoji:
            graphemes = _GRAPHEME.findall(run.text)
            for grapheme in reversed(graphemes) if run.rtl else graphemes:
                emoji, above, advance = emoji_image(run.face, grapheme, size)
                image.paste(emoji, (round(x), baseline - above), emoji)
                x += advance
            continue
        drawn = font(run.face, size)
        if RAQM:
            direction = "rtl" if run.rtl else "ltr"
            draw.text(
                (x, baseline), run.text, font=drawn, fill=fill, anchor="ls", direction=direction
            )
        else:  # no shaping without raqm: at least the letters in visual order
            text = "".join(reversed(_GRAPHEME.findall(run.text))) if run.rtl else run.text
            draw.text((x, baseline), text, font=drawn, fill=fill, anchor="ls")
        x += run.width
