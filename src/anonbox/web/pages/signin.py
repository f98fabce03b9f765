"""Page routes for signing in and out in a browser: the sign-in page with the ways this
server offers (an e-mail link; Google when configured), the link from the mail, the
provider's redirect back, and signing out. Each success ends on ``/dashboard`` (or on the
send page the sign-in page was opened from: ``next``, a send page's path only) with a
browser session (``web.infra.session``); each refusal is a page, never a JSON envelope.
"""

from __future__ import annotations

from typing import Annotated, Any

from litestar import MediaType, Request, Response, get, post
from litestar.datastructures import Cookie
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import OpenAPIType
from litestar.params import Parameter, QueryParameter
from litestar.response import Redirect, Template
from litestar.types import ControllerRouterHandler

from anonbox.auth.dependencies import (
    AUTH_COOKIE_PATH,
    GOOGLE_NOT_CONFIGURED,
    OIDC,
    SIGNIN_COOKIE,
    MaybeOIDC,
    signin_cookie,
)
from anonbox.auth.email_signin import (
    SignInLinkRefused,
    follow_link,
    new_binding,
    send_link,
)
from anonbox.auth.fediverse import service as fediverse_accounts
from anonbox.auth.fediverse.dependencies import FediverseDep
from anonbox.auth.oidc import SignInFailed
from anonbox.auth.sessions import close_session
from anonbox.auth.signin import finish_signin, start_signin
from anonbox.core.client import IPAddress
from anonbox.core.database import Database
from anonbox.core.dependencies import DB, AppSettings, ClientAddress, LimiterDep, MailerDep
from anonbox.core.errors import (
    AnonboxError,
    NotFound,
    RateLimited,
    ServiceUnavailable,
    ValidationFailed,
)
from anonbox.core.i18n import N_, ngettext
from anonbox.core.mail import ConsoleMailer
from anonbox.core.settings import Settings
from anonbox.safety.dependencies import GateDep
from anonbox.safety.gate import Gate
from anonbox.web.infra.locale import browser_language, public_locale
from anonbox.web.infra.return_to import ReturnPath, remember_return, return_path, to_dashboard
from anonbox.web.infra.routing import HTML, error_page, readable, site_url
from anonbox.web.infra.security import (
    checked_form,
    page_headers,
)
from anonbox.web.infra.session import (
    browser_session,
    carry_renewal,
    clear_session_cookies,
    set_session_cookies,
)
from anonbox.web.infra.signin_page import signin_page

AnyRequest = Request[Any, Any, Any]
_NO_STORE = {"Cache-Control": "no-store"}
# Binds an e-mail sign-in to the browser that asked for it; nothing else needs to see it.
EMAIL_COOKIE = "anonbox_email_signin"
EMAIL_COOKIE_PATH = "/signin"
_MAX_TOKEN_LENGTH = 100  # a link's token is 43 characters


def _email_cookie(binding: str, settings: Settings) -> Cookie:
    return Cookie(
        key=EMAIL_COOKIE,
        value=binding,
        path=EMAIL_COOKIE_PATH,
        max_age=settings.email_signin_ttl_seconds,
        httponly=True,
        secure=settings.secure_cookies,
        samesite="lax",  # sent when the link is opened from a mail: a top-level navigation
    )


@get("/signin")
async def signin(
    request: AnyRequest,
    db: DB,
    settings: AppSettings,
    back: ReturnPath = None,
) -> Response[Any]:
    browser = await browser_session(request, db, settings)
    path = return_path(back)
    if browser is not None:
        response: Response[Any] = (
            to_dashboard(request, settings)
            if path is None
            else Redirect(path=path, status_code=303, headers=dict(_NO_STORE))
        )
        carry_renewal(response, browser, settings)
        return response
    page = signin_page(request, settings)
    if path is not None:
        remember_return(page, settings, path)
    return page


@get("/signin/google")
async def signin_google(
    request: AnyRequest,
    db: DB,
    oidc: OIDC,
    settings: AppSettings,
    gate: GateDep,
    client_address: ClientAddress,
) -> Redirect:
    """The "Sign in with Google" button: off to the provider, bound to this browser.
    Each start writes a row, so starts count against the network's sign-in limit."""
    await gate.throttle_client(db, address=client_address, limit=settings.limit_signin_network)
    started = await start_signin(db, oidc, settings)
    return Redirect(
        path=started.url,
        status_code=303,
        cookies=[signin_cookie(settings, started.binding)],
        headers=_NO_STORE,
    )


async def _network(db: Database, gate: Gate, address: IPAddress | None) -> str | None:
    return None if address is None else (await gate.keys.current(db, address)).hash


@post(
    "/signin/email",
    status_code=200,
)
async def signin_email(
    request: AnyRequest,
    db: DB,
    settings: AppSettings,
    mailer: MailerDep,
    limiter: LimiterDep,
    gate: GateDep,
    client_address: ClientAddress,
) -> Response[Any]:
    """Mail a one-time sign-in link; the same page whether or not the address has an
    account."""
    form = await checked_form(request)
    if mailer is None:
        raise ServiceUnavailable("Sign-in by e-mail is not offered on this server", 3600)
    field = form.get("email")
    typed = field if isinstance(field, str) else ""
    binding = request.cookies.get(EMAIL_COOKIE) or ""
    if not 40 <= len(binding) <= 100:  # keep the binding of earlier links: they still work
        binding = new_binding()
    try:
        # The mail leaves after this answer (``auth.email_signin``): the page, and the
        # work done before it, are the same whether or not one is due.
        address = await send_link(
            db,
            limiter,
            settings,
            email=typed,
            network=await _network(db, gate, client_address),
            binding=binding,
            base_url=site_url(request, settings),
        )
    except ValidationFailed as exc:
        return signin_page(
            request,
            settings,
            problem=readable(exc.message, 400, exc.code),
            email=typed,
            status_code=400,
        )
    except (RateLimited, ServiceUnavailable) as exc:
        minutes = max(1, round(exc.retry_after / 60))
        problem = (
            ngettext(
                "Too many sign-in links were asked for; try again in %(num)d minute.",
                "Too many sign-in links were asked for; try again in %(num)d minutes.",
                minutes,
            )
            if isinstance(exc, RateLimited)
            else readable(exc.message, exc.status_code, exc.code)
        )
        page = signin_page(
            request, settings, problem=problem, email=typed, status_code=exc.status_code
        )
        page.headers["Retry-After"] = str(exc.retry_after)
        return page
    page = Template(
        template_name="signin_sent.html",
        context={
            "email": address,
            "minutes": settings.email_signin_ttl_seconds // 60,
            "console": isinstance(mailer, ConsoleMailer),
        },
        headers=dict(_NO_STORE),
        cookies=[_email_cookie(binding, settings)],
    )
    return page


@get("/signin/email")
async def signin_email_link(
    request: AnyRequest, db: DB, settings: AppSettings, token: str | None = None
) -> Response[Any]:
    """The link from the mail: signed in and on to the dashboard, or a page saying why not."""
    try:
        if not token or len(token) > _MAX_TOKEN_LENGTH:
            raise SignInLinkRefused(
                N_(
                    "This sign-in link is incomplete. Copy the whole link from the mail, or "
                    "ask for a new one below."
                )
            )
        tokens = await follow_link(
            db,
            settings,
            token=token,
            binding=request.cookies.get(EMAIL_COOKIE),
            language=browser_language(request),  # the switcher's choice, else Accept-Language
        )
    except SignInLinkRefused as exc:
        return signin_page(
            request, settings, problem=readable(exc.message, 400, exc.code), status_code=400
        )
    response = to_dashboard(request, settings)
    set_session_cookies(response, tokens, settings)
    response.delete_cookie(EMAIL_COOKIE, path=EMAIL_COOKIE_PATH)
    return response


# As the document states them: what a browser brings back from the provider. Checked here,
# not by Litestar, so that a bad one gets a page rather than the API's error envelope.
_PROVIDER_VALUE_DOC: dict[str, Any] = {
    "required": True,
    "schema_extra": {
        "one_of": None,
        "type": OpenAPIType.STRING,
        "min_length": 1,
        "max_length": 150,
    },
}
_PROVIDER_VALUE = Parameter(**_PROVIDER_VALUE_DOC)


def _page(description: str) -> ResponseSpec:
    return ResponseSpec(
        data_container=str,
        media_type=MediaType.HTML,
        description=description,
        generate_examples=False,
    )


# Beside the API's POST on the same path, so registered on the app itself, not in the
# page router (two routers may not both answer one path's OPTIONS): see ``web.routes``.
# In the API document because it shares the path: a client reading it learns that GET is
# answered (with pages), not refused.
@get(
    "/auth/google/callback",
    opt=HTML,
    status_code=303,
    media_type=MediaType.HTML,
    summary="Where Google sends the browser back: a page, not an API call",
    description="Finishes signing in and redirects (303) to /dashboard with the session's "
    "cookies; any problem is an HTML page saying what went wrong.",
    tags=["auth"],
    responses={
        400: _page("Cancelled, incomplete, unknown, expired or refused sign-in"),
        404: _page("Sign-in with Google is not offered on this server"),
        502: _page("The sign-in provider failed or could not be reached"),
        503: _page("The database is unavailable; see Retry-After"),
    },
    before_request=public_locale,
    after_request=page_headers,
)
async def google_callback_page(
    request: AnyRequest,
    db: DB,
    settings: AppSettings,
    google: MaybeOIDC,
    code: Annotated[str | None, _PROVIDER_VALUE] = None,
    returned_state: Annotated[
        str | None, QueryParameter(name="state", **_PROVIDER_VALUE_DOC)
    ] = None,
    # What the provider sends instead of a code when it did not sign the user in.
    error: Annotated[str | None, Parameter(include_in_schema=False)] = None,
) -> Response[Any]:
    """Where the provider sends a browser back: finish signing in, then ``/dashboard``."""
    try:
        if error is not None:
            raise SignInFailed(
                N_("Sign-in was cancelled.")
                if error == "access_denied"
                else N_("The sign-in provider could not sign you in; please try again.")
            )
        if not code or not returned_state or len(code) > 150 or len(returned_state) > 150:
            raise SignInFailed(
                N_("This sign-in address is incomplete; start again from the sign-in page.")
            )
        if google is None:
            raise NotFound(GOOGLE_NOT_CONFIGURED)
        tokens = await finish_signin(
            db,
            google,
            settings,
            code=code,
            state=returned_state,
            binding=request.cookies.get(SIGNIN_COOKIE),
            language=browser_language(request),
        )
    except AnonboxError as exc:
        page = error_page(exc.status_code, readable(exc.message, exc.status_code, exc.code))
        if (retry_after := getattr(exc, "retry_after", None)) is not None:
            page.headers["Retry-After"] = str(retry_after)
        return page
    response = to_dashboard(request, settings)
    set_session_cookies(response, tokens, settings)
    response.delete_cookie(SIGNIN_COOKIE, path=AUTH_COOKIE_PATH)
    return response


# Binds a fediverse sign-in (or linking) to the browser that started it.
FEDIVERSE_COOKIE = "anonbox_fediverse"
FEDIVERSE_COOKIE_PATH = "/signin/fediverse"
FEDIVERSE_CALLBACK = "/signin/fediverse/callback"


def fediverse_cookie(binding: str, settings: Settings) -> Cookie:
    return Cookie(
        key=FEDIVERSE_COOKIE,
        value=binding,
        path=FEDIVERSE_COOKIE_PATH,
        max_age=settings.signin_state_ttl_seconds,
        httponly=True,
        secure=settings.secure_cookies,
        samesite="lax",  # sent when the instance sends the browser back: a navigation
    )


def fediverse_callback(request: AnyRequest, settings: Settings) -> str:
    return site_url(request, settings) + FEDIVERSE_CALLBACK


@post("/signin/fediverse", status_code=303)
async def signin_fediverse(
    request: AnyRequest,
    db: DB,
    settings: AppSettings,
    gate: GateDep,
    fediverse: FediverseDep,
    client_address: ClientAddress,
) -> Response[Any]:
    """ "Sign in with Mastodon or Misskey": off to the instance typed, bound to this
    browser; a wrong, unreachable or refused address is the sign-in page saying so."""
    form = await checked_form(request)
    field = form.get("instance")
    typed = field if isinstance(field, str) else ""
    await gate.throttle_client(db, address=client_address, limit=settings.limit_signin_network)
    try:
        started = await fediverse_accounts.start(
            db,
            fediverse,
            settings,
            typed=typed,
            redirect_uri=fediverse_callback(request, settings),
            website=site_url(request, settings),
        )
    except AnonboxError as exc:
        return signin_page(
            request,
            settings,
            problem=readable(exc.message, exc.status_code, exc.code),
            instance=typed[:300],
            status_code=exc.status_code if exc.status_code < 500 else 400,
        )
    return Redirect(
        path=started.url,
        status_code=303,
        cookies=[fediverse_cookie(started.binding, settings)],
        headers=_NO_STORE,
    )


@get(FEDIVERSE_CALLBACK)
async def fediverse_callback_page(
    request: AnyRequest,
    db: DB,
    settings: AppSettings,
    fediverse: FediverseDep,
    code: str | None = None,
    returned_state: Annotated[str | None, QueryParameter(name="state")] = None,
    session: str | None = None,
    error: str | None = None,
) -> Response[Any]:
    """Where the instance sends the browser back (Mastodon: ``code`` and ``state``;
    Misskey's MiAuth: ``session``): signed in and on to the dashboard, or, after linking
    from the account page, back there."""
    returned = returned_state or session
    try:
        if error is not None:
            raise SignInFailed(
                N_("Sign-in was cancelled.")
                if error == "access_denied"
                else N_("The instance could not sign you in; please try again.")
            )
        if not returned or len(returned) > 150 or (code is not None and len(code) > 500):
            raise SignInFailed(
                N_("This sign-in address is incomplete; start again from the sign-in page.")
            )
        done = await fediverse_accounts.finish(
            db,
            fediverse,
            settings,
            state=returned,
            code=code,
            binding=request.cookies.get(FEDIVERSE_COOKIE),
            redirect_uri=fediverse_callback(request, settings),
            website=site_url(request, settings),
            language=browser_language(request),
        )
    except AnonboxError as exc:
        status = exc.status_code if exc.status_code < 500 else 400
        return error_page(status, readable(exc.message, exc.status_code, exc.code))
    if done.tokens is None:  # linked from the account page
        response: Response[Any] = Redirect(
            path="/dashboard/account?done=saved", status_code=303, headers=dict(_NO_STORE)
        )
    else:
        response = to_dashboard(request, settings)
        set_session_cookies(response, done.tokens, settings)
    response.delete_cookie(FEDIVERSE_COOKIE, path=FEDIVERSE_COOKIE_PATH)
    return response


@post("/signout", status_code=303)
async def signout(request: AnyRequest, db: DB, settings: AppSettings) -> Redirect:
    """End the session, with the CSRF token of that session; a browser no longer signed in
    has nothing to end and only loses its cookies."""
    browser = await browser_session(request, db, settings)
    if browser is not None:
        await checked_form(request, browser.principal.credential_id)
        await close_session(db, session_id=browser.principal.credential_id)
    response = Redirect(path="/signin", status_code=303, headers=_NO_STORE)
    clear_session_cookies(response, settings)
    return response


ROUTES: list[ControllerRouterHandler] = [
    signin,
    signin_google,
    signin_email,
    signin_email_link,
    signin_fediverse,
    fediverse_callback_page,
    signout,
]
