"""HTTP endpoints for a creator's safety tools: blocked senders and muted words."""

from __future__ import annotations

from litestar.handlers import HTTPRouteHandler

ROUTES: list[HTTPRouteHandler] = []
