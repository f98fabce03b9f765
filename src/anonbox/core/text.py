"""What counts as text a person typed, for every field that stores free text."""

from __future__ import annotations

import re
import unicodedata

from anonbox.core.errors import FieldProblem, ValidationFailed

# C0 controls other than tab, line feed and carriage return; DEL; C1 controls. NUL cannot be
# stored by PostgreSQL at all, and none of these is text a person typed.
_CONTROLS = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
_CONTROL = re.compile(f"[{_CONTROLS}]")
# What str.isspace() calls whitespace, but for the controls above (already refused).
_WHITESPACE = r"\t\n\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"


# The rule of ``normalised_text`` as the API document states it (a JSON Schema ``pattern``,
# in the syntax ECMA-262 and Python's ``re`` read alike): not only whitespace, and no
# control character. The service checks it in ``normalised_text``, which also names the
# problem (``blank``, ``control_character``); tests hold the two to the same answers.
def text_pattern(blank: str = "") -> str:
    """``TEXT_PATTERN`` where the characters of the class body ``blank`` (written as
    ``\\uXXXX`` escapes) count as whitespace too: a field whose service removes them."""
    return f"^(?![{_WHITESPACE}{blank}]*$)[^{_CONTROLS}]*$"


TEXT_PATTERN = text_pattern()
# The same for a field that may also be left blank (a bio: blank removes it): only the
# controls are refused.
NO_CONTROLS_PATTERN = f"^[^{_CONTROLS}]*$"


def contains_control_characters(text: str) -> bool:
    return _CONTROL.search(text) is not None


def normalised_text(value: str, *, field: str, max_characters: int, trim: bool = False) -> str:
    """NFC-normalise ``value`` (and trim it, if asked); enforce 1 to ``max_characters``
    code points, not only whitespace, and no control characters."""
    whole = unicodedata.normalize("NFC", value)
    text = whole.strip() if trim else whole
    bounds = f"{field} must be 1 to {max_characters} characters"
    if not value:
        problem, message = "too_short", bounds
    elif len(text) > max_characters:
        problem, message = "too_long", bounds
    elif not text or text.isspace():
        problem, message = "blank", f"{field} must contain more than whitespace"
    # Before trimming too: str.strip() takes some controls (U+001C to U+001F, U+0085) for
    # whitespace, and the rule is about what was sent.
    elif contains_control_characters(whole):
        problem, message = "control_character", f"{field} must not contain control characters"
    else:
        return text
    raise ValidationFailed(message, [FieldProblem(field, problem)])
