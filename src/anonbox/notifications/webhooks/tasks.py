"""Webhooks' background work: a delivery per event to each of a creator's endpoints."""

from __future__ import annotations

from anonbox.core.chores import Needs, Tasks
from anonbox.notifications.courier import Delivery
from anonbox.notifications.webhooks.delivery import WebhookChannel, WebhookCourier


def _deliveries(needs: Needs) -> list[Delivery]:
    return [Delivery(WebhookChannel(), WebhookCourier(needs.db, needs.settings, needs.http))]


TASKS = Tasks(deliveries=_deliveries)
