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

import os
import re
import secrets
import threading

_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
# Every pair of characters, by the 10 bits it spells: a ULID is 13 lookups.
_PAIRS = [a + b for a in _CROCKFORD for b in _CROCKFORD]
LINK_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"  # 31: no 0 o 1 l i
# 31**11 ~ 2.5e16 (54.5 bits): not enumerable, and more than the 36**10 ~ 3.7e15
# (51.7 bits) of the 10 characters of [0-9a-z] that link ids had before.
LINK_ID_LENGTH = 11

ULID_PATTERN = re.compile(r"^[0-9a-hjkmnp-tv-z]{26}$")
FIRST_ULID = "0" * 26  # below every id: a cursor from the very beginning


_RANDOM_BITS = 80
# Random bytes are read from the OS 4 KiB at a time, not 10 bytes a call: a write to a
# creator with ten webhooks makes ten delivery ids, and os.urandom per id (with the
# base32 spelling) was most of the relay's fan-out in a profile (docs/decisions.md,
# issue 43 item 5). Forgotten in a forked child, so no two processes share bytes.
_POOL_BYTES = 4096
_pool = b""
_taken = 0
_last_value = 0
_lock = threading.Lock()


def _forget_pool() -> None:
    global _pool, _taken
    _pool, _taken = b"", 0


os.register_at_fork(after_in_child=_forget_pool)


def _random_bits(nbytes: int) -> int:
    """``8 * nbytes`` random bits from the OS; the caller holds ``_lock``."""
    global _pool, _taken
    if _taken + nbytes > len(_pool):
        _pool, _taken = os.urandom(_POOL_BYTES), 0
    start, _taken = _taken, _taken + nbytes
    return int.from_bytes(_pool[start:_taken], "big")


def new_ulid(epoch_us: int) -> str:
    global _last_value
    with _lock:
        candidate = ((epoch_us // 1000) << _RANDOM_BITS) | _random_bits(_RANDOM_BITS // 8)
        if candidate >> _RANDOM_BITS <= _last_value >> _RANDOM_BITS:
            # Same (or an earlier) millisecond: step up unpredictably, never sideways.
            candidate = _last_value + 1 + _random_bits(5)
        _last_value = candidate
    return _spelled(candidate)


def _spelled(value: int) -> str:
    """The 128-bit ``value`` in 26 characters of 5 bits (two zero bits in front), the
    most significant first: 13 pairs of 10 bits."""
    p = _PAIRS
    return (
        p[value >> 120]
        + p[(value >> 110) & 1023]
        + p[(value >> 100) & 1023]
        + p[(value >> 90) & 1023]
        + p[(value >> 80) & 1023]
        + p[(value >> 70) & 1023]
        + p[(value >> 60) & 1023]
        + p[(value >> 50) & 1023]
        + p[(value >> 40) & 1023]
        + p[(value >> 30) & 1023]
        + p[(value >> 20) & 1023]
        + p[(value >> 10) & 1023]
        + p[value & 1023]
    )


def new_link_id() -> str:
    return "".join(secrets.choice(LINK_ALPHABET) for _ in range(LINK_ID_LENGTH))


def is_ulid(value: str) -> bool:
    return ULID_PATTERN.match(value) is not None
