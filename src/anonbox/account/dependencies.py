"""Who may act on the account as a whole: its access rules (``core/access.py``)."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request

from anonbox.auth.dependencies import SECURITY, principal_of
from anonbox.auth.service import Principal
from anonbox.core.access import INJECTED, UNCHECKED, AccessRule
from anonbox.core.dependencies import DB
from anonbox.core.errors import Forbidden, Unauthorized


async def account_holder(request: Request[Any, Any, Any], db: DB) -> Principal:
    """Any valid credential of the account, even while it is scheduled for erasure: the
    deletion endpoints are what such an account can still reach."""
    principal = await principal_of(request, db)
    if principal is None:
        raise Unauthorized("This needs the creator's credential in the X-API-Key header")
    return principal


async def signed_in_holder(request: Request[Any, Any, Any], db: DB) -> Principal:
    """A sign-in session's access token: an API key cannot delete an account."""
    holder = await account_holder(request, db)
    if holder.kind != "session":
        raise Forbidden("This needs a sign-in access token; an API key cannot do it")
    return holder


AccountHolder = Annotated[
    Principal, INJECTED, UNCHECKED, AccessRule("AccountHolder", account_holder, Principal, SECURITY)
]
SignedInHolder = Annotated[
    Principal,
    INJECTED,
    UNCHECKED,
    AccessRule("SignedInHolder", signed_in_holder, Principal, SECURITY),
]
