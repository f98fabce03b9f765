"""Page routes: the creator's account — muted words, blocked senders, API keys.

Form posts as in ``web.inbox``: the session's CSRF token, a redirect back (except a new
API key, shown this once on the page itself), the API's own services.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get, post
from litestar.response import Redirect, Template
from litestar.types import ControllerRouterHandler

from anonbox.auth import service as accounts
from anonbox.core.database import Database
from anonbox.core.dependencies import DB, AppSettings
from anonbox.core.errors import FieldProblem, ValidationFailed
from anonbox.core.paths import RowId
from anonbox.core.settings import Settings
from anonbox.safety import blocks, mutes
from anonbox.web.dependencies import SignedInBrowser, SignedInForm, signed_in_pages
from anonbox.web.forms import dashboard_page, redirect_to, text_field
from anonbox.web.session import Browser

ACCOUNT = "/dashboard/account"

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


ROUTES: list[ControllerRouterHandler] = [
    signed_in_pages(account, mute_word, unmute_word, unblock, create_api_key, revoke_api_key)
]
