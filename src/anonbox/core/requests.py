"""What a request body must be: JSON, declared as JSON, present, and decodable."""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.exceptions import SerializationException

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


async def require_json_body(request: Request[Any, Any, Any]) -> None:
    """Before a handler that takes a body: 400 if a required one is empty, 415 unless JSON.

    Page routes (``opt["html"]``, see ``anonbox.web``) take HTML forms and check their own."""
    if request.route_handler.opt.get("html"):
        return
    data = request.route_handler.parsed_fn_signature.parameters.get("data")
    if data is None:
        return
    if not await request.body():
        if data.has_default:  # an optional body may be left out altogether
            return
        raise ValidationFailed(
            "The request body is empty; send a JSON object", [FieldProblem("body", "missing")]
        )
    media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media_type != "application/json" and not media_type.endswith("+json"):
        raise UnsupportedMediaType("Send the body as JSON, with Content-Type: application/json")
