"""What the webhook endpoints of the API take and answer."""

from typing import Annotated, Literal, get_args

import msgspec
from litestar.params import KwargDefinition

from anonbox.core.egress import MAX_URL_CHARACTERS, WEBHOOK_URL
from anonbox.core.envelope import Timestamp
from anonbox.core.openapi import keep_component_names
from anonbox.outbox.schemas import Kind

# The events a webhook may receive, of the outbox's kinds (``outbox.schemas.Kind``: all but
# ``message.filtered``); ``webhook.test`` is only ever sent on request.
EventKind = Literal["message.created", "reply.created", "message.deleted", "message.reported"]
EVENT_KINDS: tuple[str, ...] = get_args(EventKind)
assert set(EVENT_KINDS) <= set(Kind), "a webhook event the outbox never holds"
TEST_EVENT = "webhook.test"


class WebhookIn(msgspec.Struct, forbid_unknown_fields=True):
    # Documented here, checked in the service (``webhooks.delivery.check_url``).
    url: Annotated[
        str,
        KwargDefinition(min_length=1, max_length=MAX_URL_CHARACTERS, pattern=WEBHOOK_URL),
    ]
    # All of EVENT_KINDS when left out.
    events: (
        Annotated[list[EventKind], msgspec.Meta(min_length=1, max_length=len(EVENT_KINDS))] | None
    ) = None


class WebhookOut(msgspec.Struct, omit_defaults=True):
    id: str
    url: str
    events: list[str]
    enabled: bool
    created_at: Timestamp
    disabled_reason: str | None = None
    # Shown once, when the endpoint is made: the key its receiver verifies signatures with.
    secret: str | None = None


class WebhookList(msgspec.Struct):
    items: list[WebhookOut]


class DeliveryOut(msgspec.Struct):
    id: str  # the webhook-id header of every attempt
    type: str
    status: str  # pending | delivered | failed
    attempts: int
    last_status_code: int | None
    last_error: str | None
    created_at: Timestamp
    finished_at: Timestamp | None


class DeliveryList(msgspec.Struct):
    items: list[DeliveryOut]


# Published from ``notifications.schemas`` before it was split (core/openapi.py).
keep_component_names(
    "anonbox.notifications.schemas", WebhookList, DeliveryList, DeliveryOut, WebhookOut
)
