"""The single place that turns any exception into the error envelope, or into the page a
browser reads.

What an error says (status, code, message, headers) is decided here, once, and goes out as
the envelope. A browser that opened an address (``core.requests.prefers_html``) and met
an error a person meets that way (``_SHOWN_AS_PAGES``) gets a page instead, drawn by the
``ErrorPage`` the application was assembled with: ``main.py`` hands ``exception_handlers``
the web layer's (``web.infra.routing.error_page_for``), so core draws no HTML and imports
nothing of ``web``. API clients (no ``Accept``, ``*/*``, ``application/json``) always get
the envelope. Page routes handle their own errors (``web.infra.routing.page_router``).
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Mapping
from functools import partial
from typing import Any, Protocol

from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.types import ExceptionHandlersMap

from anonbox.core.envelope import UNMATCHED, Challenge, error_envelope
from anonbox.core.envelope import request_id as envelope_request_id
from anonbox.core.errors import AnonboxError, FieldProblem, Gone
from anonbox.core.requests import prefers_html
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

# What a person meets by opening an address: nothing there (404, and a link that is gone),
# not that way (405), not so often (429), or broken (5xx). The other refusals are about a
# credential or a body, which only an API client sends and can fix: they stay envelopes.
_SHOWN_AS_PAGES = frozenset({404, 405, 410, 429})


class ErrorPage(Protocol):
    """Draws an error as a page, with its status and these headers (``Retry-After``,
    ``Allow``). ``message`` is what the envelope says, or None where that speaks of HTTP
    itself (an unknown route, a method, a malformed value): a page then says it in its
    own words."""

    def __call__(
        self,
        request: Request[Any, Any, Any],
        status: int,
        code: str,
        message: str | None,
        headers: Mapping[str, str],
    ) -> Response[Any]: ...


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
    *,
    page: ErrorPage | None,
    said_on_a_page: str | None,
    page_status: int | None = None,
) -> Response[Any]:
    """The envelope, or the page (with ``page_status`` where a page says more than the
    envelope: 410 for what is gone)."""
    page_status = page_status or status
    shown_as_page = page_status in _SHOWN_AS_PAGES or page_status >= 500
    if page is not None and shown_as_page and prefers_html(request):
        return page(request, page_status, code, said_on_a_page, headers or {})
    body = error_envelope(request.scope, status, code, message, fields, challenge)
    return Response(
        content=body, status_code=status, headers=headers, media_type="application/json"
    )


def handle_anonbox_error(
    request: Request[Any, Any, Any], exc: AnonboxError, page: ErrorPage | None = None
) -> Response[Any]:
    retry_after = getattr(exc, "retry_after", None)  # 429 and 503 say when to come back
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    fields = getattr(exc, "fields", None)
    challenge = getattr(exc, "challenge", None)  # a post during a flood needs a proof of work
    return _respond(
        request,
        exc.status_code,
        exc.code,
        exc.message,
        fields,
        headers,
        challenge,
        page=page,
        said_on_a_page=exc.message,
        page_status=410 if isinstance(exc, Gone) else None,  # as web.infra.routing's pages
    )


def handle_validation_error(
    request: Request[Any, Any, Any], exc: ValidationException, page: ErrorPage | None = None
) -> Response[Any]:
    fields = _field_problems(exc.extra)
    if fields:
        first = exc.extra[0] if isinstance(exc.extra, list) else {}
        detail = str(first.get("message", "")).replace("`", "") if isinstance(first, dict) else ""
        message = f"Invalid {fields[0].field}: {detail}" if detail else f"Invalid {fields[0].field}"
    else:
        message = "The request body is not valid JSON" if "JSON" in exc.detail else exc.detail
    return _respond(
        request, 400, "validation_failed", message, fields, page=page, said_on_a_page=None
    )


def handle_http_exception(
    request: Request[Any, Any, Any], exc: HTTPException, page: ErrorPage | None = None
) -> Response[Any]:
    status = exc.status_code
    if status >= 500:
        return handle_unexpected(request, exc, page)
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
    code = _CODES.get(status, "error")
    return _respond(
        request, status, code, message, None, headers or None, page=page, said_on_a_page=None
    )


def handle_unexpected(
    request: Request[Any, Any, Any], exc: Exception, page: ErrorPage | None = None
) -> Response[Any]:
    # The id the answer's X-Request-ID header and the request's log line carry.
    request_id = envelope_request_id(request.scope) or secrets.token_hex(8)
    # The route template, never the path: a path names links and messages (docs/safety.md).
    route = request.scope.get("path_template") or UNMATCHED
    logger.exception(
        "unhandled error, request_id=%s, route=%s %s", request_id, request.method, route
    )
    message = f"Something went wrong on our side; it has been logged as {request_id}"
    return _respond(request, 500, "internal_error", message, page=page, said_on_a_page=message)


def exception_handlers(page: ErrorPage | None = None) -> ExceptionHandlersMap:
    """Every error's handler: the envelope, or ``page`` for a request that prefers HTML."""
    return {
        AnonboxError: partial(handle_anonbox_error, page=page),
        ValidationException: partial(handle_validation_error, page=page),
        HTTPException: partial(handle_http_exception, page=page),
        Exception: partial(handle_unexpected, page=page),
    }


EXCEPTION_HANDLERS = exception_handlers()  # the envelope, whatever the caller prefers
