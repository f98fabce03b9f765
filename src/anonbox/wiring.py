"""Every long-lived object of a process, built once at start-up and handed to handlers.

``main.py`` opens :func:`started` in the app's lifespan and registers
:data:`DEPENDENCIES` app-wide: a handler that names one of them (``db: DB``,
``gate: GateDep``, ``posting: PostingDep``...) is given the process's object, and
nothing is made lazily on a first request. Each dependency's type is declared beside
what it injects (``core.dependencies``, ``safety.dependencies``,
``messages.dependencies``, ``outbox.dependencies``,
``web.cards.cache``); none of them is an access rule (those are types with their own
providers: ``core.access``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from litestar import Request
from litestar.datastructures import State
from litestar.di import Provide

from anonbox.account import tasks as account_tasks
from anonbox.auth import tasks as auth_tasks
from anonbox.auth.dependencies import provide_oidc
from anonbox.auth.fediverse.client import InstanceClient
from anonbox.auth.oidc import OIDCClient
from anonbox.core.chores import Needs, Runner, Tasks
from anonbox.core.client import ClientAddresses, IPAddress
from anonbox.core.database import Database
from anonbox.core.mail import Mailer, mailer_from_settings
from anonbox.core.metrics import Metrics
from anonbox.core.ratelimit import RateLimiter, rate_limiter_from_settings
from anonbox.core.replicas import open_database, reads_for
from anonbox.core.settings import Settings
from anonbox.federation import service as federation
from anonbox.federation import tasks as federation_tasks
from anonbox.identity.service import proven as proven_credentials
from anonbox.links import tasks as links_tasks
from anonbox.messages import service as messages
from anonbox.messages.filtered import service as filtered_messages
from anonbox.messages.filtered import tasks as filtered_tasks
from anonbox.notifications.courier import Delivery
from anonbox.notifications.crosspost import tasks as crosspost_tasks
from anonbox.notifications.email import tasks as email_tasks
from anonbox.notifications.push import tasks as push_tasks
from anonbox.notifications.webhooks import tasks as webhook_tasks
from anonbox.notifications.worker import ATTEMPT_TIMEOUT_SECONDS, NotificationWorker
from anonbox.outbox.fanout import Hub, feed_for
from anonbox.receipts import tasks as receipts_tasks
from anonbox.safety.gate import Gate
from anonbox.safety.senders import SenderKeys
from anonbox.safety.service import MoveMuted
from anonbox.web.cards.cache import CardCache
from anonbox.web.infra.page_cache import PAGES
from anonbox.web.pages.share_card import answer_cards


@dataclass(frozen=True, slots=True)
class Parts:
    """What one process shares between its requests."""

    settings: Settings
    clients: ClientAddresses  # who is calling: the trusted proxies, read once
    db: Database
    limiter: RateLimiter
    gate: Gate
    mailer: Mailer | None
    cards: CardCache
    hub: Hub
    posting: messages.Posting
    likes: messages.LikeWriter
    replies: messages.ReplyWriter
    worker: NotificationWorker
    oidc: OIDCClient | None  # Google sign-in, when configured
    fediverse: InstanceClient  # sign-in with Mastodon or Misskey
    federation: federation.Federation  # followable links (ActivityPub)


# Every package's background work (``core.chores``): its chores and its delivery
# channels, each declared in the package's ``tasks.py``. A new job is declared there; a
# package that has background work for the first time adds its ``TASKS`` here.
TASKS: list[Tasks[Delivery]] = [
    webhook_tasks.TASKS,
    push_tasks.TASKS,
    email_tasks.TASKS,
    crosspost_tasks.TASKS,
    account_tasks.TASKS,
    receipts_tasks.TASKS,
    links_tasks.TASKS,
    federation_tasks.TASKS,
    filtered_tasks.TASKS,
    auth_tasks.TASKS,
]


def runner_of(needs: Needs, woken: asyncio.Event) -> tuple[Runner, NotificationWorker]:
    """The one runner of every package's chores and deliveries (the notification worker,
    woken by ``woken``, runs the deliveries)."""
    worker = NotificationWorker.of(
        needs.db, [d for tasks in TASKS for d in tasks.deliveries(needs)], woken
    )
    chores = [chore for tasks in TASKS for chore in tasks.chores(needs)]
    return Runner(needs.db, chores, loops=[worker]), worker


async def _stop(task: asyncio.Task[Any]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


@asynccontextmanager
async def started(settings: Settings, metrics: Metrics | None) -> AsyncIterator[Parts]:
    """Open the database, build every shared object, start the background work (the live
    feed, and the runner of every package's chores and deliveries), and undo it all on
    the way out."""
    db = await open_database(settings)
    limiter = rate_limiter_from_settings(settings.redis_url, settings.rate_limit_fail_open)
    keys = SenderKeys(
        secret_key=settings.secret_key,
        rotation_hours=settings.sender_key_rotation_hours,
        retention_days=settings.sender_retention_days,
    )
    gate = Gate(settings, keys, limiter)
    mailer = mailer_from_settings(settings)
    hub = Hub()
    # Proven credentials are forgotten by the keys the fan-out hears, and kept long only
    # where the listener confirms it hears everything (identity.credential_cache).
    hub.tap(proven_credentials.forget)
    feed = feed_for(db, settings.direct_database_url, hub)  # LISTEN: never through a pooler
    if feed.confirms:
        proven_credentials.rely_on(lambda: hub.confirmed_at)
    http = httpx.AsyncClient(timeout=httpx.Timeout(10.0, connect=5.0))
    # Deliveries' own client: a receiver's whole answer within the attempt's time.
    delivery_http = httpx.AsyncClient(timeout=ATTEMPT_TIMEOUT_SECONDS)
    cards = CardCache()
    runner, worker = runner_of(
        Needs(
            db=db,
            settings=settings,
            mailer=mailer,
            http=delivery_http,
            card=answer_cards(db, cards, settings),
        ),
        hub.activity,
    )
    clients = ClientAddresses(settings.trusted_proxies)
    parts = Parts(
        settings=settings,
        clients=clients,
        db=db,
        limiter=limiter,
        gate=gate,
        mailer=mailer,
        cards=cards,
        hub=hub,
        posting=messages.Posting(
            db=db,
            gate=gate,
            writer=messages.message_writer(db),
            clients=clients,
        ),
        likes=messages.like_writer(db),
        replies=messages.reply_writer(db),
        worker=worker,
        oidc=OIDCClient(settings, http) if settings.google_client_id else None,
        fediverse=InstanceClient(http, allow_private=settings.federation_allow_private),
        federation=federation.Federation(settings, http),
    )
    background = [
        asyncio.create_task(feed.run()),
        asyncio.create_task(runner.run()),  # every package's chores and deliveries
    ]
    if metrics is not None:
        metrics.watch_database(db.stats)
        metrics.watch("cards", "Share cards", parts.cards.stats)
        metrics.watch("pages", "Public pages kept per content version", PAGES.stats)
        metrics.watch("live", "Live updates", hub.stats)
        metrics.watch("credentials", "Proven credentials", proven_credentials.stats)
        for part, title, stats in parts.worker.stats():
            metrics.watch(part, title, stats)
        metrics.watch_jobs(runner.jobs)
        if metrics.directory:  # other workers may answer the scrape: keep ours fresh
            background.append(asyncio.create_task(metrics.refresh_forever()))
    try:
        yield parts
    finally:
        for task in background:
            await _stop(task)
        await delivery_http.aclose()
        await http.aclose()
        await limiter.close()
        await db.close()
        proven_credentials.rely_on(None)


def _part(name: str) -> Provide:
    def provide(state: State) -> object:
        return getattr(state.parts, name)

    provide.__name__ = f"provide_{name}"
    return Provide(provide, sync_to_thread=False)


def _provided(provider: Callable[..., Any]) -> Provide:
    return Provide(provider, sync_to_thread=False)


def provide_public_db(request: Request[Any, Any, Any], state: State) -> Database:
    return reads_for(request, state.parts.db)


def provide_client_address(request: Request[Any, Any, Any], state: State) -> IPAddress | None:
    clients: ClientAddresses = state.parts.clients
    return clients.of(request.scope)


def provide_move_muted() -> MoveMuted:
    """Messages' filtered folder, for safety's muted words (which build below it)."""
    return filtered_messages.move_muted


# Each name a handler may take, and where its value comes from: the process's parts,
# except ``oidc``, whose provider answers 404 where Google sign-in is not configured.
DEPENDENCIES: dict[str, Provide] = {
    **{
        name: _part(name)
        for name in (
            "db",
            "settings",
            "gate",
            "hub",
            "limiter",
            "mailer",
            "cards",
            "posting",
            "fediverse",
        )
    },
    "likes": _part("likes"),
    "federation": _part("federation"),
    "replies": _part("replies"),
    "google": _part("oidc"),
    "oidc": _provided(provide_oidc),
    "public_db": _provided(provide_public_db),
    "client_address": _provided(provide_client_address),
    "move_muted": _provided(provide_move_muted),
}
