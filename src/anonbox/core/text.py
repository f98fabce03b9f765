"""What counts as text a person typed, for every field that stores free text."""

from __future__ import annotations

import re

# C0 controls other than tab, line feed and carriage return; DEL; C1 controls. NUL cannot be
# stored by PostgreSQL at all, and none of these is text a person typed.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def contains_control_characters(text: str) -> bool:
    return _CONTROL.search(text) is not None
