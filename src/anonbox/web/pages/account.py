"""Page routes: the creator's account — muted words, blocked senders, API keys, a download
of all of it, and deleting the account (the one page an account being deleted still sees).

Form posts as in ``web.pages.inbox``: the session's CSRF token, a redirect back (except a new
API key, shown this once on the page itself), the API's own services.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get, post
from litestar.response import Redirect, Stream, Template
from litestar.types import ControllerRouterHandler

from anonbox.account import service as account_settings
from anonbox.account import service as deletion
from anonbox.account.export import EXPORT_MESSAGE, export_filename, open_export
from anonbox.auth import service as accounts
from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Database
from anonbox.core.dependencies import DB, AppSettings
from anonbox.core.envelope import streamed_envelope
from anonbox.core.errors import FieldProblem, ValidationFailed
from anonbox.core.i18n import current_language, current_time_zone, exact_time, time_zones
from anonbox.core.paths import RowId
from anonbox.core.settings import Settings
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
from anonbox.web.infra.forms import NO_STORE, dashboard_page, redirect_to, text_field
from anonbox.web.infra.session import Browser, clear_session_cookies

ACCOUNT = "/dashboard/account"
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
            "profile": await accounts.profile(db, user_id=user_id),
            "muted": (await mutes.muted_words(db, owner_id=user_id)).items,
            "api_keys": await accounts.list_api_keys(db, user_id=user_id),
            "blocked": (await blocks.blocks_of(db, owner_id=user_id)).items,
            "new_key": new_key,
            "language": current_language(),
            "time_zone": current_time_zone(),
            "time_zones": time_zones(),
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
    await mutes.mute(db, owner_id=browser.principal.user_id, word=text_field(form, "word"))
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
            "profile": await accounts.profile(db, user_id=browser.principal.user_id),
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


ROUTES: list[ControllerRouterHandler] = [
    signed_in_pages(
        account,
        mute_word,
        unmute_word,
        unblock,
        create_api_key,
        revoke_api_key,
        save_preferences,
        download_data,
        confirm_deletion,
        delete_account,
    ),
    account_holder_pages(deletion_page, cancel_deletion),
]
