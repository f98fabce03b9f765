"""Page routes: public (to be written)."""

from __future__ import annotations

from litestar.types import ControllerRouterHandler

ROUTES: list[ControllerRouterHandler] = []
