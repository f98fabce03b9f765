"""Any address a person pastes into a fediverse server's search finds what it shows: the
actor's own address, the send page ``/{link_id}`` (the actor) and an answer page
``/{link_id}/a/{answer_id}`` (its Note) answer a request for ActivityPub with the
document, and a browser with the page (``docs/fediverse.md``).

Which is asked for is the ``Accept`` header's ranking (``core.requests.negotiate``: q-values,
the most specific range, ``application/ld+json`` only with the ActivityStreams profile or
none). A page answers ActivityPub only when that ranks strictly first; the actor's own
address answers it unless HTML does. Either way the answer says ``Vary: Accept``.

A page serves the document in place, with its own ``id`` (the actor's, the Note's): never
under the page's address. A server that believes a document only from the address its id
names (Mastodon; ``remote`` here) reads it again from there (``docs/decisions.md``, issue
42, item 1). Only a followable link answers so; any other answers as it did before.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec
from litestar import Response

from anonbox.core.database import Database
from anonbox.core.errors import NotFound
from anonbox.core.requests import negotiate
from anonbox.federation import service
from anonbox.federation.activities import ACTIVITY_JSON, AS
from anonbox.federation.service import Federation

LD_JSON = f'application/ld+json; profile="{AS}"'
HTML = "text/html"
ACTIVITYPUB = (ACTIVITY_JSON, LD_JSON)
# How long a server may keep what it read (the actor at the actor's address, as before).
DOCUMENT_MAX_AGE = 60


def activitypub_type(accept: str | None, *, page: bool) -> str | None:
    """The ActivityPub media type to answer ``accept`` with, or None for HTML.

    On a page, the page wins a tie, a missing or unreadable ``Accept`` (a browser, a link
    preview, curl) and one that takes neither. At the actor's address the document wins
    all three, as it always did: only HTML ranked first is sent to the page."""
    offers = (HTML, *ACTIVITYPUB) if page else (*ACTIVITYPUB, HTML)
    chosen = negotiate(accept, offers)
    if page:
        return chosen if chosen in ACTIVITYPUB else None
    return None if chosen == HTML else chosen or ACTIVITY_JSON


def document(body: dict[str, Any], media_type: str = ACTIVITY_JSON) -> Response[bytes]:
    """An ActivityPub (or discovery) document, as the spec names its type."""
    return Response(
        content=msgspec.json.encode(body),
        media_type=media_type,
        headers={"Cache-Control": f"max-age={DOCUMENT_MAX_AGE}", "Vary": "Accept"},
    )


async def actor_of(db: Database, fed: Federation, link_id: str) -> dict[str, Any] | None:
    """The link's actor while it is followable on a site that federates, else None."""
    if not fed.settings.federates or fed.settings.public_url is None:
        return None
    try:
        return await service.actor(db, fed, link_id)
    except NotFound:  # not followable (or gone: its page is still a page)
        return None


async def note_of(
    db: Database, fed: Federation, link_id: str, reply_ids: Iterable[str]
) -> dict[str, Any] | None:
    """The Note of an answer page: of its first reply (``reply_ids`` oldest first) that is
    one, while the link is followable; else None."""
    if await actor_of(db, fed, link_id) is None:
        return None
    for reply_id in reply_ids:
        try:
            return await service.note(db, fed, link_id, reply_id)
        except NotFound:
            continue
    return None
