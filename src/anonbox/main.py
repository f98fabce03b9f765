"""The application, assembled in one page: every route and cross-cutting rule is named here."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from litestar import Litestar, Request, get
from litestar.datastructures import State
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme

from anonbox import __version__, wiring
from anonbox.account.router import ROUTES as ACCOUNT_ROUTES
from anonbox.auth.fediverse.router import ROUTES as FEDIVERSE_ROUTES
from anonbox.auth.router import ROUTES as AUTH_ROUTES
from anonbox.core import client
from anonbox.core.access import guarded
from anonbox.core.envelope import RequestClock
from anonbox.core.exception_handlers import exception_handlers
from anonbox.core.health import healthz, readyz
from anonbox.core.heap import freeze_startup_objects
from anonbox.core.metrics import Metrics, MetricsSettings, metrics_endpoint
from anonbox.core.openapi import ClosedStructs, document_retry_after
from anonbox.core.requests import JSONRequest, require_json_body
from anonbox.core.routing import with_options
from anonbox.core.settings import Settings
from anonbox.federation.router import ROUTES as FEDERATION_ROUTES
from anonbox.links.router import ROUTES as LINK_ROUTES
from anonbox.messages.router import ROUTES as MESSAGE_ROUTES
from anonbox.moderation.router import ROUTES as MODERATION_ROUTES
from anonbox.notifications.email.router import ROUTES as EMAIL_NOTICE_ROUTES
from anonbox.notifications.push.router import ROUTES as PUSH_ROUTES
from anonbox.notifications.webhooks.router import ROUTES as NOTIFICATION_ROUTES
from anonbox.receipts.router import ROUTES as RECEIPT_ROUTES
from anonbox.safety.router import ROUTES as SAFETY_ROUTES
from anonbox.web.infra.routing import TEMPLATES, error_page_for
from anonbox.web.routes import ROUTES as WEB_ROUTES


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
        try:
            async with wiring.started(settings, metrics) as parts:
                app.state.parts = parts
                app.state[client.STATE_KEY] = parts.clients  # for the request log, /metrics
                freeze_startup_objects()  # last: what start-up made lives as long as the process
                yield
        finally:
            if metrics is not None:
                metrics.close()

    app = Litestar(
        route_handlers=guarded(
            with_options(
                [
                    *MESSAGE_ROUTES,
                    *RECEIPT_ROUTES,
                    *AUTH_ROUTES,
                    *FEDIVERSE_ROUTES,
                    *LINK_ROUTES,
                    *SAFETY_ROUTES,
                    *MODERATION_ROUTES,
                    *NOTIFICATION_ROUTES,
                    *PUSH_ROUTES,
                    *EMAIL_NOTICE_ROUTES,
                    *ACCOUNT_ROUTES,
                    *FEDERATION_ROUTES,
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
                "metrics": metrics,
                "metrics_settings": metrics_settings,
            }
        ),
        dependencies=wiring.DEPENDENCIES,
        lifespan=[resources],
        before_request=require_json_body,
        request_class=JSONRequest,
        plugins=[ClosedStructs()],
        exception_handlers=exception_handlers(page=error_page_for),  # a browser gets a page
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
