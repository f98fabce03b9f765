"""What counts as text a person typed, for every field that stores free text."""

from __future__ import annotations

import re
import unicodedata

from anonbox.core.errors import FieldProblem, ValidationFailed

# C0 controls other than tab, line feed and carriage return; DEL; C1 controls. NUL cannot be
# stored by PostgreSQL at all, and none of these is text a person typed.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def contains_control_characters(text: str) -> bool:
    return _CONTROL.search(text) is not None


def normalised_text(value: str, *, field: str, max_characters: int, trim: bool = False) -> str:
    """NFC-normalise ``value`` (and trim it, if asked); enforce 1 to ``max_characters``
    code points, not only whitespace, and no control characters."""
    text = unicodedata.normalize("NFC", value)
    if trim:
        text = text.strip()
    bounds = f"{field} must be 1 to {max_characters} characters"
    if not value:
        problem, message = "too_short", bounds
    elif len(text) > max_characters:
        problem, message = "too_long", bounds
    elif not text or text.isspace():
        problem, message = "blank", f"{field} must contain more than whitespace"
    elif contains_control_characters(text):
        problem, message = "control_character", f"{field} must not contain control characters"
    else:
        return text
    raise ValidationFailed(message, [FieldProblem(field, problem)])
