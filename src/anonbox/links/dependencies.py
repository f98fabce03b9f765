"""Link lookups decided once for every route: "not found" and "not yours"."""

from __future__ import annotations

from dataclasses import dataclass

from anonbox.auth.service import Principal
from anonbox.core.dependencies import DB
from anonbox.core.errors import Forbidden
from anonbox.core.paths import LinkId
from anonbox.links.availability import live_link_owner


@dataclass(frozen=True, slots=True)
class LinkAccess:
    link_id: str
    is_creator: bool


async def owned_link(link_id: LinkId, creator: Principal, db: DB) -> LinkAccess:
    owner = await live_link_owner(db, link_id)
    if owner != creator.user_id:
        raise Forbidden("Only the creator of this link can do that")
    return LinkAccess(link_id=link_id, is_creator=True)


async def viewed_link(link_id: LinkId, viewer: Principal | None, db: DB) -> LinkAccess:
    owner = await live_link_owner(db, link_id)
    return LinkAccess(link_id=link_id, is_creator=viewer is not None and viewer.user_id == owner)
