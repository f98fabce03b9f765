"""How page routes are put together: templates, static files, headers, and errors as pages.

Page handlers carry ``opt={"html": True}`` (through ``page_router``): the JSON-body rule
of the API (``core.requests.require_json_body``) skips them, and their errors render
``error.html`` instead of the JSON envelope. Errors elsewhere (an address that is no
route, an API route) render it too for a browser: ``error_page_for``, which ``main.py``
hands to ``core.exception_handlers``. Every error page is ``Cache-Control: no-store``: what
it says (a link gone, a limit reached) is true now, not for whoever asks next.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader
from litestar import Request, Response, Router
from litestar.config.compression import CompressionConfig
from litestar.exceptions import HTTPException, ValidationException
from litestar.middleware import DefineMiddleware
from litestar.middleware.compression import CompressionMiddleware
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.response import Template
from litestar.static_files import create_static_files_router
from litestar.template.config import TemplateConfig
from litestar.types import ControllerRouterHandler
from markupsafe import Markup

from anonbox.core import i18n
from anonbox.core.errors import AnonboxError, Gone, RateLimited, ServiceUnavailable
from anonbox.core.i18n import DEFAULT_TIME_ZONE, N_, gettext, set_locale
from anonbox.core.routing import OptionsRouter
from anonbox.core.settings import Settings
from anonbox.core.text import isolated
from anonbox.links import prompts
from anonbox.web.infra import forms
from anonbox.web.infra.locale import browser_language, public_locale, vary_by_language
from anonbox.web.infra.security import page_headers
from anonbox.web.infra.session import carry_renewal_of

# The web package's folder, which holds templates/ and static/ (one up from infra/).
HERE = Path(__file__).parent.parent


# Korean and Japanese letters, told apart: what a person wrote is marked with its own
# language where it is plainly one of them, so it breaks lines as that language does
# (app.css: Korean between words, Japanese between phrases) and is read aloud in it.
_HANGUL = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]")
_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")


def _lang_of(text: object) -> Markup:
    """`` lang="ko"`` or `` lang="ja"`` for text mostly in Hangul or with more kana than
    Hangul, when that is not the page's language; else nothing (Han alone may be Chinese)."""
    words = str(text or "")
    hangul, kana = len(_HANGUL.findall(words)), len(_KANA.findall(words))
    lang = "ko" if hangul > kana else "ja" if kana else ""
    return Markup(' lang="%s"') % lang if lang and lang != i18n.current_language() else Markup("")


def _environment() -> Environment:
    """Templates mark what a person reads with ``_("…")``, ``ngettext`` and ``{% trans %}``
    (Jinja's i18n extension, new-style: named placeholders, autoescaped)."""
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=True,
        extensions=["jinja2.ext.i18n"],
    )
    # Read the language of this request (``core.i18n``'s context variable) at each call.
    env.install_gettext_callables(  # type: ignore[attr-defined]
        gettext=lambda message: i18n.translations(i18n.current_language()).gettext(message),
        ngettext=lambda singular, plural, n: i18n.translations(i18n.current_language()).ngettext(
            singular, plural, n
        ),
        newstyle=True,
    )
    env.globals["current_language"] = i18n.current_language
    env.globals["LANGUAGES"] = i18n.LANGUAGES
    env.globals["current_time_zone"] = i18n.current_time_zone
    env.globals["time_zone_chosen"] = i18n.time_zone_chosen
    # The prompt presets a link form offers, in the page's language.
    env.globals["prompt_presets"] = lambda: prompts.presets(i18n.current_language())
    env.globals["done_texts"] = forms.done_texts  # what the last form post did
    env.filters["exact_time"] = i18n.exact_time
    env.filters["ago"] = i18n.relative_time
    env.filters["number"] = i18n.number
    # Text a person wrote (a name, a prompt) inside a sentence of ours: isolated, in its
    # own direction, so an Arabic name does not reorder the sentence around it.
    env.filters["bidi"] = lambda text: Markup('<bdi dir="auto">%s</bdi>') % text
    # The same where no element can hold it (a <title>, an attribute): bidi controls.
    env.filters["isolated"] = isolated
    env.filters["lang_of"] = _lang_of  # <p dir="auto"{{ text|lang_of }}>
    return env


TEMPLATES = TemplateConfig(instance=JinjaTemplateEngine.from_environment(_environment()))
HTML = {"html": True}

_TITLES = {
    400: N_("That did not work"),
    401: N_("Please sign in"),
    403: N_("Not allowed"),
    404: N_("Not found"),
    405: N_("Not allowed"),
    409: N_("Not possible right now"),
    410: N_("No longer available"),
    413: N_("Too long"),
    429: N_("Slow down"),
    503: N_("Unavailable"),
}
# What an error page says in a language other than English when the API's own (English)
# message has no translation: a sentence chosen by the error's code.
_SENTENCES = {
    "validation_failed": N_("Check what you sent and try again."),
    "bad_request": N_("Check what you sent and try again."),
    "unauthorized": N_("Sign in to see this page."),
    "forbidden": N_("You are not allowed to do this."),
    "not_found": N_("There is nothing here. Check the address."),
    "gone": N_("This is no longer available."),
    "conflict": N_("This is not possible right now."),
    "payload_too_large": N_("That is too long."),
    "unsupported_media_type": N_("Check what you sent and try again."),
    "rate_limited": N_("Too many tries. Wait a moment and try again."),
    "bad_gateway": N_("Something went wrong on our side."),
    "service_unavailable": N_("This is unavailable for a moment. Try again soon."),
    "internal_error": N_("Something went wrong on our side."),
}
_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "forbidden",
    409: "conflict",
    410: "gone",
    413: "payload_too_large",
    429: "rate_limited",
    503: "service_unavailable",
}
_log = logging.getLogger("anonbox.web")


def site_url(request: Request[Any, Any, Any], settings: Settings) -> str:
    """Where people reach this service, without the trailing slash: the configured public
    URL, or else (in development, or without one) the address this request came to."""
    return settings.public_url or str(request.base_url).rstrip("/")


def _sentence(status_code: int, code: str | None) -> str:
    """What an error means, in the reader's language: by its code, else by its status."""
    known = (key for key in (code, _CODES.get(status_code)) if key in _SENTENCES)
    return gettext(_SENTENCES[next(known, "internal_error")])


def readable(message: str, status_code: int, code: str | None = None) -> str:
    """An error's (English) message in the reader's language: itself where the catalog has
    it (marked ``N_`` where raised), else a sentence chosen by the error's code."""
    translated = gettext(message)
    if translated == message and i18n.current_language() != i18n.DEFAULT_LANGUAGE:
        translated = _sentence(status_code, code)
    return translated


def error_page(status_code: int, message: str) -> Template:
    """The error as a page; ``message`` already in the reader's language. Never stored:
    it says how things are now (``Cache-Control: no-store``)."""
    title = _TITLES.get(status_code, N_("Something went wrong"))
    return Template(
        template_name="error.html",
        context={"title": gettext(title), "message": message},
        status_code=status_code,
        headers={"Cache-Control": "no-store"},
    )


def _shown(request: Request[Any, Any, Any], page: Template) -> Template:
    """An error page made by an exception handler, with what ``after_request`` would have
    added to a page answered normally (it does not run for those), and any renewed session."""
    carry_renewal_of(request, page)
    _page_headers(page)
    return page


def error_page_for(
    request: Request[Any, Any, Any],
    status: int,
    code: str,
    message: str | None,
    headers: Mapping[str, str],
) -> Response[Any]:
    """``core.exception_handlers.ErrorPage``: an error outside the page routes (an address
    that is no route, an API route) as a browser gets it, in the visitor's language."""
    set_locale(browser_language(request), DEFAULT_TIME_ZONE)  # no page hook ran before
    text = _sentence(status, code) if message is None else readable(message, status, code)
    page = error_page(status, text)
    page.headers.update(headers)
    return _shown(request, page)


def _anonbox_error(request: Request[Any, Any, Any], exc: AnonboxError) -> Response[Any]:
    status = 410 if isinstance(exc, Gone) else exc.status_code
    page = error_page(status, readable(exc.message, status, exc.code))
    if isinstance(exc, RateLimited | ServiceUnavailable):
        page.headers["Retry-After"] = str(exc.retry_after)
    return _shown(request, page)


def _http_error(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    message = "Check what you sent and try again." if exc.status_code == 400 else exc.detail
    return _shown(request, error_page(exc.status_code, readable(message, exc.status_code)))


def _unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    # The route template, never the path: a path names links and messages.
    _log.exception("page %s failed", request.scope.get("path_template"), exc_info=exc)
    return _shown(request, error_page(500, gettext("Something went wrong on our side.")))


def _page_headers(response: Response[Any]) -> Response[Any]:
    vary_by_language(response)
    return page_headers(response)


# As ``after_request`` hooks, async: Litestar runs a plain function there on a worker
# thread, a hop that cost a kept public page about a tenth of its CPU (issue 43).
async def _after_page(response: Response[Any]) -> Response[Any]:
    return _page_headers(response)


async def _after_static(response: Response[Any]) -> Response[Any]:
    return page_headers(response)


# Pages and their scripts and stylesheet go out gzipped to a browser that takes it: a full
# inbox page of long messages is ~60 KB of HTML and ~8 KB on the wire, which is what a
# slow phone waits for. The API is not compressed (its bodies are small, and the write
# path's CPU goes to writing), nor is the dashboard's event stream (an event must leave
# when it happens, not when a compressor's buffer fills).
PAGE_COMPRESSION = DefineMiddleware(
    CompressionMiddleware,
    config=CompressionConfig(
        backend="gzip",
        minimum_size=1024,
        gzip_compress_level=6,
        exclude=[r"/events$", r"\.png$", r"\.webp$"],  # PNGs and WebPs are compressed already
    ),
)


def page_router(*handlers: ControllerRouterHandler) -> Router:
    return OptionsRouter(
        path="/",
        route_handlers=handlers,
        middleware=[PAGE_COMPRESSION],
        opt=HTML,
        include_in_schema=False,
        before_request=public_locale,
        after_request=_after_page,
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
    after_request=_after_static,
    middleware=[PAGE_COMPRESSION],
    cache_control=None,
    router_class=OptionsRouter,
)
