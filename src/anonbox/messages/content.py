"""The rules for message text, shared by messages and replies (and report reasons)."""

from __future__ import annotations

from anonbox.core.text import normalised_text

MAX_CHARACTERS = 500


def normalised_content(value: str, field: str = "message_content") -> str:
    """NFC-normalised text of 1 to 500 code points, not only whitespace, no controls.

    The text is otherwise kept exactly as sent: escaping is the renderer's job.
    """
    return normalised_text(value, field=field, max_characters=MAX_CHARACTERS)
