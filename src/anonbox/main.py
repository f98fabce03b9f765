"""The application, assembled in one page: every route and cross-cutting rule is named here."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from litestar import Litestar, Request, get
from litestar.datastructures import State
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme

from anonbox import __version__
from anonbox.account.router import ROUTES as ACCOUNT_ROUTES
from anonbox.account.service import erase_due, erase_every
from anonbox.auth.dependencies import provide_oidc
from anonbox.auth.oidc import OIDCClient
from anonbox.auth.router import ROUTES as AUTH_ROUTES
from anonbox.auth.service import proven as proven_credentials
from anonbox.core.access import guarded
from anonbox.core.chores import Chore, run_chores
from anonbox.core.database import Database, connect
from anonbox.core.envelope import RequestClock
from anonbox.core.exception_handlers import EXCEPTION_HANDLERS
from anonbox.core.health import healthz, readyz
from anonbox.core.heap import freeze_startup_objects
from anonbox.core.mail import mailer_from_settings
from anonbox.core.metrics import Metrics, MetricsSettings, metrics_endpoint
from anonbox.core.openapi import ClosedStructs, document_retry_after
from anonbox.core.ratelimit import rate_limiter_from_settings
from anonbox.core.requests import JSONRequest, require_json_body
from anonbox.core.routing import with_options
from anonbox.core.settings import Settings
from anonbox.links import service as links
from anonbox.links.router import ROUTES as LINK_ROUTES
from anonbox.messages.filtered import service as filtered_messages
from anonbox.messages.router import ROUTES as MESSAGE_ROUTES
from anonbox.moderation.router import ROUTES as MODERATION_ROUTES
from anonbox.notifications.email.router import ROUTES as EMAIL_NOTICE_ROUTES
from anonbox.notifications.outbox.dependencies import provide_hub
from anonbox.notifications.outbox.fanout import Hub, feed_for
from anonbox.notifications.push.router import ROUTES as PUSH_ROUTES
from anonbox.notifications.webhooks.router import ROUTES as NOTIFICATION_ROUTES
from anonbox.notifications.worker import NotificationWorker
from anonbox.receipts import service as receipts
from anonbox.receipts.router import ROUTES as RECEIPT_ROUTES
from anonbox.safety.gate import Gate
from anonbox.safety.router import ROUTES as SAFETY_ROUTES
from anonbox.safety.senders import SenderKeys
from anonbox.web.cards.cache import CardCache
from anonbox.web.infra.routing import TEMPLATES
from anonbox.web.routes import ROUTES as WEB_ROUTES


def provide_db(state: State) -> Database:
    db: Database = state.db
    return db


def provide_settings(state: State) -> Settings:
    settings: Settings = state.settings
    return settings


def provide_gate(state: State) -> Gate:
    gate: Gate = state.gate
    return gate


def periodic_chores(settings: Settings) -> list[Chore]:
    """What every instance does on a timer (``core.chores``); each pass is idempotent, or
    claims its work, so that every instance running them all is safe."""
    return [
        Chore("account erasure", erase_every(settings), erase_due),
        Chore("purging expired receipts", receipts.PURGE_EVERY_SECONDS, receipts.purge_expired),
        Chore("resuming ended pauses", links.RESUME_SECONDS, links.resume_ended),
        Chore(
            "purging old filtered messages",
            filtered_messages.PURGE_EVERY_SECONDS,
            filtered_messages.purge_expired,
        ),
    ]


@get("/openapi.json", include_in_schema=False, media_type="application/json")
async def openapi_document(request: Request[Any, Any, Any]) -> dict[str, Any]:
    return document_retry_after(request.app.openapi_schema).to_schema()


def create_app(
    settings: Settings | None = None, metrics_settings: MetricsSettings | None = None
) -> RequestClock:
    settings = settings or Settings.from_env()
    metrics_settings = metrics_settings or MetricsSettings.from_env()
    metrics = Metrics() if metrics_settings.enabled else None
    # httpx logs every provider call at INFO; the calls are ours and their failures are errors.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.captureWarnings(True)  # a library's warning becomes a log line like any other

    @asynccontextmanager
    async def resources(app: Litestar) -> AsyncIterator[None]:
        app.state.db = await connect(settings.database_url, durable=settings.durable_commits)
        limiter = rate_limiter_from_settings(settings.redis_url, settings.rate_limit_fail_open)
        keys = SenderKeys(
            secret_key=settings.secret_key,
            rotation_hours=settings.sender_key_rotation_hours,
            retention_days=settings.sender_retention_days,
        )
        app.state.gate = Gate(settings, keys, limiter)
        app.state.limiter = limiter
        app.state.mailer = mailer_from_settings(settings)
        app.state.cards = CardCache()
        app.state.hub = hub = Hub()
        # Proven credentials are forgotten by the keys the fan-out hears, and kept long
        # only where the listener confirms it hears everything (auth.credential_cache).
        hub.tap(proven_credentials.forget)
        if app.state.db.dialect == "postgresql":
            proven_credentials.rely_on(lambda: hub.confirmed_at)
        worker = NotificationWorker.for_service(
            app.state.db, settings, app.state.mailer, app.state.hub.activity
        )
        background = [
            asyncio.create_task(feed_for(app.state.db, settings.database_url, app.state.hub).run()),
            asyncio.create_task(worker.run()),  # woken by activity, not a chore
            asyncio.create_task(run_chores(app.state.db, periodic_chores(settings))),
        ]
        http = httpx.AsyncClient(timeout=httpx.Timeout(10.0, connect=5.0))
        app.state.oidc = OIDCClient(settings, http) if settings.google_client_id else None
        refresher = None
        if metrics is not None:
            metrics.watch_database(app.state.db.stats)
            metrics.watch("cards", "Share cards", app.state.cards.stats)
            metrics.watch("live", "Live updates", app.state.hub.stats)
            metrics.watch("credentials", "Proven credentials", proven_credentials.stats)
            for part, title, stats in worker.stats():
                metrics.watch(part, title, stats)
            if metrics.directory:  # other workers may answer the scrape: keep ours fresh
                refresher = asyncio.create_task(metrics.refresh_forever())
        freeze_startup_objects()  # last: what start-up made lives as long as the process
        try:
            yield
        finally:
            for task in background:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if refresher is not None:
                refresher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await refresher
            if metrics is not None:
                metrics.close()
            await http.aclose()
            await limiter.close()
            await app.state.db.close()
            proven_credentials.rely_on(None)

    app = Litestar(
        route_handlers=guarded(
            with_options(
                [
                    *MESSAGE_ROUTES,
                    *RECEIPT_ROUTES,
                    *AUTH_ROUTES,
                    *LINK_ROUTES,
                    *SAFETY_ROUTES,
                    *MODERATION_ROUTES,
                    *NOTIFICATION_ROUTES,
                    *PUSH_ROUTES,
                    *EMAIL_NOTICE_ROUTES,
                    *ACCOUNT_ROUTES,
                    healthz,
                    readyz,
                    openapi_document,
                    *([metrics_endpoint] if metrics is not None else []),
                    *WEB_ROUTES,
                ]
            )
        ),
        template_config=TEMPLATES,
        state=State(
            {
                "settings": settings,
                "trusted_proxies": settings.trusted_proxies,
                "metrics": metrics,
                "metrics_settings": metrics_settings,
            }
        ),
        dependencies={
            "db": Provide(provide_db, sync_to_thread=False),
            "settings": Provide(provide_settings, sync_to_thread=False),
            "gate": Provide(provide_gate, sync_to_thread=False),
            "hub": Provide(provide_hub, sync_to_thread=False),
            "oidc": Provide(provide_oidc, sync_to_thread=False),
        },
        lifespan=[resources],
        before_request=require_json_body,
        request_class=JSONRequest,
        plugins=[ClosedStructs()],
        exception_handlers=EXCEPTION_HANDLERS,
        logging_config=None,  # logging is set up once for the process: core/logs.py
        request_max_body_size=settings.max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="anonbox",
            version=__version__,
            description="Anonymous messages to a shared link. Every response, success or "
            "error, is the same envelope: status_code, message, data, metadata "
            "(and error, on errors).",
            path="/schema",
            render_plugins=[JsonRenderPlugin()],
            components=Components(
                security_schemes={
                    "ApiKey": SecurityScheme(
                        type="apiKey", name="X-API-Key", security_scheme_in="header"
                    ),
                    "Bearer": SecurityScheme(type="http", scheme="bearer"),
                }
            ),
        ),
        debug=False,
    )
    return RequestClock(app, metrics)
