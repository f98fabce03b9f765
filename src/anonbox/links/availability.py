"""Whether a link can still be used: the link of an account being deleted, or erased, is
gone (404 ``link_gone``; a 410 page) for everyone, the same answer for a post, a read and
its page."""

from __future__ import annotations

from anonbox.core.database import Connection
from anonbox.core.errors import Forbidden, Gone, NotFound
from anonbox.links import repository

LINK_GONE = "This link is no longer available"
NO_LINK = "No link with this id"
NOT_YOURS = "Only the creator of this link can do that"


class LinkGone(Gone):
    code = "link_gone"

    def __init__(self) -> None:
        super().__init__(LINK_GONE)


async def missing_link(conn: Connection, link_id: str) -> NotFound:
    """What to raise for an id that no live link has: gone if it was erased, else not found.
    Asked only on a miss, so a live link costs no extra query."""
    if await repository.link_erased(conn, link_id):
        return LinkGone()
    return NotFound(NO_LINK)


async def live_link_owner(conn: Connection, link_id: str) -> str:
    """The owner of a link still in use; raises ``NotFound`` for no such link, and
    ``LinkGone`` for one deleted or whose account is being deleted."""
    holder = await repository.link_holder(conn, link_id)
    if holder is None:
        raise await missing_link(conn, link_id)
    if holder["disabled"]:
        raise LinkGone()
    return str(holder["user_id"])


async def require_owner(conn: Connection, link_id: str, user_id: str) -> None:
    """Refuse unless the link is in use and ``user_id``'s: ``NotFound`` for no such link,
    ``LinkGone`` for one deleted or whose account is being deleted, else ``Forbidden``
    for someone else's. The one rule for "not found" and "not yours"."""
    if await live_link_owner(conn, link_id) != user_id:
        raise Forbidden(NOT_YOURS)
