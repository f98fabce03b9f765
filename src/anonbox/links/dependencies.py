"""The API's access rules for a link in the path (``core/access.py``): "not found" and
"not yours" decided once for every route."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from anonbox.core.access import INJECTED, UNCHECKED, AccessRule
from anonbox.core.dependencies import DB
from anonbox.core.paths import LinkId
from anonbox.identity.dependencies import OPTIONAL_SECURITY, SECURITY, Creator, Viewer
from anonbox.links.availability import live_link_owner, require_owner


@dataclass(frozen=True, slots=True)
class LinkAccess:
    link_id: str
    is_creator: bool


@dataclass(frozen=True, slots=True)
class LinkClaim:
    """A link the creator acts on, not looked up yet: for the creator's writes that
    check it in their own statement (``owner_id`` owns ``link_id``) and, finding nothing,
    ask ``availability.require_owner`` why, so the answers are those of ``owned_link``
    with one query fewer."""

    link_id: str
    owner_id: str


async def owned_link(link_id: LinkId, creator: Creator, db: DB) -> LinkAccess:
    await require_owner(db, link_id, creator.user_id)
    return LinkAccess(link_id=link_id, is_creator=True)


async def claimed_link(link_id: LinkId, creator: Creator) -> LinkClaim:
    return LinkClaim(link_id=link_id, owner_id=creator.user_id)


async def viewed_link(link_id: LinkId, viewer: Viewer, db: DB) -> LinkAccess:
    owner = await live_link_owner(db, link_id)
    return LinkAccess(link_id=link_id, is_creator=viewer is not None and viewer.user_id == owner)


OwnedLink = Annotated[
    LinkAccess, INJECTED, UNCHECKED, AccessRule("OwnedLink", owned_link, LinkAccess, SECURITY)
]
ClaimedLink = Annotated[
    LinkClaim, INJECTED, UNCHECKED, AccessRule("ClaimedLink", claimed_link, LinkClaim, SECURITY)
]
ViewedLink = Annotated[
    LinkAccess,
    INJECTED,
    UNCHECKED,
    AccessRule("ViewedLink", viewed_link, LinkAccess, OPTIONAL_SECURITY, optional=True),
]
