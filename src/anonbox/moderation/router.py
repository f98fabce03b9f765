"""HTTP endpoints for reports and the admin's moderation tools."""

from __future__ import annotations

from litestar.handlers import HTTPRouteHandler

ROUTES: list[HTTPRouteHandler] = []
