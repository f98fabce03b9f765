"""The single place that turns any exception into the error envelope."""

from __future__ import annotations

import logging
import re
import secrets
from typing import Any

from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.types import ExceptionHandlersMap

from anonbox.core.envelope import UNMATCHED, Challenge, error_envelope
from anonbox.core.envelope import request_id as envelope_request_id
from anonbox.core.errors import AnonboxError, FieldProblem
from anonbox.core.routing import taken_elsewhere

logger = logging.getLogger("anonbox.errors")

_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
}

_BACKTICKED = re.compile(r"`([^`]+)`")


def _problem(detail: str) -> str:
    """A stable problem code from msgspec's (stable) validation wording."""
    if detail.startswith("Object missing required field"):
        return "missing"
    if "length <=" in detail:
        return "too_long"
    if "length >=" in detail:
        return "too_short"
    if "matching regex" in detail:
        return "invalid"
    if "` >=" in detail or "` <=" in detail:
        return "out_of_range"
    if detail.startswith("Expected"):
        return "wrong_type"
    return "invalid"


def _field_problems(extra: Any) -> list[FieldProblem]:
    problems = []
    for item in extra if isinstance(extra, list) else []:
        if not isinstance(item, dict):
            continue
        detail = str(item.get("message", ""))
        field = str(item.get("key") or "body")
        if field == "data":  # msgspec reports a missing field against the whole body
            named = _BACKTICKED.search(detail)
            field = named.group(1) if named and detail.startswith("Object missing") else "body"
        problems.append(FieldProblem(field=field, problem=_problem(detail)))
    return problems


def _respond(
    request: Request[Any, Any, Any],
    status: int,
    code: str,
    message: str,
    fields: list[FieldProblem] | None = None,
    headers: dict[str, str] | None = None,
    challenge: Challenge | None = None,
) -> Response[Any]:
    body = error_envelope(request.scope, status, code, message, fields, challenge)
    return Response(
        content=body, status_code=status, headers=headers, media_type="application/json"
    )


def handle_anonbox_error(request: Request[Any, Any, Any], exc: AnonboxError) -> Response[Any]:
    retry_after = getattr(exc, "retry_after", None)  # 429 and 503 say when to come back
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    fields = getattr(exc, "fields", None)
    challenge = getattr(exc, "challenge", None)  # a post during a flood needs a proof of work
    return _respond(request, exc.status_code, exc.code, exc.message, fields, headers, challenge)


def handle_validation_error(
    request: Request[Any, Any, Any], exc: ValidationException
) -> Response[Any]:
    fields = _field_problems(exc.extra)
    if fields:
        first = exc.extra[0] if isinstance(exc.extra, list) else {}
        detail = str(first.get("message", "")).replace("`", "") if isinstance(first, dict) else ""
        message = f"Invalid {fields[0].field}: {detail}" if detail else f"Invalid {fields[0].field}"
    else:
        message = "The request body is not valid JSON" if "JSON" in exc.detail else exc.detail
    return _respond(request, 400, "validation_failed", message, fields)


def handle_http_exception(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    status = exc.status_code
    if status >= 500:
        return handle_unexpected(request, exc)
    if status == 405 and taken_elsewhere(request.app, request.method, request.url.path):
        status = 404  # e.g. GET /message/{link_id}/unanswered: a message id, and none such
    if status == 404:
        message = (
            f"Nothing here: {request.method} {request.url.path} is not a route of this service"
        )
    elif status == 405:
        message = f"{request.method} is not allowed on {request.url.path}"
    elif status == 413:
        message = "The request body is larger than this service accepts"
    else:
        message = exc.detail
    kept = {"allow", "retry-after"} if status == 405 else {"retry-after"}
    headers = {k: v for k, v in (exc.headers or {}).items() if k.lower() in kept}
    return _respond(request, status, _CODES.get(status, "error"), message, None, headers or None)


def handle_unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    # The id the answer's X-Request-ID header and the request's log line carry.
    request_id = envelope_request_id(request.scope) or secrets.token_hex(8)
    # The route template, never the path: a path names links and messages (docs/safety.md).
    route = request.scope.get("path_template") or UNMATCHED
    logger.exception(
        "unhandled error, request_id=%s, route=%s %s", request_id, request.method, route
    )
    message = f"Something went wrong on our side; it has been logged as {request_id}"
    return _respond(request, 500, "internal_error", message)


EXCEPTION_HANDLERS: ExceptionHandlersMap = {
    AnonboxError: handle_anonbox_error,
    ValidationException: handle_validation_error,
    HTTPException: handle_http_exception,
    Exception: handle_unexpected,
}
