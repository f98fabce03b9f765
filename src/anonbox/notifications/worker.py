"""The one background loop of a process's notifications.

In turn: the relay hands the outbox's new events to the channels, each channel's
dispatcher claims and starts what is due, and now and then what is done is purged. The
loop runs twice a second, and sooner when the hub hears of a commit (on PostgreSQL the
writes ``pg_notify`` as they commit), but no more often than ``MIN_GAP_SECONDS``, so a
burst of posts is handed over in a few batches rather than a round per post. A step
that fails (the database away a moment) is logged and tried again on the next round;
the others go on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import httpx

from anonbox.core.database import Database
from anonbox.core.mail import Mailer
from anonbox.core.settings import Settings
from anonbox.notifications.courier import Courier, Dispatcher
from anonbox.notifications.crosspost.delivery import (
    CardMaker,
    CrosspostChannel,
    CrosspostCourier,
)
from anonbox.notifications.email.delivery import EmailCourier, EmailNoticeChannel
from anonbox.notifications.push.delivery import PushChannel, PushCourier
from anonbox.notifications.webhooks.delivery import WebhookChannel, WebhookCourier
from anonbox.outbox.relay import BATCH, Channel, Relay

logger = logging.getLogger("anonbox.notifications")

POLL_SECONDS = 0.5
MIN_GAP_SECONDS = 0.05
PURGE_SECONDS = 60.0
ATTEMPT_TIMEOUT_SECONDS = 10.0  # a webhook receiver's or push service's answer
# A channel of a domain above notifications: what records, what delivers, what purges.
Extra = tuple[Channel, Courier[Any], Callable[[], Awaitable[None]]]


async def _no_card(link_id: str, message_id: str) -> bytes | None:
    return None


class NotificationWorker:
    def __init__(
        self,
        relay: Relay,
        dispatchers: Sequence[Dispatcher[Any]],
        *,
        purges: Sequence[Callable[[], Awaitable[None]]] = (),
        woken: asyncio.Event | None = None,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self._relay = relay
        self._dispatchers = list(dispatchers)
        self._purges = [relay.purge, *purges]
        self._woken = woken or asyncio.Event()
        self._http = http

    @classmethod
    def for_service(
        cls,
        db: Database,
        settings: Settings,
        mailer: Mailer | None,
        woken: asyncio.Event,
        card: CardMaker | None = None,
        more: Callable[[httpx.AsyncClient], Sequence[Extra]] = lambda http: (),
    ) -> NotificationWorker:
        """Every channel: webhooks, Web Push, answers posted to fediverse accounts (with
        the share card ``card`` draws), and e-mail notices when mail can be sent;
        ``more``: the channels of domains above notifications (federation), given the
        worker's HTTP client, each with its courier and its purge."""
        http = httpx.AsyncClient(timeout=ATTEMPT_TIMEOUT_SECONDS)
        extra = list(more(http))
        relay = Relay(
            db,
            channels=[
                WebhookChannel(),
                PushChannel(),
                EmailNoticeChannel(settings),
                CrosspostChannel(),
                *(channel for channel, _, _ in extra),
            ],
        )
        crosspost = CrosspostCourier(db, settings, http, card or _no_card)
        dispatchers: list[Dispatcher[Any]] = [
            Dispatcher(WebhookCourier(db, settings, http)),
            Dispatcher(PushCourier(db, settings, http)),
            Dispatcher(crosspost),
            *(Dispatcher(courier) for _, courier, _ in extra),
        ]
        purges = [crosspost.purge, *(purge for _, _, purge in extra)]
        if mailer is not None:
            email = EmailCourier(db, settings, mailer)
            dispatchers.append(Dispatcher(email))
            purges.append(email.purge)
        return cls(relay, dispatchers, purges=purges, woken=woken, http=http)

    def stats(self) -> Sequence[tuple[str, str, Callable[[], Mapping[str, int]]]]:
        """For /metrics: the relay's, and each channel's deliveries (name, title, stats)."""
        return [
            ("outbox", "The outbox relay", self._relay.stats),
            *(
                (d.courier.name, f"{d.courier.title} deliveries", d.stats)
                for d in self._dispatchers
            ),
        ]

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        last_purge = 0.0
        try:
            while True:
                await self._step("the relay", self._hand_over)
                for dispatcher in self._dispatchers:
                    await self._step(dispatcher.courier.name, dispatcher.step)
                if loop.time() - last_purge > PURGE_SECONDS:
                    for purge in self._purges:
                        await self._step("purging", purge)
                    last_purge = loop.time()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._woken.wait(), POLL_SECONDS)
                self._woken.clear()
                await asyncio.sleep(MIN_GAP_SECONDS)
        finally:
            for dispatcher in self._dispatchers:
                await dispatcher.close()
            if self._http is not None:
                await self._http.aclose()

    async def _hand_over(self) -> None:
        while await self._relay.hand_over() == BATCH:
            pass

    @staticmethod
    async def _step(what: str, step: Callable[[], Awaitable[None]]) -> None:
        try:
            await step()
        except Exception:  # the database is away a moment: try again next round
            logger.warning("notifications: %s failed", what, exc_info=True)
