"""Link lookups decided once for every route: "not found" and "not yours"."""

from __future__ import annotations

from dataclasses import dataclass

from anonbox.auth.service import Principal
from anonbox.core.dependencies import DB
from anonbox.core.errors import Forbidden
from anonbox.core.paths import LinkId
from anonbox.links.availability import LinkGone, missing_link
from anonbox.links.repository import link_holder


@dataclass(frozen=True, slots=True)
class LinkAccess:
    link_id: str
    is_creator: bool


async def _owner(db: DB, link_id: str) -> str:
    """The link's owner; 404 for no such link, 410 for one whose account is deleted."""
    holder = await link_holder(db, link_id)
    if holder is None:
        raise await missing_link(db, link_id)
    if holder["disabled"]:
        raise LinkGone()
    return str(holder["user_id"])


async def owned_link(link_id: LinkId, creator: Principal, db: DB) -> LinkAccess:
    owner = await _owner(db, link_id)
    if owner != creator.user_id:
        raise Forbidden("Only the creator of this link can do that")
    return LinkAccess(link_id=link_id, is_creator=True)


async def viewed_link(link_id: LinkId, viewer: Principal | None, db: DB) -> LinkAccess:
    owner = await _owner(db, link_id)
    return LinkAccess(link_id=link_id, is_creator=viewer is not None and viewer.user_id == owner)
