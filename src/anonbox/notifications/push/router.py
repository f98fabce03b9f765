"""HTTP endpoints for Web Push: the service's VAPID key, a creator's device subscriptions
(``push.delivery`` sends them)."""

from __future__ import annotations

from litestar import delete, get, post

from anonbox.core.dependencies import DB, AppSettings
from anonbox.core.envelope import (
    BODY_ERRORS,
    OK,
    AnyRequest,
    Created,
    Envelope,
    envelope,
    error_responses,
)
from anonbox.core.paths import RowId
from anonbox.identity.dependencies import Creator
from anonbox.notifications.push import service
from anonbox.notifications.push.schemas import (
    PushKeyOut,
    PushSubscriptionIn,
    PushSubscriptionList,
    PushSubscriptionOut,
)

_TAGS = ["notifications"]


@get(
    "/push/key",
    summary="The VAPID public key: the applicationServerKey for PushManager.subscribe",
    responses=error_responses(503),
    tags=_TAGS,
)
async def push_key(request: AnyRequest, db: DB) -> Envelope[OK, PushKeyOut]:
    return envelope(request, 200, "VAPID public key", await service.public_key(db))


@post(
    "/push/subscriptions",
    status_code=201,
    summary="Notify this device of new messages (a browser's PushSubscription)",
    description="The body is `PushSubscription.toJSON()` plus `preview`: true to show a "
    "message's first words in the notice. The same endpoint again updates it.",
    responses=error_responses(400, 401, 403, 409, *BODY_ERRORS, 503),
    tags=_TAGS,
)
async def add_push_subscription(
    request: AnyRequest,
    data: PushSubscriptionIn,
    db: DB,
    settings: AppSettings,
    creator: Creator,
) -> Envelope[Created, PushSubscriptionOut]:
    added = await service.subscribe(
        db, user_id=creator.user_id, subscription=data, allow_local=settings.push_allow_local
    )
    return envelope(request, 201, "Push subscription stored", added)


@get(
    "/push/subscriptions",
    summary="Your devices that receive push notifications",
    responses=error_responses(401, 403, 503),
    tags=_TAGS,
)
async def list_push_subscriptions(
    request: AnyRequest, db: DB, creator: Creator
) -> Envelope[OK, PushSubscriptionList]:
    listed = await service.subscriptions(db, user_id=creator.user_id)
    return envelope(request, 200, "Push subscriptions", listed)


@delete(
    "/push/subscriptions/{subscription_id:str}",
    status_code=200,
    summary="Stop notifying a device",
    responses=error_responses(400, 401, 403, 404, 503),
    tags=_TAGS,
)
async def remove_push_subscription(
    request: AnyRequest, subscription_id: RowId, db: DB, creator: Creator
) -> Envelope[OK, None]:
    await service.unsubscribe(db, user_id=creator.user_id, subscription_id=subscription_id)
    return envelope(request, 200, "Push subscription removed", None)


ROUTES = [push_key, add_push_subscription, list_push_subscriptions, remove_push_subscription]
