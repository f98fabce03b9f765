"""JSON from other servers, bounded before it is parsed: what the inbox is sent and what
``remote`` reads.

A peer chooses every byte, so the size is the caller's to bound (it reads at most its
limit), and this module refuses, before the parser runs, a body that is not UTF-8 or
that nests deeper than ``MAX_DEPTH``: a parser that recurses (msgspec does) would
otherwise run out of stack on ``[[[[…`` and the request end in a 500. The depth is
counted in one linear pass of C-level scanning (strings skipped with a regular
expression that cannot backtrack, brackets summed with ``accumulate``), so a hostile
body costs no more than its length. No SQL and no HTTP here.
"""

from __future__ import annotations

import re
from itertools import accumulate
from typing import Any

import msgspec

# Activities and actors nest a few levels (an Undo of a Follow, a Note's attachments and
# tags); 32 leaves room for any server's, and is far below what the parser can take.
MAX_DEPTH = 32

# A JSON string, escapes included, or an unterminated one to the end: possessive, so a
# body of stray quotes is scanned once rather than once per quote.
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = [0] * 256
for _open in b"[{":
    _STEP[_open] = 1
for _close in b"]}":
    _STEP[_close] = -1


class NotJSON(ValueError):
    """The body is not a JSON object this server reads; the message says why."""


def depth(body: bytes) -> int:
    """How deep the body's arrays and objects nest, strings left out (an upper bound for a
    body that is not JSON, which the parser then refuses)."""
    brackets = _STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def decode_object(body: bytes) -> dict[str, Any]:
    """The body as a JSON object; ``NotJSON`` for anything else, before parsing where the
    parser could fail otherwise than by refusing."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotJSON("The body is not UTF-8") from exc
    if depth(body) > MAX_DEPTH:
        raise NotJSON(f"The body nests deeper than {MAX_DEPTH} levels")
    try:
        document = msgspec.json.decode(body)
    except msgspec.DecodeError as exc:
        raise NotJSON("The body is not JSON") from exc
    if not isinstance(document, dict):
        raise NotJSON("The body is not a JSON object")
    return document
