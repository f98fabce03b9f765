"""The rules for message text, shared by messages and replies."""

from __future__ import annotations

import unicodedata

from anonbox.core.errors import FieldProblem, ValidationFailed
from anonbox.core.text import contains_control_characters

MAX_CHARACTERS = 500


def normalised_content(value: str, field: str = "message_content") -> str:
    """NFC-normalise ``value``; enforce 1 to 500 code points, not only whitespace, no controls.

    The text is otherwise kept exactly as sent: escaping is the renderer's job.
    """
    text = unicodedata.normalize("NFC", value)
    if not text:
        problem, message = "too_short", f"{field} must be 1 to {MAX_CHARACTERS} characters"
    elif len(text) > MAX_CHARACTERS:
        problem, message = "too_long", f"{field} must be 1 to {MAX_CHARACTERS} characters"
    elif text.isspace():
        problem, message = "blank", f"{field} must contain more than whitespace"
    elif contains_control_characters(text):
        problem, message = "control_character", f"{field} must not contain control characters"
    else:
        return text
    raise ValidationFailed(message, [FieldProblem(field, problem)])
