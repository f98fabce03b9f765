"""ULIDs as rows and cursors rely on them: Crockford base32 of 48 bits of milliseconds and
80 random bits, sorting by time, strictly increasing within a process, distinct across a
fork."""

from __future__ import annotations

import base64
import os

from hypothesis import given
from hypothesis import strategies as st

from anonbox.core import ids

_FROM_BASE32HEX = str.maketrans(
    "0123456789ABCDEFGHIJKLMNOPQRSTUV", "0123456789abcdefghjkmnpqrstvwxyz"
)


def _reference(value: int) -> str:
    """The spelling by the standard library: base32hex of the value at the top of 160
    bits, 26 characters, respelled in Crockford's alphabet."""
    spelled = base64.b32hexencode((value << 30).to_bytes(20, "big"))[:26]
    return spelled.decode("ascii").translate(_FROM_BASE32HEX)


@given(st.integers(min_value=0, max_value=2**128 - 1))
def test_the_spelling_is_crockford_base32_of_the_128_bits(value: int) -> None:
    assert ids._spelled(value) == _reference(value)


def test_the_extremes_are_spelled_in_full() -> None:
    assert ids._spelled(0) == ids.FIRST_ULID
    assert ids._spelled(2**128 - 1) == _reference(2**128 - 1) == "7" + "z" * 25


def test_ids_carry_their_millisecond_and_sort_by_time() -> None:
    at = _unused_instant() + 123_456
    earlier, later = ids.new_ulid(at), ids.new_ulid(at + 5_000)
    assert ids.is_ulid(earlier)
    assert ids.is_ulid(later)
    assert int(_decode(later)) >> 80 == (at + 5_000) // 1000
    assert earlier < later


def test_ids_of_one_millisecond_strictly_increase() -> None:
    at = _unused_instant()
    made = [ids.new_ulid(at) for _ in range(5_000)]
    assert made == sorted(made)
    assert len(set(made)) == len(made)


def test_a_forked_child_draws_other_random_bits_than_its_parent() -> None:
    at = _unused_instant()  # a millisecond no id was made in yet: the random bits show
    ids.new_ulid(at - 10_000)  # the parent's pool of random bytes is filled
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child
        os.write(write, ids.new_ulid(at + 1_000_000).encode())
        os._exit(0)
    os.waitpid(child, 0)
    theirs = os.read(read, 26).decode()
    ours = ids.new_ulid(at + 1_000_000)
    os.close(read)
    os.close(write)
    assert theirs[:10] == ours[:10]  # the same millisecond
    assert theirs[10:] != ours[10:]


def _unused_instant() -> int:
    """An instant (µs) a second past every id this process made: ids made from it carry
    its millisecond, not a step from the last id."""
    return ((ids._last_value >> 80) + 1_000) * 1_000


def _decode(ulid: str) -> int:
    return int(
        ulid.translate(
            str.maketrans("0123456789abcdefghjkmnpqrstvwxyz", "0123456789ABCDEFGHIJKLMNOPQRSTUV")
        ),
        32,
    )
