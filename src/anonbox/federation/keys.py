"""Who signed an inbox request: the sender's key and inboxes, read once and kept.

A remote actor's document is read (``remote.actor_of_key``: only an actor's own document
vouches for its key) when a key id is new, when its reading has expired (the document's
``Cache-Control`` max-age, between an hour and a day: ``remote.cache_seconds``), or when the
signature does not verify with the key kept (the sender rotated it) — then once, and the
request is refused if the key so read does not verify it either. What is read is kept by
key id with the actor's inboxes, so that a Follow reads its follower's actor once, for
the signature and for where the Accept goes.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx

from anonbox.core.clock import now_us
from anonbox.core.database import Database, Row
from anonbox.federation import remote, repository

_US = 1_000_000


class KeyUnusable(Exception):
    """The key could not be read, or does not verify the signature; the message says which."""


def _kept(row: Row, key_id: str) -> remote.RemoteActor | None:
    if row["inbox"] is None:  # read before inboxes were kept: read again
        return None
    return remote.RemoteActor(
        id=str(row["actor_id"]),
        key_id=key_id,
        public_key=str(row["public_key"]),
        inbox=str(row["inbox"]),
        shared_inbox=None if row["shared_inbox"] is None else str(row["shared_inbox"]),
    )


async def sender(
    db: Database,
    http: httpx.AsyncClient,
    key_id: str,
    verify: Callable[[str], bool],
    *,
    allow_private: bool,
    signer: remote.Signer,
) -> remote.RemoteActor:
    """The actor whose key ``key_id`` verifies the request (``verify``, given a public
    key's PEM): the one kept while it has not expired and verifies, else the one read now."""
    now = now_us()
    row = await repository.remote_key(db, key_id)
    if row is not None and (row["expires_at"] is None or int(row["expires_at"]) > now):
        kept = _kept(row, key_id)
        if kept is not None and verify(kept.public_key):
            return kept
    try:
        found = await remote.actor_of_key(http, key_id, allow_private=allow_private, signer=signer)
    except remote.Unreachable as exc:
        raise KeyUnusable(f"The signing key could not be read: {exc}") from exc
    if not verify(found.public_key):
        raise KeyUnusable("The signature does not verify with the sender's key")
    now = now_us()
    await repository.store_remote_key(
        db,
        key_id=key_id,
        actor_id=found.id,
        public_key=found.public_key,
        inbox=found.inbox,
        shared_inbox=found.shared_inbox,
        now=now,
        expires_at=now + found.cache_seconds * _US,
    )
    return found
