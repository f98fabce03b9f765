"""Every page route, in one list for the application."""

from __future__ import annotations

from litestar.types import ControllerRouterHandler

from anonbox.web import apidocs, dashboard, public
from anonbox.web.routing import STATIC, page_router

# The dashboard and docs come first: their fixed paths must not read as link ids.
ROUTES: list[ControllerRouterHandler] = [
    page_router(*dashboard.ROUTES, *apidocs.ROUTES, *public.ROUTES),
    STATIC,
]
