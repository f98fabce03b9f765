"""Posted answers' background work: an answer posted to the creator's fediverse account,
with its share card."""

from __future__ import annotations

from anonbox.core.chores import Needs, Tasks
from anonbox.notifications.courier import Delivery
from anonbox.notifications.crosspost.delivery import CrosspostChannel, CrosspostCourier


def _deliveries(needs: Needs) -> list[Delivery]:
    courier = CrosspostCourier(needs.db, needs.settings, needs.http, needs.card)
    return [Delivery(CrosspostChannel(), courier, courier.purge)]


TASKS = Tasks(deliveries=_deliveries)
