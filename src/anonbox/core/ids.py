"""Identifiers.

Rows get ULIDs (Crockford base32, lower case): 48 bits of milliseconds then 80 random
bits, so they sort by creation time in byte order on both databases and serve as
cursors. Links get short random ids, since they are typed and shared by people.
"""

from __future__ import annotations

import re
import secrets

_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
_LINK_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
LINK_ID_LENGTH = 10  # 36**10 ~ 3.7e15: not enumerable

ULID_PATTERN = re.compile(r"^[0-9a-hjkmnp-tv-z]{26}$")


def new_ulid(epoch_us: int) -> str:
    value = ((epoch_us // 1000) << 80) | secrets.randbits(80)
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def new_link_id() -> str:
    return "".join(secrets.choice(_LINK_ALPHABET) for _ in range(LINK_ID_LENGTH))


def is_ulid(value: str) -> bool:
    return ULID_PATTERN.match(value) is not None
