"""HTTP endpoints for a creator's webhooks (``webhooks.delivery`` makes them)."""

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
from anonbox.notifications.webhooks import service
from anonbox.notifications.webhooks.schemas import (
    DeliveryList,
    DeliveryOut,
    WebhookIn,
    WebhookList,
    WebhookOut,
)

_TAGS = ["notifications"]


@post(
    "/webhooks",
    status_code=201,
    summary="Add a webhook: signed POSTs of your events to a URL",
    description="Standard Webhooks: verify `webhook-signature` with the `secret` this "
    "answer shows once. Events: message.created, reply.created, message.deleted.",
    responses=error_responses(400, 401, 403, 409, *BODY_ERRORS, 503),
    tags=_TAGS,
)
async def add_webhook(
    request: AnyRequest, data: WebhookIn, db: DB, settings: AppSettings, creator: Creator
) -> Envelope[Created, WebhookOut]:
    added = await service.add_endpoint(
        db,
        user_id=creator.user_id,
        url=data.url,
        events=None if data.events is None else list(data.events),
        allow_private=settings.webhook_allow_private,
    )
    return envelope(request, 201, "Webhook added", added)


@get(
    "/webhooks",
    summary="Your webhooks",
    responses=error_responses(401, 403, 503),
    tags=_TAGS,
)
async def list_webhooks(request: AnyRequest, db: DB, creator: Creator) -> Envelope[OK, WebhookList]:
    return envelope(request, 200, "Webhooks", await service.endpoints(db, user_id=creator.user_id))


@delete(
    "/webhooks/{webhook_id:str}",
    status_code=200,
    summary="Remove a webhook (its pending deliveries go with it)",
    responses=error_responses(400, 401, 403, 404, 503),
    tags=_TAGS,
)
async def remove_webhook(
    request: AnyRequest, webhook_id: RowId, db: DB, creator: Creator
) -> Envelope[OK, None]:
    await service.remove_endpoint(db, user_id=creator.user_id, endpoint_id=webhook_id)
    return envelope(request, 200, "Webhook removed", None)


@get(
    "/webhooks/{webhook_id:str}/deliveries",
    summary="A webhook's latest deliveries: status and attempts",
    responses=error_responses(400, 401, 403, 404, 503),
    tags=_TAGS,
)
async def webhook_deliveries(
    request: AnyRequest, webhook_id: RowId, db: DB, creator: Creator
) -> Envelope[OK, DeliveryList]:
    listed = await service.deliveries(db, user_id=creator.user_id, endpoint_id=webhook_id)
    return envelope(request, 200, "Deliveries", listed)


@post(
    "/webhooks/{webhook_id:str}/test",
    status_code=201,
    summary="Send a webhook.test event to a webhook",
    responses=error_responses(400, 401, 403, 404, 503),
    tags=_TAGS,
)
async def test_webhook(
    request: AnyRequest, webhook_id: RowId, db: DB, creator: Creator
) -> Envelope[Created, DeliveryOut]:
    queued = await service.send_test(db, user_id=creator.user_id, endpoint_id=webhook_id)
    return envelope(request, 201, "Test event queued", queued)


ROUTES = [add_webhook, list_webhooks, remove_webhook, webhook_deliveries, test_webhook]
