"""Which language a page speaks (the footer's switcher, which remembers a choice, is
``web.pages.language_switch``).

Public pages (home, sign-in, the send page, receipts, errors) speak the language chosen
with the switcher (a cookie), else the best match of ``Accept-Language``. A creator's own
pages speak the language of their account setting (``web.infra.dependencies`` sets it once the
browser is known, after this hook). Answers that vary so say ``Vary: Accept-Language,
Cookie``. Public pages show exact times in UTC: the reader's zone is unknown, and the
creator's zone is theirs, not something to tell visitors.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response

from anonbox.core.i18n import DEFAULT_TIME_ZONE, LANGUAGES, negotiate, set_locale
from anonbox.core.settings import Settings
from anonbox.web.infra.security import cookie_name

LANGUAGE_COOKIE = "anonbox_lang"

AnyRequest = Request[Any, Any, Any]


def chosen_language(request: AnyRequest) -> str | None:
    """The language picked with the switcher, if any."""
    settings: Settings = request.app.state.settings
    chosen = request.cookies.get(cookie_name(LANGUAGE_COOKIE, settings))
    return chosen if chosen in LANGUAGES else None


def browser_language(request: AnyRequest) -> str:
    """The switcher's choice, else the best match of the browser's ``Accept-Language``."""
    return chosen_language(request) or negotiate(request.headers.get("accept-language"))


async def public_locale(request: AnyRequest) -> None:
    """``before_request`` of page routes: the visitor's language, times in UTC."""
    set_locale(browser_language(request), DEFAULT_TIME_ZONE)


def vary_by_language(response: Response[Any]) -> None:
    """Pages (a template's media type is settled later, so unset counts) vary by language;
    images and other files do not."""
    media_type = str(response.media_type or "text/html")
    if media_type.startswith("text/html"):
        response.headers["Vary"] = "Accept-Language, Cookie"
