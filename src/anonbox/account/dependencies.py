"""Who may act on the account as a whole: its access rules (``core/access.py``)."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request

from anonbox.core.access import INJECTED, UNCHECKED, AccessRule
from anonbox.core.dependencies import DB
from anonbox.core.errors import Forbidden, Unauthorized
from anonbox.identity.dependencies import SECURITY, presented_credential
from anonbox.identity.service import Principal, authenticate


async def account_holder(request: Request[Any, Any, Any], db: DB) -> Principal:
    """Any valid credential of the account, even while it is scheduled for erasure: the
    deletion endpoints are what such an account can still reach."""
    credential = presented_credential(request)
    if credential is None:
        raise Unauthorized("This needs the creator's credential in the X-API-Key header")
    return await authenticate(db, credential)


async def signed_in_holder(holder: AccountHolder) -> Principal:
    """A sign-in session's access token: an API key cannot delete an account."""
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
