"""Link lookups decided once for every route: "not found" and "not yours"."""

from __future__ import annotations

from dataclasses import dataclass

from anonbox.auth.service import Principal
from anonbox.core.dependencies import DB
from anonbox.core.errors import Forbidden, NotFound
from anonbox.core.paths import LinkId
from anonbox.links.repository import link_owner


@dataclass(frozen=True, slots=True)
class LinkAccess:
    link_id: str
    is_creator: bool


async def owned_link(link_id: LinkId, creator: Principal, db: DB) -> LinkAccess:
    owner = await link_owner(db, link_id)
    if owner is None:
        raise NotFound("No link with this id")
    if owner != creator.user_id:
        raise Forbidden("Only the creator of this link can do that")
    return LinkAccess(link_id=link_id, is_creator=True)


async def viewed_link(link_id: LinkId, viewer: Principal | None, db: DB) -> LinkAccess:
    owner = await link_owner(db, link_id)
    if owner is None:
        raise NotFound("No link with this id")
    return LinkAccess(link_id=link_id, is_creator=viewer is not None and viewer.user_id == owner)
