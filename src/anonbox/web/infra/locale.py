"""Which language a page speaks (the footer's switcher, which remembers a choice, is
``web.pages.language_switch``).

Public pages (home, sign-in, the send page, receipts, errors) speak the language chosen
with the switcher (a cookie), else the best match of ``Accept-Language``. A creator's own
pages speak the language of their account setting (``web.infra.dependencies`` sets it once the
browser is known, after this hook). Answers that vary so say ``Vary: Accept-Language,
Cookie``.

Times are in the zone of the creator the page is about, in the page's language
(``core.i18n.exact_time``: "11月29日(日) 19:32", no seconds, "UTC" only in UTC): their own
pages and e-mails in their zone, and a link's public pages (the send page, answer pages,
receipts) too, through ``in_creator_zone``, so a sender reads "paused until 19:32" as the
creator would say it (docs/decisions.md, issue 41). Pages about no creator (home,
sign-in, errors) show times in UTC, and say so.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response

from anonbox.core.database import Database
from anonbox.core.i18n import (
    DEFAULT_TIME_ZONE,
    LANGUAGES,
    current_language,
    negotiate,
    set_locale,
)
from anonbox.core.settings import Settings
from anonbox.links import service as links
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
    """``before_request`` of page routes: the visitor's language, times in UTC (until a
    page about a link says whose zone: ``in_creator_zone``)."""
    set_locale(browser_language(request), DEFAULT_TIME_ZONE)


async def in_creator_zone(db: Database, link_id: str) -> None:
    """For the rest of this page: times in the zone of ``link_id``'s creator (UTC if they
    have none), still in the visitor's language."""
    zone = await links.creator_time_zone(db, link_id=link_id)
    set_locale(current_language(), zone or DEFAULT_TIME_ZONE)


def vary_by_language(response: Response[Any]) -> None:
    """Pages (a template's media type is settled later, so unset counts) vary by language;
    images and other files do not."""
    media_type = str(response.media_type or "text/html")
    if media_type.startswith("text/html"):
        # Added to what the page varies by already (``Accept``, where it is negotiated).
        named = [v.strip() for v in response.headers.get("Vary", "").split(",") if v.strip()]
        lowered = {v.lower() for v in named}
        named += [v for v in ("Accept-Language", "Cookie") if v.lower() not in lowered]
        response.headers["Vary"] = ", ".join(named)
