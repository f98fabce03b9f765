"""The response envelope every endpoint answers with, success or error, built only here."""

from __future__ import annotations

import time
from collections.abc import Mapping, MutableMapping
from datetime import UTC, datetime
from typing import Annotated, Any, Generic, Literal, TypeVar

import msgspec
from litestar import Request
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import KwargDefinition
from litestar.types import ASGIApp, Receive, Send

from anonbox.core.client import client_ip
from anonbox.core.errors import FieldProblem

S = TypeVar("S", bound=int)  # the operation's one success status, as a Literal for OpenAPI
T = TypeVar("T")
OK = Literal[200]
Created = Literal[201]
AnyRequest = Request[Any, Any, Any]
BODY_ERRORS = (413, 415)  # what any endpoint that takes a JSON body may also answer

Timestamp = Annotated[
    str,
    KwargDefinition(format="date-time", description="ISO 8601, UTC"),
]

_STARTED = "anonbox.started"  # scope key: (perf_counter, wall-clock datetime) at arrival


class Metadata(msgspec.Struct):
    method: str
    url: str
    execution_time_ms: float
    ip: str
    timestamp: Timestamp


class Envelope(msgspec.Struct, Generic[S, T]):
    status_code: S
    message: str
    data: T
    metadata: Metadata


class ErrorField(msgspec.Struct):
    field: str
    problem: str


class ErrorDetail(msgspec.Struct):
    code: str
    fields: list[ErrorField]


class ErrorEnvelope(msgspec.Struct):
    status_code: int
    message: str
    data: None
    error: ErrorDetail
    metadata: Metadata


class RequestClock:
    """Outermost ASGI layer: notes when a request arrived, before routing, so that even
    a 404 for an unknown route can report its execution time."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope[_STARTED] = (time.perf_counter(), datetime.now(UTC))
        await self.app(scope, receive, send)  # type: ignore[arg-type]


def metadata(scope: Mapping[str, Any]) -> Metadata:
    started: float
    arrived: datetime
    started, arrived = scope.get(_STARTED) or (time.perf_counter(), datetime.now(UTC))
    raw_path = scope.get("raw_path") or scope["path"].encode()
    url = raw_path.decode("latin-1")
    if query := scope.get("query_string"):
        url = f"{url}?{query.decode('latin-1')}"
    return Metadata(
        method=scope.get("method", "GET"),
        url=url,
        execution_time_ms=round((time.perf_counter() - started) * 1000, 3),
        ip=client_ip(scope),
        timestamp=arrived.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    )


def envelope(
    request: Request[Any, Any, Any], status_code: S, message: str, data: T
) -> Envelope[S, T]:
    return Envelope(
        status_code=status_code, message=message, data=data, metadata=metadata(request.scope)
    )


def error_envelope(
    scope: Mapping[str, Any],
    status_code: int,
    code: str,
    message: str,
    fields: list[FieldProblem] | None = None,
) -> ErrorEnvelope:
    return ErrorEnvelope(
        status_code=status_code,
        message=message,
        data=None,
        error=ErrorDetail(code=code, fields=[ErrorField(f.field, f.problem) for f in fields or []]),
        metadata=metadata(scope),
    )


_DESCRIPTIONS = {
    400: "Invalid request: malformed JSON, wrong types, out-of-bound lengths or bad parameters",
    401: "Credential missing, unknown, expired or revoked",
    403: "Valid credential, but not the creator of this link",
    404: "Unknown link, message or reply",
    405: "Method not allowed on this path",
    409: "Conflict with the current state",
    413: "Request body larger than the configured limit",
    415: "Body is not application/json",
    429: "Too many requests; see Retry-After",
    502: "An upstream identity provider failed or could not be reached",
    503: "The database is unavailable, or sign-in with Google is not configured; see Retry-After",
}


def error_responses(*status_codes: int) -> dict[int, ResponseSpec]:
    """OpenAPI entries documenting the error envelope for the given statuses."""
    return {
        code: ResponseSpec(
            data_container=ErrorEnvelope, description=_DESCRIPTIONS[code], generate_examples=False
        )
        for code in status_codes
    }
