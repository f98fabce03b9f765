"""Page routes: the creator's account — muted words, blocked senders, API keys, a download
of all of it, and deleting the account (the one page an account being deleted still sees).

Form posts as in ``web.pages.inbox``: the session's CSRF token, a redirect back (except a new
API key, shown this once on the page itself), the API's own services.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from litestar import Request, Response, get, post
from litestar.datastructures import UploadFile
from litestar.response import Redirect, Stream, Template
from litestar.types import ControllerRouterHandler

from anonbox.account import avatar
from anonbox.account import service as account_settings
from anonbox.account import service as deletion
from anonbox.account.export import EXPORT_MESSAGE, export_filename, open_export
from anonbox.auth import service as accounts
from anonbox.auth.fediverse import service as fediverse_accounts
from anonbox.auth.fediverse.dependencies import FediverseDep
from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Database
from anonbox.core.dependencies import DB, AppSettings
from anonbox.core.envelope import streamed_envelope
from anonbox.core.errors import FieldProblem, ValidationFailed
from anonbox.core.i18n import current_language, current_time_zone, exact_time, time_zone_choices
from anonbox.core.paths import RowId
from anonbox.core.settings import Settings
from anonbox.messages.filtered.service import move_muted
from anonbox.safety import service as blocks
from anonbox.safety import service as mutes
from anonbox.web.infra.dependencies import (
    DELETION_PAGE,
    AccountHolderBrowser,
    SignedInBrowser,
    SignedInForm,
    account_holder_pages,
    signed_in_pages,
)
from anonbox.web.infra.forms import (
    NO_STORE,
    back_path,
    dashboard_page,
    redirect_to,
    text_field,
)
from anonbox.web.infra.routing import site_url
from anonbox.web.infra.security import cookie_name
from anonbox.web.infra.session import Browser, carry_renewal, clear_session_cookies
from anonbox.web.pages.signin import fediverse_callback, fediverse_cookie

ACCOUNT = "/dashboard/account"
# Set by "Not now" on the dashboard's profile prompt: the prompt stays away in this browser.
PROFILE_PROMPT_COOKIE = "anonbox_profile_prompt"
_PROMPT_COOKIE_SECONDS = 365 * 24 * 3600
DELETE_ACCOUNT = "/dashboard/account/delete"

AnyRequest = Request[Any, Any, Any]


async def _account_page(
    request: AnyRequest,
    db: Database,
    settings: Settings,
    browser: Browser,
    new_key: str | None = None,
    status_code: int = 200,
) -> Template:
    user_id = browser.principal.user_id
    return dashboard_page(
        request,
        browser,
        settings,
        "dashboard_account.html",
        {
            "profile": await account_settings.signed_in_as(db, user_id=user_id),
            "public_profile": await account_settings.public_profile(db, user_id=user_id),
            "avatar": await account_settings.avatar_of(db, user_id=user_id),
            "muted": (await mutes.muted_words(db, owner_id=user_id)).items,
            "api_keys": await accounts.list_api_keys(db, user_id=user_id),
            "fediverse_accounts": await fediverse_accounts.accounts(db, user_id=user_id),
            "blocked": (await blocks.blocks_of(db, owner_id=user_id)).items,
            "new_key": new_key,
            "language": current_language(),
            "time_zone": current_time_zone(),
            "here": ACCOUNT,
        },
        status_code,
    )


@get(ACCOUNT)
async def account(
    request: AnyRequest, browser: SignedInBrowser, db: DB, settings: AppSettings
) -> Template:
    return await _account_page(request, db, settings, browser)


@post("/dashboard/muted-words", status_code=303)
async def mute_word(
    browser: SignedInBrowser, form: SignedInForm, db: DB, settings: AppSettings
) -> Redirect:
    await mutes.mute(
        db, owner_id=browser.principal.user_id, word=text_field(form, "word"), move=move_muted
    )
    return redirect_to(browser, settings, ACCOUNT)


@post("/dashboard/muted-words/{word_id:str}/delete", status_code=303)
async def unmute_word(
    browser: SignedInBrowser, word_id: RowId, db: DB, settings: AppSettings
) -> Redirect:
    await mutes.unmute(db, owner_id=browser.principal.user_id, word_id=word_id)
    return redirect_to(browser, settings, ACCOUNT)


@post("/dashboard/blocks/{block_id:str}/delete", status_code=303)
async def unblock(
    browser: SignedInBrowser, block_id: RowId, db: DB, settings: AppSettings
) -> Redirect:
    await blocks.unblock(db, owner_id=browser.principal.user_id, block_id=block_id)
    return redirect_to(browser, settings, ACCOUNT)


@post("/dashboard/api-keys", status_code=201)
async def create_api_key(
    request: AnyRequest,
    browser: SignedInBrowser,
    form: SignedInForm,
    db: DB,
    settings: AppSettings,
) -> Template:
    """Answered with the page itself, not a redirect: the key is shown this once."""
    name = text_field(form, "name")
    if len(name) > 100:
        raise ValidationFailed(
            "name must be 1 to 100 characters", [FieldProblem("name", "too_long")]
        )
    key = await accounts.create_api_key(db, user_id=browser.principal.user_id, name=name)
    return await _account_page(request, db, settings, browser, key.api_key, 201)


@post("/dashboard/api-keys/{key_id:str}/revoke", status_code=303)
async def revoke_api_key(
    browser: SignedInBrowser, key_id: RowId, db: DB, settings: AppSettings
) -> Redirect:
    await accounts.revoke_api_key(db, user_id=browser.principal.user_id, key_id=key_id)
    return redirect_to(browser, settings, ACCOUNT)


@post(ACCOUNT + "/fediverse", status_code=303)
async def link_fediverse_account(
    request: AnyRequest,
    browser: SignedInBrowser,
    form: SignedInForm,
    db: DB,
    settings: AppSettings,
    fediverse: FediverseDep,
) -> Redirect:
    """ "Link a Mastodon or Misskey account": off to the instance, bound to this browser;
    back at ``/signin/fediverse/callback``, the account is linked to this one."""
    started = await fediverse_accounts.start(
        db,
        fediverse,
        settings,
        typed=text_field(form, "instance"),
        redirect_uri=fediverse_callback(request, settings),
        website=site_url(request, settings),
        user_id=browser.principal.user_id,
    )
    response = Redirect(
        path=started.url,
        status_code=303,
        headers=NO_STORE,
        cookies=[fediverse_cookie(started.binding, settings)],
    )
    carry_renewal(response, browser, settings)
    return response


@post(ACCOUNT + "/fediverse/{account_id:str}/unlink", status_code=303)
async def unlink_fediverse_account(
    browser: SignedInBrowser,
    account_id: RowId,
    db: DB,
    settings: AppSettings,
    fediverse: FediverseDep,
) -> Redirect:
    await fediverse_accounts.unlink(
        db, fediverse, user_id=browser.principal.user_id, account_id=account_id
    )
    return redirect_to(browser, settings, ACCOUNT)


@post(ACCOUNT + "/preferences", status_code=303)
async def save_preferences(
    browser: SignedInBrowser, form: SignedInForm, db: DB, settings: AppSettings
) -> Redirect:
    """The language of the creator's pages and mail, and the time zone of their times."""
    await account_settings.set_preferences(
        db,
        user_id=browser.principal.user_id,
        language=text_field(form, "language"),
        time_zone=text_field(form, "time_zone"),
    )
    return redirect_to(browser, settings, ACCOUNT)


@post(ACCOUNT + "/time-zone", status_code=204)
async def first_time_zone(browser: SignedInBrowser, form: SignedInForm, db: DB) -> None:
    """The browser's zone, sent once by the first dashboard page of an account that has
    none (dashboard.js); without JavaScript the account reads times in UTC until the
    account page's picker says otherwise."""
    await account_settings.first_time_zone(
        db, user_id=browser.principal.user_id, time_zone=text_field(form, "time_zone")
    )


@post(ACCOUNT + "/profile", status_code=303)
async def save_profile(
    browser: SignedInBrowser, form: SignedInForm, db: DB, settings: AppSettings
) -> Redirect:
    """The public name and bio, from the account page or the dashboard's prompt (back
    where the form was)."""
    await account_settings.set_public_profile(
        db,
        user_id=browser.principal.user_id,
        display_name=text_field(form, "display_name"),
        bio=text_field(form, "bio") if isinstance(form.get("bio"), str) else None,
        set_bio=isinstance(form.get("bio"), str),
    )
    return redirect_to(browser, settings, back_path(form, ACCOUNT))


@post(
    ACCOUNT + "/avatar",
    status_code=303,
    # The picture's 2 MB and the form around it; the service refuses a larger picture.
    request_max_body_size=avatar.MAX_BYTES + 64 * 1024,
)
async def upload_avatar(
    browser: SignedInBrowser, form: SignedInForm, db: DB, settings: AppSettings
) -> Redirect:
    """The picture from the account page's file field (a multipart form)."""
    upload = form.get("avatar")
    if not isinstance(upload, UploadFile):
        raise avatar.UnusableAvatar("Choose a PNG, JPEG or WebP picture", "missing")
    data = await upload.read(avatar.MAX_BYTES + 1)
    await account_settings.set_avatar(db, user_id=browser.principal.user_id, data=data)
    return redirect_to(browser, settings, ACCOUNT)


@post(ACCOUNT + "/avatar/delete", status_code=303)
async def remove_avatar(browser: SignedInBrowser, db: DB, settings: AppSettings) -> Redirect:
    await account_settings.delete_avatar(db, user_id=browser.principal.user_id)
    return redirect_to(browser, settings, ACCOUNT)


@post("/dashboard/profile-prompt/dismiss", status_code=303)
async def dismiss_profile_prompt(
    browser: SignedInBrowser, form: SignedInForm, settings: AppSettings
) -> Redirect:
    """Answer "Not now": the dashboard stops asking for a name in this browser (the account
    page still offers it)."""
    response = redirect_to(browser, settings, back_path(form, "/dashboard"))
    response.set_cookie(
        cookie_name(PROFILE_PROMPT_COOKIE, settings),
        "dismissed",
        max_age=_PROMPT_COOKIE_SECONDS,
        httponly=True,
        secure=settings.secure_cookies,
        samesite="lax",
        path="/",
    )
    return response


def profile_prompt_dismissed(request: AnyRequest, settings: Settings) -> bool:
    return request.cookies.get(cookie_name(PROFILE_PROMPT_COOKIE, settings)) == "dismissed"


@get(ACCOUNT + "/export")
async def download_data(request: AnyRequest, browser: SignedInBrowser, db: DB) -> Stream:
    """The same document as ``GET /account/export``, as a file to save."""
    data = await open_export(db, user_id=browser.principal.user_id)
    return Stream(
        streamed_envelope(request, 200, EXPORT_MESSAGE, data),
        media_type="application/json",
        headers={
            "Content-Disposition": f'attachment; filename="{export_filename()}"',
            **NO_STORE,
        },
    )


@get(DELETE_ACCOUNT)
async def confirm_deletion(
    request: AnyRequest, browser: SignedInBrowser, db: DB, settings: AppSettings
) -> Template:
    erase_at = isoformat_us(now_us() + deletion.grace_us(settings))
    return dashboard_page(
        request,
        browser,
        settings,
        "dashboard_deletion.html",
        {
            "mode": "confirm",
            "profile": await account_settings.signed_in_as(db, user_id=browser.principal.user_id),
            "erase_at": erase_at,
            "erase_date": exact_time(erase_at),
            "here": DELETE_ACCOUNT,
        },
    )


@post(DELETE_ACCOUNT, status_code=200)
async def delete_account(
    request: AnyRequest,
    browser: SignedInBrowser,
    form: SignedInForm,
    db: DB,
    settings: AppSettings,
) -> Template:
    """Schedule the erasure; this browser's session ends with every other."""
    if form.get("confirm") != "yes":
        raise ValidationFailed(
            "Tick the box to confirm that you want your account deleted",
            [FieldProblem("confirm", "missing")],
        )
    state = await deletion.request_deletion(
        db, user_id=browser.principal.user_id, settings=settings
    )
    assert state.erase_at is not None, "a deletion just asked for is scheduled"
    page = Template(
        template_name="dashboard_deletion.html",
        context={
            "mode": "scheduled",
            "erase_at": state.erase_at,
            "erase_date": exact_time(state.erase_at),
        },
        headers=NO_STORE,
    )
    clear_session_cookies(page, settings)
    return page


@get(DELETION_PAGE)
async def deletion_page(
    request: AnyRequest, browser: AccountHolderBrowser, db: DB, settings: AppSettings
) -> Template | Redirect:
    """All an account being deleted sees: when it will be erased, and a way to cancel."""
    state = await deletion.deletion_state(db, user_id=browser.principal.user_id)
    if not state.scheduled or state.erase_at is None:
        return redirect_to(browser, settings, "/dashboard")
    return dashboard_page(
        request,
        browser,
        settings,
        "dashboard_deletion.html",
        {
            "mode": "pending",
            "erase_at": state.erase_at,
            "erase_date": exact_time(state.erase_at),
            "here": DELETION_PAGE,
        },
    )


@post(DELETION_PAGE + "/cancel", status_code=303)
async def cancel_deletion(browser: AccountHolderBrowser, db: DB, settings: AppSettings) -> Redirect:
    await deletion.cancel_deletion(db, user_id=browser.principal.user_id)
    return redirect_to(browser, settings, "/dashboard")


# The picker's suggestions, fetched by static/time_zone.js: 419 zones are 15 KB, more than
# half of a page's budget, and the same for everyone, so they are kept by browsers and
# shared caches for an hour (an offset in the labels changes twice a year at most).
_ZONES_KEPT = "public, max-age=3600"


@get("/time-zones.json", include_in_schema=False)
async def time_zone_suggestions(request: AnyRequest) -> Response[Any]:
    body = json.dumps(time_zone_choices(), ensure_ascii=False, separators=(",", ":")).encode()
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    headers = {"Cache-Control": _ZONES_KEPT, "ETag": etag, "Vary": "Accept-Encoding"}
    if request.headers.get("if-none-match") == etag:
        return Response(content=b"", status_code=304, headers=headers)
    return Response(content=body, media_type="application/json", headers=headers)


ROUTES: list[ControllerRouterHandler] = [
    time_zone_suggestions,
    signed_in_pages(
        account,
        mute_word,
        unmute_word,
        unblock,
        create_api_key,
        revoke_api_key,
        link_fediverse_account,
        unlink_fediverse_account,
        save_preferences,
        first_time_zone,
        save_profile,
        upload_avatar,
        remove_avatar,
        dismiss_profile_prompt,
        download_data,
        confirm_deletion,
        delete_account,
    ),
    account_holder_pages(deletion_page, cancel_deletion),
]
