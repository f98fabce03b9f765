"""Link lookups decided once for every route: "not found" and "not yours"."""

from __future__ import annotations

from dataclasses import dataclass

from anonbox.auth.service import Principal
from anonbox.core.dependencies import DB
from anonbox.core.paths import LinkId
from anonbox.links.availability import live_link_owner, require_owner


@dataclass(frozen=True, slots=True)
class LinkAccess:
    link_id: str
    is_creator: bool


@dataclass(frozen=True, slots=True)
class ClaimedLink:
    """A link the creator acts on, not looked up yet: for the creator's writes that
    check it in their own statement (``owner_id`` owns ``link_id``) and, finding nothing,
    ask ``availability.require_owner`` why, so the answers are those of ``owned_link``
    with one query fewer."""

    link_id: str
    owner_id: str


async def owned_link(link_id: LinkId, creator: Principal, db: DB) -> LinkAccess:
    await require_owner(db, link_id, creator.user_id)
    return LinkAccess(link_id=link_id, is_creator=True)


async def claimed_link(link_id: LinkId, creator: Principal) -> ClaimedLink:
    return ClaimedLink(link_id=link_id, owner_id=creator.user_id)


async def viewed_link(link_id: LinkId, viewer: Principal | None, db: DB) -> LinkAccess:
    owner = await live_link_owner(db, link_id)
    return LinkAccess(link_id=link_id, is_creator=viewer is not None and viewer.user_id == owner)
