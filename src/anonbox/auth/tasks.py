"""auth's background work: the sign-in mails, sent after the ask is answered
(``email_signin``) when mail can be sent, and the sweep of expired sign-in links."""

from __future__ import annotations

from anonbox.auth import email_signin
from anonbox.auth.email_signin import SignInMailCourier
from anonbox.core.chores import Chore, Needs, Tasks
from anonbox.notifications.courier import Delivery


def _deliveries(needs: Needs) -> list[Delivery]:
    if needs.mailer is None:
        return []
    courier = SignInMailCourier(needs.db, needs.settings, needs.mailer)
    # Written by the ask itself, not handed over by the outbox: no channel.
    return [Delivery(None, courier, courier.purge)]


def _chores(needs: Needs) -> list[Chore]:
    return [
        Chore(
            "sweeping expired sign-in links",
            email_signin.SWEEP_SECONDS,
            email_signin.sweep_expired,
        )
    ]


TASKS = Tasks(chores=_chores, deliveries=_deliveries)
