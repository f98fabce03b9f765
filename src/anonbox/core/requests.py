"""What a request body must be: JSON, declared as JSON, present, decodable, and typed
exactly as the document says; whether the caller would rather read a page; and which of
the media types an address offers a caller's ``Accept`` ranks first (``negotiate``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
from litestar import Request
from litestar.exceptions import SerializationException, ValidationException

from anonbox.core.errors import FieldProblem, UnsupportedMediaType, ValidationFailed


class JSONRequest(Request[Any, Any, Any]):
    async def json(self) -> Any:
        try:
            return await super().json()
        # Invalid UTF-8 and absurd nesting escape the decoder as these, not as its own error.
        except (SerializationException, UnicodeDecodeError, RecursionError) as exc:
            raise ValidationFailed(
                "The request body is not valid JSON", [FieldProblem("body", "invalid_json")]
            ) from exc


def prefers_html(request: Request[Any, Any, Any]) -> bool:
    """Whether ``Accept`` ranks ``text/html`` above ``application/json``: a browser opening
    an address does; a client sending no ``Accept``, ``*/*`` or ``application/json`` does
    not. Between equals, the one named first wins."""
    if not request.headers.get("accept"):
        return False
    return request.accept.best_match(["application/json", "text/html"]) == "text/html"


# What one Accept header is read for, at most: longer is junk, and answered as junk.
MAX_MEDIA_RANGES = 64
_QVALUE = re.compile(r"0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?")


@dataclass(frozen=True, slots=True)
class MediaRange:
    """One element of ``Accept``: ``type/subtype`` (either ``*``), its parameters (names
    lowercased, values unquoted), and its weight."""

    type: str
    subtype: str
    params: tuple[tuple[str, str], ...]
    q: float


def _split(text: str, sep: str) -> list[str]:
    """``text`` cut at ``sep`` outside quoted strings (a quoted comma is a value's)."""
    parts: list[str] = []
    current: list[str] = []
    quoted = escaped = False
    for char in text:
        if escaped:
            escaped = False
        elif quoted and char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == sep and not quoted:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


def _unquoted(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        inner, out, escaped = value[1:-1], [], False
        for char in inner:
            if char == "\\" and not escaped:
                escaped = True
                continue
            out.append(char)
            escaped = False
        return "".join(out)
    return value


def _weight(value: str) -> float | None:
    """A qvalue as RFC 9110 §12.4.2 writes it (0 to 1, three decimals at most), else None."""
    value = value.strip()
    return float(value) if _QVALUE.fullmatch(value) else None


def media_ranges(accept: str) -> list[MediaRange]:
    """The media ranges of an ``Accept`` header, in order; an element that is not one
    (no ``/``, a bad q) is left out, as if not sent. Parameters after ``q`` are accept-
    extensions and do not narrow the range."""
    ranges = []
    for element in _split(accept, ",")[:MAX_MEDIA_RANGES]:
        pieces = _split(element, ";")
        kind, slash, sub = pieces[0].strip().lower().partition("/")
        if not slash or not kind or not sub or "/" in sub or (kind == "*" and sub != "*"):
            continue
        params: list[tuple[str, str]] = []
        q: float | None = 1.0
        for piece in pieces[1:]:
            name, equals, value = piece.partition("=")
            name = name.strip().lower()
            if not equals or not name:
                continue
            if name == "q":
                q = _weight(value)
                break
            params.append((name, _unquoted(value)))
        if q is not None:
            ranges.append(MediaRange(kind, sub, tuple(params), q))
    return ranges


def _offered(offer: str) -> tuple[str, str, dict[str, str]]:
    kind, _, rest = offer.partition("/")
    sub, *pieces = _split(rest, ";")
    params = {}
    for piece in pieces:
        name, _, value = piece.partition("=")
        params[name.strip().lower()] = _unquoted(value)
    return kind.strip().lower(), sub.strip().lower(), params


def _param_matches(name: str, wanted: str, offered: dict[str, str]) -> bool:
    if name not in offered:
        return False
    if name == "profile":  # a list of URIs, any order: the range's must all be offered
        return set(wanted.split()) <= set(offered[name].split())
    if name == "charset":
        return wanted.lower() == offered[name].lower()
    return wanted == offered[name]


def _specificity(r: MediaRange, offer: tuple[str, str, dict[str, str]]) -> int | None:
    """How closely ``r`` names ``offer`` (RFC 9110 §12.5.1), or None if it does not."""
    kind, sub, params = offer
    if r.type != "*" and r.type != kind:
        return None
    if r.subtype != "*" and r.subtype != sub:
        return None
    if not all(_param_matches(name, value, params) for name, value in r.params):
        return None
    return (r.type != "*") + (r.subtype != "*") + len(r.params)


def negotiate(accept: str | None, offers: Sequence[str]) -> str | None:
    """Which of ``offers`` (media types, with parameters) ``accept`` ranks first: each
    offer weighs what the most specific range naming it says (``text/html`` over
    ``text/*`` over ``*/*``; ``application/ld+json; profile="…"`` over
    ``application/ld+json``), ``q=0`` refuses it, and between equal weights the offer
    named first wins. No ``Accept`` (or one with no range in it): the first offer. None:
    the caller accepts none of them."""
    ranges = media_ranges(accept) if accept else []
    if not ranges:
        return offers[0] if offers else None
    best: str | None = None
    best_q = 0.0
    for offer in offers:
        parsed = _offered(offer)
        matched = [(found, r.q) for r in ranges if (found := _specificity(r, parsed)) is not None]
        if not matched:
            continue
        top = max(found for found, _ in matched)
        # Two ranges alike in specificity (a header that names one twice): the first's.
        q = next(q for found, q in matched if found == top)
        if q > best_q:
            best, best_q = offer, q
    return best


async def require_json_body(request: Request[Any, Any, Any]) -> None:
    """Before a handler that takes a body: 400 if a required one is empty, 415 unless JSON,
    400 unless every value has its declared JSON type.

    Page routes (``opt["html"]``, see ``anonbox.web``) take HTML forms and check their own."""
    if request.route_handler.opt.get("html"):
        return
    data = request.route_handler.parsed_fn_signature.parameters.get("data")
    if data is None:
        return
    body = await request.body()
    if not body:
        if data.has_default:  # an optional body may be left out altogether
            return
        raise ValidationFailed(
            "The request body is empty; send a JSON object", [FieldProblem("body", "missing")]
        )
    media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media_type != "application/json" and not media_type.endswith("+json"):
        raise UnsupportedMediaType("Send the body as JSON, with Content-Type: application/json")
    strictly_typed(body, data.annotation)


def strictly_typed(body: bytes, annotation: Any) -> None:
    """Refuse a body whose values only convert to their declared types: ``"paused": 1`` or
    ``"true"`` is not a boolean, ``"3"`` is not an integer.

    Litestar validates the body together with the query and path parameters, in msgspec's
    lax mode that strings from a URL need; a JSON body has real types and gets strict mode.
    The error is the one Litestar would raise for a wrong type, so it reads the same."""
    try:
        value = msgspec.json.decode(body)
    # Not JSON at all (invalid UTF-8 and absurd nesting escape as these): the handler's own
    # decoding answers that, in ``JSONRequest.json``.
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return
    try:
        msgspec.convert(_whole_numbers(value), type=annotation, strict=True)
    except RecursionError as exc:  # nesting msgspec decodes, but no body of ours has
        raise ValidationFailed(
            "The request body is not valid JSON", [FieldProblem("body", "invalid_json")]
        ) from exc
    except msgspec.ValidationError as exc:
        detail, _, where = str(exc).partition(" - at `$")
        key = where.rstrip("`").removeprefix(".") or "data"
        raise ValidationException(
            detail="Validation failed", extra=[{"message": detail, "key": key, "source": "body"}]
        ) from exc


def _whole_numbers(value: Any) -> Any:
    """``value`` with every float that is a whole number as an int: to JSON, and to JSON
    Schema's ``integer``, ``166.0`` is ``166`` (strict msgspec would call it a float)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_whole_numbers(item) for item in value]
    if isinstance(value, dict):
        return {key: _whole_numbers(item) for key, item in value.items()}
    return value
