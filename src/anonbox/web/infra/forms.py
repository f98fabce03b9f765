"""How the dashboard answers: pages whose forms carry the session's CSRF token, and form
posts answered with a redirect back to the page they came from (post/redirect/get), so
the dashboard works without JavaScript. Both hand back a renewed session."""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.datastructures import FormMultiDict
from litestar.response import Redirect, Template

from anonbox.core.errors import FieldProblem, ValidationFailed
from anonbox.core.settings import Settings
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


def back_path(form: FormMultiDict, default: str) -> str:
    """Where a form post returns to: one of the dashboard's own pages, nothing else."""
    back = str(form.get("back") or "")
    if back.startswith("/dashboard") and "//" not in back and "\\" not in back:
        return back
    return default


def redirect_to(browser: Browser, settings: Settings, location: str) -> Redirect:
    response = Redirect(path=location, status_code=303, headers=NO_STORE)
    carry_renewal(response, browser, settings)
    return response


def text_field(form: FormMultiDict, name: str) -> str:
    value = form.get(name)
    if not isinstance(value, str):
        raise ValidationFailed(f"{name} is missing", [FieldProblem(name, "missing")])
    return value
