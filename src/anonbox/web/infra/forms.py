"""How the dashboard answers: pages whose forms carry the session's CSRF token, and form
posts answered with a redirect back to the page they came from (post/redirect/get), so
the dashboard works without JavaScript. Both hand back a renewed session."""

from __future__ import annotations

from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from litestar import Request
from litestar.datastructures import FormMultiDict
from litestar.response import Redirect, Template

from anonbox.account import service as account
from anonbox.core.database import Database
from anonbox.core.errors import FieldProblem, ValidationFailed
from anonbox.core.i18n import N_, current_language, gettext
from anonbox.core.settings import Settings
from anonbox.links.prompts import preset_prompt
from anonbox.web.infra.security import CSRF_FIELD, session_csrf_token, set_csrf_cookie
from anonbox.web.infra.session import Browser, carry_renewal

NO_STORE = {"Cache-Control": "no-store"}


def dashboard_page(
    request: Request[Any, Any, Any],
    browser: Browser,
    settings: Settings,
    template: str,
    context: dict[str, Any],
    status_code: int = 200,
) -> Template:
    token, new_nonce = session_csrf_token(request, browser.principal.credential_id)
    page = Template(
        template_name=template,
        context={
            **context,
            "csrf_token": token,
            "csrf_field": CSRF_FIELD,
            "is_admin": browser.principal.is_admin,  # the nav links to /admin for admins only
        },
        status_code=status_code,
        headers=NO_STORE,
    )
    if new_nonce is not None:
        set_csrf_cookie(page, new_nonce, settings)
    carry_renewal(page, browser, settings)
    return page


async def confirm_page(
    request: Request[Any, Any, Any],
    browser: Browser,
    db: Database,
    settings: Settings,
    *,
    title: str,
    text: str,
    action: str,
    button: str,
    cancel: str,
    back: str = "",
) -> Template:
    """A dashboard page that asks before a destructive action, for browsers without
    JavaScript (``inplace.js`` asks in place). ``back``: the dashboard page the action
    returns to, when not its own default."""
    return dashboard_page(
        request,
        browser,
        settings,
        "dashboard_confirm.html",
        {
            "profile": await account.signed_in_as(db, user_id=browser.principal.user_id),
            "title": title,
            "text": text,
            "action": action,
            "button": button,
            "cancel": cancel,
            "here": back,  # the form's "back" field (web.infra.forms.back_path)
        },
    )


def back_path(form: FormMultiDict, default: str) -> str:
    """Where a form post returns to: one of the dashboard's own pages, nothing else."""
    back = str(form.get("back") or "")
    if back.startswith("/dashboard") and "//" not in back and "\\" not in back:
        return back
    return default


class Done(StrEnum):
    """What a form post did, named in its redirect (``?done=``) so the page it returns to
    says so (``done_notice`` in ``dashboard_macros.html``; ``static/inplace.js`` too)."""

    REPLIED = "replied"
    REPLY_DELETED = "reply-deleted"
    LIKED = "liked"
    UNLIKED = "unliked"
    DELETED = "deleted"
    BLOCKED = "blocked"
    NETWORK_BLOCKED = "network-blocked"
    UNBLOCKED = "unblocked"
    ON_STREAM = "on-stream"
    SAVED = "saved"
    READ = "read"  # "Mark all as read" (web.pages.inbox)


_DONE_TEXTS = {
    Done.REPLIED: N_("Reply sent. Share your answer below."),
    Done.REPLY_DELETED: N_("Reply deleted."),
    Done.LIKED: N_("Liked."),
    Done.UNLIKED: N_("Like taken back."),
    Done.DELETED: N_("Message deleted."),
    Done.BLOCKED: N_("Sender blocked: what they send from now on will not reach your inbox."),
    Done.NETWORK_BLOCKED: N_(
        "Network blocked: what is sent from it from now on will not reach your inbox."
    ),
    Done.UNBLOCKED: N_("Block undone: what they send reaches your inbox again."),
    Done.ON_STREAM: N_("On your stream overlay now."),
    Done.SAVED: N_("Settings saved."),
    Done.READ: N_("All marked as read."),
}


def done_texts() -> dict[str, str]:
    """Each ``Done``'s sentence in the page's language (a template global)."""
    return {str(done): gettext(text) for done, text in _DONE_TEXTS.items()}


def with_done(location: str, done: Done) -> str:
    """``location`` with ``?done=`` added (before any ``#fragment``)."""
    parts = urlsplit(location)
    query = "&".join(p for p in (parts.query, f"done={done}") if p)
    return urlunsplit(("", "", parts.path, query, parts.fragment))


def redirect_to(
    browser: Browser, settings: Settings, location: str, done: Done | None = None
) -> Redirect:
    if done is not None:
        location = with_done(location, done)
    response = Redirect(path=location, status_code=303, headers=NO_STORE)
    carry_renewal(response, browser, settings)
    return response


def text_field(form: FormMultiDict, name: str) -> str:
    value = form.get(name)
    if not isinstance(value, str):
        raise ValidationFailed(f"{name} is missing", [FieldProblem(name, "missing")])
    return value


def preset_choice(form: FormMultiDict) -> str | None:
    """The prompt preset a link form picked (``preset``), in the page's language (the
    creator's); None when the creator kept their own words. A picked preset wins over the
    field: without JavaScript, picking one cannot fill the field."""
    key = form.get("preset")
    if not isinstance(key, str) or not key:
        return None
    text = preset_prompt(key, current_language())
    if text is None:
        raise ValidationFailed(
            "preset is not one of the choices", [FieldProblem("preset", "invalid")]
        )
    return text
