"""What a request body must be: JSON, declared as JSON, present, decodable, and typed
exactly as the document says; and whether the caller would rather read a page."""

from __future__ import annotations

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
