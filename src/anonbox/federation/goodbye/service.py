"""A followable link's goodbye, and what its addresses answer afterwards.

When a link is deleted, its account erased, or its switch (``links.fediverse``) turned
off, its actor says goodbye: a ``Delete`` of the actor (to the public and its followers)
is a delivery for the courier to every follower's inbox, one per shared inbox, and its
followers are forgotten, in the transaction that marks it gone
(``federation_actors.gone_at``). The federation chore finds these (``sweep``): erasure
runs in ``account``, below federation, and a deleted link's rows outlive it (migration
0035), so the three ways go one way. The courier signs each ``Delete`` with the actor's
key, which is kept until no delivery of it waits; then it is forgotten (``release_key``),
and a deleted link's actor altogether: its tombstone says it went.

From the moment the link is not followable, its actor, its Notes, collections, inbox and
WebFinger answer 410 (``ActorGone``; the actor and a Note with a ``Tombstone``), as does
every address of a link that is deleted. While an account waits for its erasure (its
grace period) they answer 404, as before: it may come back, and a 410 makes servers
delete the actor for good.

Turning the switch on again starts afresh (``start_afresh``): a new key pair, no
followers, nothing left to send of the old actor. The old key was forgotten after the
goodbye; and a new one keeps a ``Delete`` of the old actor that a server receives late,
or again, from verifying as if it came from the new one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import msgspec

from anonbox.core.clock import now_us
from anonbox.core.database import Connection, Database, Row
from anonbox.core.errors import NotFound
from anonbox.core.ids import new_ulid
from anonbox.core.settings import Settings
from anonbox.federation import activities, signatures
from anonbox.federation import repository as federation
from anonbox.federation.activities import Site
from anonbox.federation.goodbye import repository


class ActorGone(NotFound):
    """The link's actor said goodbye, or its link is deleted: 410 Gone (``deleted``: since
    when, in µs, where known). A not-found: what takes a missing actor takes this too (the
    link's page is still a page)."""

    status_code = 410
    code = "gone"

    def __init__(self, deleted: int | None) -> None:
        super().__init__("This link no longer federates: its actor is gone")
        self.deleted = deleted


async def raise_if_gone(conn: Connection, link_id: str) -> None:
    """410 for a link that had an actor that is not followable now, and for a deleted
    link; nothing for one that never had an actor."""
    actor = await repository.gone_at(conn, link_id)
    if actor is not None:
        raise ActorGone(None if actor["gone_at"] is None else int(actor["gone_at"]))
    tombstone = await repository.tombstone(conn, link_id)
    if tombstone is not None:
        raise ActorGone(int(tombstone["erased_at"]))


async def start_afresh(db: Database, link_id: str) -> bool:
    """If the link's actor is gone: a new key pair, no followers, no delivery of the old
    actor left to send; whether it was gone."""
    actor = await repository.gone_at(db, link_id)
    if actor is None or actor["gone_at"] is None:
        return False
    private, public = await asyncio.to_thread(signatures.generate_key_pair)
    async with db.transaction() as tx:
        now = now_us()
        if not await repository.renew(
            tx, link_id=link_id, private_key=private, public_key=public, now=now
        ):
            return False
        await repository.drop_pending(tx, link_id)
        await repository.forget_followers(tx, link_id)
        await federation.tell_as_now(tx, link_id=link_id, shape=activities.ACTOR_SHAPE)
    return True


async def _say_goodbye(db: Database, site: Site, row: Row) -> None:
    link_id = str(row["link_id"])
    # Deliveries are shared out per creator; a deleted link's creator is not known (and an
    # erased one must not be named), so its goodbye is shared out as its own.
    owner = link_id if row["user_id"] is None else str(row["user_id"])
    async with db.transaction() as tx:
        now = now_us()
        if not await repository.claim(tx, link_id=link_id, now=now):
            return  # switched on again, or another instance said it
        await repository.drop_pending(tx, link_id)
        payload = msgspec.json.encode(
            activities.delete_actor(site, link_id, new_ulid(now))
        ).decode()
        await federation.insert_deliveries(
            tx,
            [
                (new_ulid(now), owner, link_id, inbox, payload, now)
                for inbox in await federation.inboxes(tx, link_id)
            ],
        )
        await repository.forget_followers(tx, link_id)


async def sweep(db: Database, settings: Settings) -> None:
    """Say the goodbyes due, forget the keys (and deleted links' actors) whose goodbye is
    over, and start afresh an actor whose fresh start was interrupted. A chore of every
    instance, each step claimed by the statement that takes it. Nothing while the site does
    not federate: no one could fetch the key a goodbye is signed with
    (``docs/fediverse.md``), and the goodbyes due are said when it federates again."""
    if not settings.federates or settings.public_url is None:
        return
    site = Site(settings.public_url)
    for row in await repository.due(db):
        await _say_goodbye(db, site, row)
    for row in await repository.said(db):
        async with db.transaction() as tx:
            if row["kept"] is None:
                await repository.forget_actor(tx, str(row["link_id"]))
            else:
                await repository.release_key(tx, str(row["link_id"]))
    for row in await repository.stuck(db):
        await start_afresh(db, str(row["link_id"]))


def sweeper(settings: Settings) -> Callable[[Database], Awaitable[None]]:
    async def run(db: Database) -> None:
        await sweep(db, settings)

    return run
