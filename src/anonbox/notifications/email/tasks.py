"""E-mail notices' background work: notices recorded always, mailed when mail can be sent."""

from __future__ import annotations

from anonbox.core.chores import Needs, Tasks
from anonbox.notifications.courier import Delivery
from anonbox.notifications.email.delivery import EmailCourier, EmailNoticeChannel


def _deliveries(needs: Needs) -> list[Delivery]:
    channel = EmailNoticeChannel(needs.settings)
    if needs.mailer is None:
        return [Delivery(channel)]
    courier = EmailCourier(needs.db, needs.settings, needs.mailer)
    return [Delivery(channel, courier, courier.purge)]


TASKS = Tasks(deliveries=_deliveries)
