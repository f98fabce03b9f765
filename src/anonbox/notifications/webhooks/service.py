"""What a creator can do with webhooks: add, list, remove an endpoint, read its
deliveries, and send it a test event."""

from __future__ import annotations

import base64
import secrets

import msgspec

from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Database, Row, one_at_a_time
from anonbox.core.errors import Conflict, FieldProblem, NotFound, ValidationFailed
from anonbox.core.ids import new_ulid
from anonbox.notifications.webhooks import repository
from anonbox.notifications.webhooks.delivery import check_url
from anonbox.notifications.webhooks.schemas import (
    EVENT_KINDS,
    TEST_EVENT,
    DeliveryList,
    DeliveryOut,
    WebhookList,
    WebhookOut,
)

MAX_ENDPOINTS = 10
DELIVERIES_SHOWN = 50
_NO_ENDPOINT = "No webhook with this id among yours"


def _instant(value: int | None) -> str | None:
    return None if value is None else isoformat_us(value)


def _out(row: Row, secret: str | None = None) -> WebhookOut:
    return WebhookOut(
        id=row["id"],
        url=row["url"],
        events=row["events"].split(","),
        enabled=row["disabled_reason"] is None,
        created_at=isoformat_us(row["created_at"]),
        disabled_reason=row["disabled_reason"],
        secret=secret,
    )


async def add_endpoint(
    db: Database, *, user_id: str, url: str, events: list[str] | None, allow_private: bool
) -> WebhookOut:
    check_url(url, allow_private=allow_private)
    kinds = list(EVENT_KINDS) if events is None else events
    unknown = sorted(set(kinds) - set(EVENT_KINDS))
    if unknown or not kinds:
        raise ValidationFailed(
            f"events must be some of {', '.join(EVENT_KINDS)}",
            [FieldProblem("events", "invalid")],
        )
    secret = "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()
    now = now_us()
    endpoint_id = new_ulid(now)
    ordered = ",".join(kind for kind in EVENT_KINDS if kind in kinds)
    # Counted and added in one transaction that runs alone for this creator: a burst of
    # parallel creations counted below the cap together (30 of 30 were added on SQLite).
    async with db.transaction() as tx:
        await one_at_a_time(tx, f"webhooks:{user_id}")
        existing = await repository.endpoints_of(tx, user_id)
        if any(endpoint["url"] == url for endpoint in existing):  # a form sent twice, say
            raise Conflict("You already have a webhook to this URL")
        if len(existing) >= MAX_ENDPOINTS:
            raise Conflict(f"At most {MAX_ENDPOINTS} webhooks; remove one first")
        await repository.insert_endpoint(
            tx,
            endpoint_id=endpoint_id,
            user_id=user_id,
            url=url,
            secret=secret,
            events=ordered,
            created_at=now,
        )
        row = await repository.endpoint_of(tx, endpoint_id=endpoint_id, user_id=user_id)
    assert row is not None, "just written"
    return _out(row, secret)


async def endpoints(db: Database, *, user_id: str) -> WebhookList:
    return WebhookList(items=[_out(row) for row in await repository.endpoints_of(db, user_id)])


async def remove_endpoint(db: Database, *, user_id: str, endpoint_id: str) -> None:
    if not await repository.delete_endpoint(db, endpoint_id=endpoint_id, user_id=user_id):
        raise NotFound(_NO_ENDPOINT)


async def deliveries(db: Database, *, user_id: str, endpoint_id: str) -> DeliveryList:
    if await repository.endpoint_of(db, endpoint_id=endpoint_id, user_id=user_id) is None:
        raise NotFound(_NO_ENDPOINT)
    rows = await repository.deliveries_of(db, endpoint_id=endpoint_id, limit=DELIVERIES_SHOWN)
    return DeliveryList(
        items=[
            DeliveryOut(
                id=row["id"],
                type=row["kind"],
                status=row["status"],
                attempts=row["attempts"],
                last_status_code=row["last_status_code"],
                last_error=row["last_error"],
                created_at=isoformat_us(row["created_at"]),
                finished_at=None
                if row["finished_at"] is None
                else isoformat_us(row["finished_at"]),
            )
            for row in rows
        ]
    )


async def send_test(db: Database, *, user_id: str, endpoint_id: str) -> DeliveryOut:
    """Queue a ``webhook.test`` delivery to this endpoint, behind any pending ones."""
    if await repository.endpoint_of(db, endpoint_id=endpoint_id, user_id=user_id) is None:
        raise NotFound(_NO_ENDPOINT)
    now = now_us()
    delivery_id = new_ulid(now)
    body = {"type": TEST_EVENT, "timestamp": isoformat_us(now), "data": {}}
    payload = msgspec.json.encode(body).decode()
    await repository.insert_deliveries(db, [(delivery_id, endpoint_id, TEST_EVENT, payload, now)])
    return DeliveryOut(
        id=delivery_id,
        type=TEST_EVENT,
        status="pending",
        attempts=0,
        last_status_code=None,
        last_error=None,
        created_at=isoformat_us(now),
        finished_at=None,
    )
