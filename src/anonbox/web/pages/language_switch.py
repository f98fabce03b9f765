"""The footer's language switcher: remember the language chosen, and go back to the page.

Which language a page speaks (the choice, else ``Accept-Language``) is ``web.infra.locale``.
"""

from __future__ import annotations

from typing import Annotated

from litestar import get
from litestar.params import QueryParameter
from litestar.response import Redirect
from litestar.types import ControllerRouterHandler

from anonbox.core.i18n import LANGUAGES
from anonbox.core.settings import Settings
from anonbox.web.infra.locale import LANGUAGE_COOKIE, AnyRequest
from anonbox.web.infra.security import cookie_name

_YEAR = 365 * 24 * 3600


def _safe_next(path: str | None) -> str:
    if path and path.startswith("/") and not path.startswith("//") and "\\" not in path:
        return path
    return "/"


@get("/language/{language:str}")
async def choose_language(
    request: AnyRequest,
    language: str,
    back: Annotated[str | None, QueryParameter(name="next")] = None,
) -> Redirect:
    """The switcher's links: remember the language a year, and go back where they were."""
    settings: Settings = request.app.state.settings
    response = Redirect(
        path=_safe_next(back), status_code=303, headers={"Cache-Control": "no-store"}
    )
    if language in LANGUAGES:
        response.set_cookie(
            cookie_name(LANGUAGE_COOKIE, settings),
            language,
            max_age=_YEAR,
            httponly=True,
            secure=settings.secure_cookies,
            samesite="lax",
            path="/",
        )
    return response


ROUTES: list[ControllerRouterHandler] = [choose_language]
