"""HTTP endpoints for a creator's links and their settings."""

from __future__ import annotations

from litestar.handlers import HTTPRouteHandler

ROUTES: list[HTTPRouteHandler] = []
