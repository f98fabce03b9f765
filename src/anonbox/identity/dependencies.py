"""The API's access rules for callers (``core/access.py``), each beside its provider.

A handler that takes a ``Creator`` requires a valid credential (401 otherwise); a
``Viewer`` serves anonymous callers too, but still refuses a credential that is present
and wrong; ``SignedIn`` requires a sign-in session's access token, not an API key (403 for
a key); ``Admin`` an admin's credential.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from litestar import Request
from litestar.openapi.spec import SecurityRequirement

from anonbox.core.access import INJECTED, UNCHECKED, AccessRule
from anonbox.core.dependencies import DB
from anonbox.core.errors import Forbidden, Unauthorized
from anonbox.identity.service import Principal, authenticate

# OpenAPI security requirements: creator routes need a credential; public reads accept one.
SECURITY: list[SecurityRequirement] = [{"ApiKey": []}, {"Bearer": []}]
OPTIONAL_SECURITY: list[SecurityRequirement] = [{}, *SECURITY]


def presented_credential(request: Request[Any, Any, Any]) -> str | None:
    """The credential from ``X-API-Key``, or else from ``Authorization: Bearer``.

    An ``Authorization`` header that is not ``Bearer <credential>`` is refused (401), even
    beside an ``X-API-Key``: a client that believes it sent a credential is told it did not,
    rather than served as someone else or as nobody."""
    authorization = request.headers.get("authorization")
    scheme, _, token = (authorization or "").partition(" ")
    if authorization is not None and (scheme.lower() != "bearer" or not token.strip()):
        raise Unauthorized("The Authorization header must be 'Bearer <credential>'")
    if key := request.headers.get("x-api-key"):
        return key.strip()
    return token.strip() or None


class DeletionPending(Forbidden):
    code = "account_deletion_pending"


def in_service(principal: Principal) -> Principal:
    """Refuse an account scheduled for erasure: it may only see or cancel its deletion."""
    if principal.erasing:
        raise DeletionPending(
            "This account is scheduled for erasure; cancel the deletion "
            "(DELETE /account/deletion) to use it again"
        )
    return principal


async def current_creator(request: Request[Any, Any, Any], db: DB) -> Principal:
    credential = presented_credential(request)
    if credential is None:
        raise Unauthorized("This needs the creator's credential in the X-API-Key header")
    return in_service(await authenticate(db, credential))


async def optional_creator(request: Request[Any, Any, Any], db: DB) -> Principal | None:
    credential = presented_credential(request)
    return None if credential is None else in_service(await authenticate(db, credential))


def account_asked(request: Request[Any, Any, Any], db: DB) -> Callable[[], Awaitable[str | None]]:
    """The account of the request's credential, looked up only when asked: an anonymous
    post asks only on a link for signed-in senders (``messages.service.create_message``),
    so elsewhere a credential sent along changes nothing, as before. When asked, the
    credential is checked as ``Viewer`` checks it (401 if wrong; 403 for an account being
    erased); None without one."""

    async def ask() -> str | None:
        principal = await optional_creator(request, db)
        return None if principal is None else principal.user_id

    return ask


async def signed_in_creator(creator: Creator) -> Principal:
    if creator.kind != "session":
        raise Forbidden("This needs a sign-in access token; an API key cannot do it")
    return creator


async def admin_creator(creator: Creator) -> Principal:
    if not creator.is_admin:
        raise Forbidden("Only an admin can do that")
    return creator


Creator = Annotated[
    Principal, INJECTED, UNCHECKED, AccessRule("Creator", current_creator, Principal, SECURITY)
]
Viewer = Annotated[
    Principal | None,
    INJECTED,
    UNCHECKED,
    AccessRule("Viewer", optional_creator, Principal, OPTIONAL_SECURITY, optional=True),
]
SignedIn = Annotated[
    Principal, INJECTED, UNCHECKED, AccessRule("SignedIn", signed_in_creator, Principal, SECURITY)
]
Admin = Annotated[
    Principal, INJECTED, UNCHECKED, AccessRule("Admin", admin_creator, Principal, SECURITY)
]
