"""The errors the service's own code raises, each with its HTTP status and stable code.

    AnonboxError
     ├── ValidationFailed      400 validation_failed   (carries the fields at fault)
     ├── BadRequest            400 bad_request         (well-formed, but refused: e.g. sign-in)
     ├── Unauthorized          401 unauthorized
     ├── Forbidden             403 forbidden
     ├── NotFound              404 not_found
     │    └── Gone             404 gone                (it was there, and is no longer;
     │                                                  a page says 410)
     ├── Conflict              409 conflict
     ├── PayloadTooLarge       413 payload_too_large
     ├── UnsupportedMediaType  415 unsupported_media_type
     ├── RateLimited           429 rate_limited        (carries Retry-After)
     ├── BadGateway            502 bad_gateway         (an upstream provider failed)
     └── ServiceUnavailable    503 service_unavailable (carries Retry-After)

Services raise these and know nothing of HTTP; ``core.exception_handlers`` turns them,
and the framework's own errors, into the one error envelope.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FieldProblem:
    field: str
    problem: str  # missing | wrong_type | too_short | too_long | blank | invalid


class AnonboxError(Exception):
    status_code = 500
    code = "internal_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ValidationFailed(AnonboxError):
    status_code = 400
    code = "validation_failed"

    def __init__(self, message: str, fields: list[FieldProblem] | None = None) -> None:
        super().__init__(message)
        self.fields = fields or []


class BadRequest(AnonboxError):
    status_code = 400
    code = "bad_request"


class Unauthorized(AnonboxError):
    status_code = 401
    code = "unauthorized"


class Forbidden(AnonboxError):
    status_code = 403
    code = "forbidden"


class NotFound(AnonboxError):
    status_code = 404
    code = "not_found"


class Gone(NotFound):
    """A more precise not-found: whatever handles a missing thing handles this too.

    The API answers it 404, its code saying that it is over: the status a client (and the
    contract's checks) takes for "no such id", the code for who cares to tell the two apart.
    A page answers 410 (``web.infra.routing``), which a browser's reader never sees anyway."""

    code = "gone"


class Conflict(AnonboxError):
    status_code = 409
    code = "conflict"


class PayloadTooLarge(AnonboxError):
    status_code = 413
    code = "payload_too_large"


class UnsupportedMediaType(AnonboxError):
    status_code = 415
    code = "unsupported_media_type"


class RateLimited(AnonboxError):
    status_code = 429
    code = "rate_limited"

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class BadGateway(AnonboxError):
    status_code = 502
    code = "bad_gateway"


class ServiceUnavailable(AnonboxError):
    status_code = 503
    code = "service_unavailable"

    def __init__(self, message: str, retry_after: int = 5) -> None:
        super().__init__(message)
        self.retry_after = retry_after
