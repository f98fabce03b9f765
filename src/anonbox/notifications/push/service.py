"""What a creator can do with Web Push: subscribe a device, list and remove them."""

from __future__ import annotations

import base64
import binascii

from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Database, Row, one_at_a_time
from anonbox.core.errors import Conflict, FieldProblem, NotFound, ValidationFailed
from anonbox.core.ids import new_ulid
from anonbox.notifications.push import repository
from anonbox.notifications.push.delivery import check_endpoint, vapid_keys
from anonbox.notifications.push.schemas import (
    PushKeyOut,
    PushSubscriptionIn,
    PushSubscriptionList,
    PushSubscriptionOut,
)

MAX_DEVICES = 20
_NO_SUBSCRIPTION = "No push subscription with this id among yours"


def _out(row: Row) -> PushSubscriptionOut:
    return PushSubscriptionOut(
        id=row["id"],
        endpoint=row["endpoint"],
        preview=bool(row["preview"]),
        created_at=isoformat_us(row["created_at"]),
    )


def _decoded(value: str) -> bytes:
    unpadded = value.rstrip("=")
    return base64.b64decode(unpadded + "=" * (-len(unpadded) % 4), altchars=b"-_", validate=True)


def _check_keys(p256dh: str, auth: str) -> None:
    try:
        point, secret = _decoded(p256dh), _decoded(auth)
    except (binascii.Error, ValueError):
        point, secret = b"", b""
    if len(point) != 65 or point[0] != 4:
        raise ValidationFailed(
            "keys.p256dh must be an uncompressed P-256 point, base64url",
            [FieldProblem("keys.p256dh", "invalid")],
        )
    if len(secret) != 16:
        raise ValidationFailed(
            "keys.auth must be 16 bytes, base64url", [FieldProblem("keys.auth", "invalid")]
        )


async def public_key(db: Database) -> PushKeyOut:
    _, public = await vapid_keys(db)
    return PushKeyOut(public_key=public)


async def subscribe(
    db: Database, *, user_id: str, subscription: PushSubscriptionIn, allow_local: bool
) -> PushSubscriptionOut:
    """Store a device's subscription; the same endpoint again updates it."""
    check_endpoint(subscription.endpoint, allow_local=allow_local)
    _check_keys(subscription.keys.p256dh, subscription.keys.auth)
    now = now_us()
    # Counted and stored in one transaction that runs alone for this creator: a burst of
    # parallel subscriptions would otherwise all count below the cap.
    async with db.transaction() as tx:
        await one_at_a_time(tx, f"push:{user_id}")
        known = await repository.subscription_at(
            tx, endpoint=subscription.endpoint, user_id=user_id
        )
        if known is None and len(await repository.subscriptions_of(tx, user_id)) >= MAX_DEVICES:
            raise Conflict(f"At most {MAX_DEVICES} devices; remove one first")
        await repository.upsert_subscription(
            tx,
            subscription_id=new_ulid(now),
            user_id=user_id,
            endpoint=subscription.endpoint,
            p256dh=subscription.keys.p256dh,
            auth=subscription.keys.auth,
            preview=subscription.preview,
            created_at=now,
        )
        stored = await repository.subscription_at(
            tx, endpoint=subscription.endpoint, user_id=user_id
        )
    assert stored is not None
    return _out(stored)


async def subscriptions(db: Database, *, user_id: str) -> PushSubscriptionList:
    return PushSubscriptionList(
        items=[_out(row) for row in await repository.subscriptions_of(db, user_id)]
    )


async def unsubscribe(db: Database, *, user_id: str, subscription_id: str) -> None:
    deleted = await repository.delete_subscription(
        db, subscription_id=subscription_id, user_id=user_id
    )
    if not deleted:
        raise NotFound(_NO_SUBSCRIPTION)
