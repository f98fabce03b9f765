"""Web Push's background work: a push per new message to each of a creator's devices."""

from __future__ import annotations

from anonbox.core.chores import Needs, Tasks
from anonbox.notifications.courier import Delivery
from anonbox.notifications.push.delivery import PushChannel, PushCourier


def _deliveries(needs: Needs) -> list[Delivery]:
    return [Delivery(PushChannel(), PushCourier(needs.db, needs.settings, needs.http))]


TASKS = Tasks(deliveries=_deliveries)
