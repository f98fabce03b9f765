"""auth's background work: the sign-in mails, sent after the ask is answered
(``email_signin``), when mail can be sent."""

from __future__ import annotations

from anonbox.auth.email_signin import SignInMailCourier
from anonbox.core.chores import Needs, Tasks
from anonbox.notifications.courier import Delivery


def _deliveries(needs: Needs) -> list[Delivery]:
    if needs.mailer is None:
        return []
    courier = SignInMailCourier(needs.db, needs.settings, needs.mailer)
    # Written by the ask itself, not handed over by the outbox: no channel.
    return [Delivery(None, courier, courier.purge)]


TASKS = Tasks(deliveries=_deliveries)
