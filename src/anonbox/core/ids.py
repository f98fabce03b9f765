"""Identifiers.

Rows get ULIDs (Crockford base32, lower case): 48 bits of milliseconds then 80 random
bits, so they sort by creation time in byte order on both databases and serve as
cursors. Within one process they are strictly increasing: an id made in the same
millisecond as the previous one (or while the clock steps back) is the previous one
plus a random step, so "newest first" holds even for messages a millisecond apart.
Links get short random ids, since they are typed and shared by people: lower-case
letters and digits without the look-alikes ``0 o 1 l i``, so an id read off a screen or a
story can be typed back. Ids made before that (10 of ``[0-9a-z]``) stay valid: paths
accept any ``[A-Za-z0-9_-]{1,64}`` (``core.paths.LinkId``).
"""

from __future__ import annotations

import base64
import re
import secrets
import threading

_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
_FROM_BASE32HEX = str.maketrans("0123456789ABCDEFGHIJKLMNOPQRSTUV", _CROCKFORD)
LINK_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"  # 31: no 0 o 1 l i
# 31**11 ~ 2.5e16 (54.5 bits): not enumerable, and more than the 36**10 ~ 3.7e15
# (51.7 bits) of the 10 characters of [0-9a-z] that link ids had before.
LINK_ID_LENGTH = 11

ULID_PATTERN = re.compile(r"^[0-9a-hjkmnp-tv-z]{26}$")
FIRST_ULID = "0" * 26  # below every id: a cursor from the very beginning


_RANDOM_BITS = 80
_last_value = 0
_lock = threading.Lock()


def new_ulid(epoch_us: int) -> str:
    global _last_value
    candidate = ((epoch_us // 1000) << _RANDOM_BITS) | secrets.randbits(_RANDOM_BITS)
    with _lock:
        if candidate >> _RANDOM_BITS <= _last_value >> _RANDOM_BITS:
            # Same (or an earlier) millisecond: step up unpredictably, never sideways.
            candidate = _last_value + 1 + secrets.randbits(40)
        _last_value = candidate
    # 26 characters of 5 bits hold 130: the value's 128 and two zero bits in front.
    # base32hex spells 5-bit groups from the most significant one, in 0-9A-V: move the
    # value to the top of 160 bits, keep the first 26 characters and respell them.
    spelled = base64.b32hexencode((candidate << 30).to_bytes(20, "big"))[:26]
    return spelled.decode("ascii").translate(_FROM_BASE32HEX)


def new_link_id() -> str:
    return "".join(secrets.choice(LINK_ALPHABET) for _ in range(LINK_ID_LENGTH))


def is_ulid(value: str) -> bool:
    return ULID_PATTERN.match(value) is not None
