"""The response envelope every endpoint answers with, success or error, built only here."""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Mapping, MutableMapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Generic, Literal, TypeVar

import msgspec
from litestar import Request
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import KwargDefinition
from litestar.types import ASGIApp, Message, Receive, Send

from anonbox.core.client import client_ip
from anonbox.core.errors import FieldProblem
from anonbox.core.logs import current_request_id, log_request

if TYPE_CHECKING:
    from anonbox.core.metrics import Metrics

UNMATCHED = "unmatched"  # the route of a request that matched no route (404, 405)

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
_REQUEST_ID = "anonbox.request_id"  # scope key: the request's id
# An incoming X-Request-ID is kept when it is this: short, and nothing a log could misread.
_WELL_FORMED_ID = re.compile(rb"[A-Za-z0-9._:-]{1,128}")


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


class Challenge(msgspec.Struct):
    """A proof-of-work challenge (ALTCHA, version 1), carried by a 429 whose code is
    ``proof_of_work_required``: find ``number`` in [0, maxnumber] whose SHA-256 of
    ``salt + number`` is ``challenge``."""

    algorithm: str
    challenge: str
    maxnumber: int
    salt: str
    signature: str


class ErrorDetail(msgspec.Struct, omit_defaults=True):
    code: str
    fields: list[ErrorField]
    challenge: Challenge | None = None


class ErrorEnvelope(msgspec.Struct):
    status_code: int
    message: str
    data: None
    error: ErrorDetail
    metadata: Metadata


class RequestClock:
    """Outermost ASGI layer, around routing and every error handler.

    It notes when a request arrived (so that even a 404 for an unknown route reports its
    execution time), gives the request an id that its answer carries in ``X-Request-ID``
    (the caller's own, when well formed), and once the answer is sent, counts it in the
    metrics and writes its one log line.
    """

    def __init__(self, app: ASGIApp, metrics: Metrics | None = None) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)  # type: ignore[arg-type]
            return
        started = time.perf_counter()
        scope[_STARTED] = (started, datetime.now(UTC))
        request_id = _incoming_request_id(scope["headers"]) or secrets.token_hex(8)
        scope[_REQUEST_ID] = request_id
        id_header = (b"x-request-id", request_id.encode("ascii"))
        status = 500  # what uvicorn answers if the application fails before answering

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = _private_json([*message.get("headers", ()), id_header])
            await send(message)

        token = current_request_id.set(request_id)
        try:
            await self.app(scope, receive, send_with_id)  # type: ignore[arg-type]
        finally:
            current_request_id.reset(token)
            seconds = time.perf_counter() - started
            route = scope.get("path_template") or UNMATCHED
            method = scope["method"]
            if self.metrics is not None:
                self.metrics.observe(route, method, status, seconds)
            log_request(request_id, method, route, status, seconds)


# Every envelope names its caller's address (metadata.ip), and many a creator's inbox: no
# shared cache may keep one for someone else, whatever the handler forgot to say.
_PRIVATE = (b"cache-control", b"private, no-store")
_VARY = (b"vary", b"Authorization, X-API-Key, Cookie")


def _private_json(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """Mark a JSON answer private and uncacheable unless its handler chose otherwise."""
    names = {name for name, _ in headers}
    if b"cache-control" in names:
        return headers
    json = any(
        name == b"content-type" and value.startswith(b"application/json") for name, value in headers
    )
    if not json:
        return headers
    return [*headers, _PRIVATE, *(() if b"vary" in names else (_VARY,))]


def _incoming_request_id(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    """The caller's X-Request-ID if it is one we can repeat safely; otherwise None."""
    for name, value in headers:
        if name == b"x-request-id":
            return value.decode("ascii") if _WELL_FORMED_ID.fullmatch(value) else None
    return None


def request_id(scope: Mapping[str, Any]) -> str | None:
    """The id of the request, as its X-Request-ID header and its log line give it."""
    found: str | None = scope.get(_REQUEST_ID)
    return found


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


async def streamed_envelope(
    request: Request[Any, Any, Any], status_code: int, message: str, data: AsyncIterable[bytes]
) -> AsyncIterator[bytes]:
    """The envelope around a ``data`` too large to hold (an account's export), written as
    its JSON arrives: the same fields in the same order, metadata last, timed at the end."""
    yield b'{"status_code":%d,"message":%s,"data":' % (status_code, msgspec.json.encode(message))
    async for piece in data:
        yield piece
    yield b',"metadata":' + msgspec.json.encode(metadata(request.scope)) + b"}"


def error_envelope(
    scope: Mapping[str, Any],
    status_code: int,
    code: str,
    message: str,
    fields: list[FieldProblem] | None = None,
    challenge: Challenge | None = None,
) -> ErrorEnvelope:
    return ErrorEnvelope(
        status_code=status_code,
        message=message,
        data=None,
        error=ErrorDetail(
            code=code,
            fields=[ErrorField(f.field, f.problem) for f in fields or []],
            challenge=challenge,
        ),
        metadata=metadata(scope),
    )


_DESCRIPTIONS = {
    400: "Invalid request: malformed JSON, wrong types, out-of-bound lengths, bad parameters "
    "or a malformed Host header",
    401: "Credential missing, unknown, expired or revoked",
    403: "Valid credential, but not the creator of this link",
    404: "Not found: an unknown link, message, reply or other id, or a feature this server "
    "does not offer. A link that was deleted, or whose account is, answers the code "
    "link_gone",
    405: "Method not allowed on this path",
    409: "Conflict with the current state",
    413: "Request body larger than the configured limit",
    415: "Body is not application/json",
    429: "Too many requests; see Retry-After. While a link is under a flood a post is "
    "refused with the code proof_of_work_required and a challenge to solve instead",
    502: "An upstream identity provider failed or could not be reached",
    503: "The database, or another service this needs, is unavailable; see Retry-After",
}


def error_responses(*status_codes: int) -> dict[int, ResponseSpec]:
    """OpenAPI entries documenting the error envelope for the given statuses, and for 400
    on every operation: the framework answers a malformed ``Host`` header with a 400 on
    any path, before a handler runs (the fuzzer found it on ``GET /account/profile``)."""
    return {
        code: ResponseSpec(
            data_container=ErrorEnvelope, description=_DESCRIPTIONS[code], generate_examples=False
        )
        for code in (status_codes if 400 in status_codes else (400, *status_codes))
    }
