"""How page routes are put together: templates, static files, headers, and errors as pages.

Page handlers carry ``opt={"html": True}`` (through ``page_router``): the JSON-body rule
of the API (``core.requests.require_json_body``) skips them, and their errors render
``error.html`` instead of the JSON envelope.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader
from litestar import Request, Response, Router
from litestar.exceptions import HTTPException, ValidationException
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.response import Template
from litestar.static_files import create_static_files_router
from litestar.template.config import TemplateConfig
from litestar.types import ControllerRouterHandler

from anonbox.core.errors import AnonboxError, RateLimited, ServiceUnavailable
from anonbox.core.settings import Settings
from anonbox.web.security import page_headers
from anonbox.web.session import carry_renewal_of

HERE = Path(__file__).parent


def _environment() -> Environment:
    """Templates mark what a person reads with ``_("…")``, ``ngettext`` and ``{% trans %}``
    (Jinja's i18n extension, new-style: named placeholders, autoescaped)."""
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=True,
        extensions=["jinja2.ext.i18n"],
    )
    env.install_null_translations(newstyle=True)  # type: ignore[attr-defined]
    return env


TEMPLATES = TemplateConfig(instance=JinjaTemplateEngine.from_environment(_environment()))
HTML = {"html": True}

_TITLES = {
    400: "That did not work",
    401: "Please sign in",
    403: "Not allowed",
    404: "Not found",
    405: "Not allowed",
    409: "Not possible right now",
    410: "No longer available",
    413: "Too long",
    429: "Slow down",
    503: "Unavailable",
}
_log = logging.getLogger("anonbox.web")


def site_url(request: Request[Any, Any, Any], settings: Settings) -> str:
    """Where people reach this service, without the trailing slash: the configured public
    URL, or else (in development, or without one) the address this request came to."""
    return settings.public_url or str(request.base_url).rstrip("/")


def error_page(status_code: int, message: str) -> Template:
    return Template(
        template_name="error.html",
        context={"title": _TITLES.get(status_code, "Something went wrong"), "message": message},
        status_code=status_code,
        headers={},
    )


def _anonbox_error(request: Request[Any, Any, Any], exc: AnonboxError) -> Response[Any]:
    page = error_page(exc.status_code, exc.message)
    if isinstance(exc, RateLimited | ServiceUnavailable):
        page.headers["Retry-After"] = str(exc.retry_after)
    carry_renewal_of(request, page)
    return page


def _http_error(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    message = "Check what you sent and try again." if exc.status_code == 400 else exc.detail
    page = error_page(exc.status_code, message)
    carry_renewal_of(request, page)
    return page


def _unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    # The route template, never the path: a path names links and messages.
    _log.exception("page %s failed", request.scope.get("path_template"), exc_info=exc)
    page = error_page(500, "Something went wrong on our side.")
    carry_renewal_of(request, page)
    return page


def page_router(*handlers: ControllerRouterHandler) -> Router:
    return Router(
        path="/",
        route_handlers=list(handlers),
        opt=HTML,
        include_in_schema=False,
        after_request=page_headers,
        exception_handlers={
            AnonboxError: _anonbox_error,
            ValidationException: _http_error,
            HTTPException: _http_error,
            Exception: _unexpected,
        },
    )


STATIC = create_static_files_router(
    path="/static",
    directories=[HERE / "static"],
    include_in_schema=False,
    opt=HTML,
    after_request=page_headers,
    cache_control=None,
)
