"""What counts as text a person typed, for every field that stores free text; and how such
text is shown where markup cannot isolate its direction (``isolated``)."""

from __future__ import annotations

import re
import unicodedata

import regex

from anonbox.core.errors import FieldProblem, ValidationFailed

# C0 controls other than tab, line feed and carriage return; DEL; C1 controls. NUL cannot be
# stored by PostgreSQL at all, and none of these is text a person typed.
_CONTROLS = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
_CONTROL = re.compile(f"[{_CONTROLS}]")
# What str.isspace() calls whitespace, but for the controls above (already refused).
_WHITESPACE = r"\t\n\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"

# What draws nothing: Unicode's default-ignorable code points (zero-width space, joiners,
# word joiner, BOM, soft hyphen, variation selectors, bidi controls, tags…, from ``regex``'s
# tables), the Hangul fillers (ignorable too; named so that the rule does not hang on it)
# and the braille blank U+2800, a symbol rather than a space that draws an empty cell.
_INVISIBLE_CLASS = r"\p{Default_Ignorable_Code_Point}\u115f\u1160\u3164\uffa0\u2800"
_INVISIBLE_ONLY = regex.compile(f"[{_INVISIBLE_CLASS}{_WHITESPACE}]*")


def _invisible_ranges() -> list[tuple[int, int]]:
    """The invisible code points of the first plane, as inclusive ranges (one scan of the
    plane at import, some 50 ms): the API document's pattern names them one by one."""
    runs = regex.compile(f"[{_INVISIBLE_CLASS}]+")
    plane = "".join(map(chr, range(0x10000)))
    return [(m.start(), m.end() - 1) for m in runs.finditer(plane)]


# The rule of ``normalised_text`` as the API document states it (a JSON Schema ``pattern``,
# in the syntax ECMA-262 and Python's ``re`` read alike): not only whitespace, and no
# control character. The service checks it in ``normalised_text``, which also names the
# problem (``blank``, ``control_character``); tests hold the two to the same answers.
def text_pattern(blank: str = "") -> str:
    """``TEXT_PATTERN`` where the characters of the class body ``blank`` (written as
    ``\\uXXXX`` escapes) count as whitespace too: a field whose service removes them."""
    return f"^(?![{_WHITESPACE}{blank}]*$)[^{_CONTROLS}]*$"


TEXT_PATTERN = text_pattern()
# The same for a field where text that draws nothing is blank too (a display name, a
# prompt: ``normalised_text(visible=True)``). The planes above the first are left out, as in
# the muted words' pattern: ECMA-262 patterns without the ``u`` flag cannot name them; the
# service still counts their tag characters as invisible.
VISIBLE_TEXT_PATTERN = text_pattern(
    "".join(f"\\u{first:04x}-\\u{last:04x}" for first, last in _invisible_ranges())
)
# The same for a field that may also be left blank (a bio: blank removes it): only the
# controls are refused.
NO_CONTROLS_PATTERN = f"^[^{_CONTROLS}]*$"


def contains_control_characters(text: str) -> bool:
    return _CONTROL.search(text) is not None


def draws_nothing(text: str) -> bool:
    """Whether ``text`` is only whitespace and characters that draw nothing (above)."""
    return _INVISIBLE_ONLY.fullmatch(text) is not None


def normalised_text(
    value: str, *, field: str, max_characters: int, trim: bool = False, visible: bool = False
) -> str:
    """NFC-normalise ``value`` (and trim it, if asked); enforce 1 to ``max_characters``
    code points, not only whitespace (with ``visible``, not only what draws nothing), and
    no control characters."""
    whole = unicodedata.normalize("NFC", value)
    text = whole.strip() if trim else whole
    bounds = f"{field} must be 1 to {max_characters} characters"
    if not value:
        problem, message = "too_short", bounds
    elif len(text) > max_characters:
        problem, message = "too_long", bounds
    elif not text or text.isspace():
        problem, message = "blank", f"{field} must contain more than whitespace"
    elif visible and draws_nothing(text):
        problem, message = "blank", f"{field} must contain something visible"
    # Before trimming too: str.strip() takes some controls (U+001C to U+001F, U+0085) for
    # whitespace, and the rule is about what was sent.
    elif contains_control_characters(whole):
        problem, message = "control_character", f"{field} must not contain control characters"
    else:
        return text
    raise ValidationFailed(message, [FieldProblem(field, problem)])


# --- direction -----------------------------------------------------------------------------

# Bidi controls: embeddings and overrides (closed by PDF), isolates (closed by PDI).
_LRE, _RLE, _PDF, _LRO, _RLO = "\u202a", "\u202b", "\u202c", "\u202d", "\u202e"
_LRI, _RLI, _FSI, _PDI = "\u2066", "\u2067", "\u2068", "\u2069"
_EMBEDDINGS = frozenset((_LRE, _RLE, _LRO, _RLO))
_ISOLATES = frozenset((_LRI, _RLI, _FSI))
# Text that can reorder what follows it: a right-to-left letter, an Arabic digit, or any
# explicit bidi control or mark. Text without one reads the same isolated or not, and is
# left as it is (no invisible characters in a plain Latin or CJK name).
_DIRECTIONAL = regex.compile(
    r"[\p{Bidi_Class=R}\p{Bidi_Class=AL}\p{Bidi_Class=AN}"
    r"\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]"
)
# Paragraph separators (bidi class B): each ends every embedding, so each line is isolated
# on its own.
_PARAGRAPHS = re.compile("(\r\n|[\n\r\x1c-\x1e\x85\u2029])")


def _isolated_line(line: str) -> str:
    """``line`` between FSI and PDI, its own controls balanced: a closer with nothing of
    the line's to close is dropped (a PDI would end our isolate early), and whatever the
    line leaves open is closed before our PDI (which would close it anyway under
    Unicode 6.3's rules; the explicit PDF also holds an override in older renderers)."""
    out: list[str] = [_FSI]
    open_: list[str] = []  # the closer each still-open control needs, innermost last
    for c in line:
        if c in _EMBEDDINGS:
            open_.append(_PDF)
        elif c in _ISOLATES:
            open_.append(_PDI)
        elif c == _PDF:
            if not open_ or open_[-1] != _PDF:
                continue  # closes nothing of the line's (or would reach past an isolate)
            open_.pop()
        elif c == _PDI:
            if _PDI not in open_:
                continue
            while open_[-1] != _PDI:  # a PDI closes the embeddings opened inside it
                out.append(open_.pop())
            open_.pop()
        out.append(c)
    out.extend(reversed(open_))
    out.append(_PDI)
    return "".join(out)


def isolated(text: str) -> str:
    """``text`` a person wrote, made safe to set among our own words where markup cannot
    isolate it (a ``<title>``, a meta tag, an ``alt``, a mail, a push, an ActivityPub
    ``name``): each line between FSI and PDI with its bidi controls balanced, so that a
    right-to-left override in a name cannot turn the words after it backwards. Text with
    nothing directional in it is returned as it is."""
    if _DIRECTIONAL.search(text) is None:
        return text
    parts = _PARAGRAPHS.split(text)
    # split() with a group keeps the separators at odd indexes.
    return "".join(p if i % 2 or not p else _isolated_line(p) for i, p in enumerate(parts))
