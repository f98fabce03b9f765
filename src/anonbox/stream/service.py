"""Stream mode: a secret overlay address per creator, and the question it shows.

Marshmallow's creators read questions aloud on live streams with hand-made workarounds;
here a creator turns stream mode on, adds the overlay's address to OBS as a browser
source, and presses "Show on stream" on a message: the overlay shows it, large, on a
transparent background, and changes as soon as they pick another (the live fan-out:
``outbox.fanout``). The address is the only credential, so it is long,
shown only to its creator, and revoked by making a new one.

The address is not stored: it is an HMAC of a random nonce under the service's secret
key, so the dashboard can show it again, and only its SHA-256 is kept to find the row.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from anonbox.core.clock import now_us
from anonbox.core.database import Database
from anonbox.core.errors import NotFound
from anonbox.outbox import repository as events
from anonbox.stream import repository
from anonbox.stream.schemas import OnScreen, Overlay, live_key

_NO_OVERLAY = "No stream overlay at this address"
_NO_MESSAGE = "No message with this id under this link"
_PURPOSE = b"anonbox stream overlay"


def _token(secret_key: str, user_id: str, nonce: str) -> str:
    mac = hmac.new(secret_key.encode(), _PURPOSE + b"\0" + f"{user_id}:{nonce}".encode(), "sha256")
    return mac.hexdigest()


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def overlay(db: Database, *, user_id: str, secret_key: str) -> Overlay | None:
    """The creator's overlay, if stream mode is on."""
    row = await repository.overlay_of(db, user_id)
    if row is None:
        return None
    return Overlay(_token(secret_key, user_id, str(row["nonce"])), row["message_id"])


async def new_address(db: Database, *, user_id: str, secret_key: str) -> Overlay:
    """Turn stream mode on, or give the overlay a new address: the old one shows nothing
    from now on (an address that leaked is revoked this way)."""
    nonce = secrets.token_hex(16)
    token = _token(secret_key, user_id, nonce)
    async with db.transaction() as tx:
        await repository.put_overlay(
            tx, user_id=user_id, nonce=nonce, token_hash=_hash(token), at=now_us()
        )
        await events.notify(tx, [live_key(user_id)])  # an open overlay at the old address ends
    row = await repository.overlay_of(db, user_id)
    return Overlay(token, None if row is None else row["message_id"])


async def show(
    db: Database, *, user_id: str, link_id: str, message_id: str, secret_key: str
) -> None:
    """Put this message of the creator's on their overlay (turning stream mode on)."""
    if await repository.overlay_of(db, user_id) is None:
        await new_address(db, user_id=user_id, secret_key=secret_key)
    async with db.transaction() as tx:
        if not await repository.show(
            tx, user_id=user_id, link_id=link_id, message_id=message_id, at=now_us()
        ):
            raise NotFound(_NO_MESSAGE)
        await events.notify(tx, [live_key(user_id)])


async def hide(db: Database, *, user_id: str) -> None:
    """Leave the overlay empty."""
    async with db.transaction() as tx:
        await repository.clear(tx, user_id=user_id, at=now_us())
        await events.notify(tx, [live_key(user_id)])


async def on_screen(db: Database, *, token: str) -> OnScreen:
    """What the overlay at this address shows; 404 for an address that is not (or no
    longer) one."""
    hashed = _hash(token)
    row = await repository.on_screen(db, hashed)
    if row is None or not hmac.compare_digest(str(row["token_hash"]), hashed):
        raise NotFound(_NO_OVERLAY)
    return OnScreen(user_id=row["user_id"], language=row["language"], question=row["content"])
