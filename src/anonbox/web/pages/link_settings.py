"""Page routes: a link's settings, on a page of their own.

The form once sat under the inbox and made it ~2,800 px long on a phone; the inbox now links
here with one "Settings" link (issue 41). The form posts to the same address as before and
comes back here saying "Settings saved." (``web.infra.forms.Done``). It calls the links
service the JSON API's PATCH calls, so each rule lives in one place. See ``docs/pages.md``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from litestar import Request, get, post
from litestar.datastructures import FormMultiDict
from litestar.response import Redirect, Template
from litestar.types import ControllerRouterHandler

from anonbox.account import service as account
from anonbox.core.dependencies import DB, AppSettings
from anonbox.core.errors import FieldProblem, ValidationFailed
from anonbox.links import service as links
from anonbox.web.infra.dependencies import (
    OwnedPageLink,
    SignedInBrowser,
    SignedInForm,
    signed_in_pages,
)
from anonbox.web.infra.forms import (
    Done,
    back_path,
    dashboard_page,
    preset_choice,
    redirect_to,
    text_field,
)

AnyRequest = Request[Any, Any, Any]

SETTINGS_PAGE = "/dashboard/links/{link_id:str}/settings"


def settings_path(link_id: str) -> str:
    return f"/dashboard/links/{link_id}/settings"


@get(SETTINGS_PAGE)
async def link_settings_page(
    request: AnyRequest,
    browser: SignedInBrowser,
    link: OwnedPageLink,
    db: DB,
    settings: AppSettings,
) -> Template:
    user_id = browser.principal.user_id
    found = await links.link(db, link_id=link.link_id, user_id=user_id)
    return dashboard_page(
        request,
        browser,
        settings,
        "dashboard_link_settings.html",
        {
            "profile": await account.signed_in_as(db, user_id=user_id),
            "link": found,
            "settings_of_link": found,
            "base": f"/dashboard/links/{link.link_id}",
            "here": settings_path(link.link_id),
            # The fediverse switch, where the site federates: the handle people follow.
            "fediverse_handle": (
                f"@{link.link_id}@{urlsplit(settings.public_url).netloc}"
                if settings.federates and settings.public_url
                else None
            ),
            # Where it does not, the switch is shown off and says why (issue 41): the
            # server's public address is missing, or its operator turned following off.
            "fediverse_missing": (
                None if settings.federates else "off" if not settings.federation else "public_url"
            ),
        },
    )


# The settings form's pause choice: open, paused until resumed, or for so many hours;
# "keep" leaves a timed pause running.
_PAUSE_HOURS = {"24": 24, "168": 7 * 24}


def _muted_choice(form: FormMultiDict) -> str | None:
    """The form's choice for messages with a muted word; absent keeps the setting."""
    muted = form.get("muted")
    if muted is None:
        return None
    if muted not in {"filter", "drop"}:
        raise ValidationFailed(
            "muted is not one of the choices", [FieldProblem("muted", "invalid")]
        )
    return str(muted)


def _text_or_none(form: FormMultiDict, name: str) -> str | None:
    value = form.get(name)
    return value if isinstance(value, str) else None


@post(SETTINGS_PAGE, status_code=303)
async def link_settings(
    browser: SignedInBrowser, link: OwnedPageLink, form: SignedInForm, db: DB, settings: AppSettings
) -> Redirect:
    pause = str(form.get("pause") or ("paused" if form.get("paused") == "on" else "open"))
    if pause not in {"open", "paused", "keep", *_PAUSE_HOURS}:
        raise ValidationFailed(
            "pause is not one of the choices", [FieldProblem("pause", "invalid")]
        )
    # Checkboxes say nothing when unticked: the form marks that it shows them.
    full = form.get("all_settings") == "1"
    await links.update_link(
        db,
        link_id=link.link_id,
        user_id=browser.principal.user_id,
        prompt=preset_choice(form) or text_field(form, "prompt"),
        paused=None if pause in {"keep", *_PAUSE_HOURS} else pause == "paused",
        pause_for_hours=_PAUSE_HOURS.get(pause),
        hide_dates=form.get("hide_dates") == "on" if full else None,
        follow_ups=form.get("follow_ups") == "on" if full else None,
        muted=_muted_choice(form) if full else None,
        crosspost=_text_or_none(form, "crosspost") if full else None,
        crosspost_cw=_text_or_none(form, "crosspost_cw") if full else None,
        senders=_text_or_none(form, "senders") if full else None,  # the service checks it
        fediverse=form.get("fediverse") == "on" if full and settings.federates else None,
        fediverse_discoverable=(
            form.get("fediverse_discoverable") == "on" if full and settings.federates else None
        ),
        settings=settings,
        language=_text_or_none(form, "language") if full else None,  # the service checks it
        card_theme=_text_or_none(form, "card_theme") if full else None,
        federation_visibility=_text_or_none(form, "federation_visibility") if full else None,
    )
    return redirect_to(browser, settings, back_path(form, settings_path(link.link_id)), Done.SAVED)


ROUTES: list[ControllerRouterHandler] = [signed_in_pages(link_settings_page, link_settings)]
