"""Liveness and readiness probes."""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from litestar import Request, get

from anonbox.core.dependencies import DB
from anonbox.core.envelope import Envelope, envelope, error_responses


class Health(msgspec.Struct):
    status: str


@get("/healthz", summary="The process is up", tags=["operations"])
async def healthz(request: Request[Any, Any, Any]) -> Envelope[Literal[200], Health]:
    return envelope(request, 200, "Up", Health(status="ok"))


@get(
    "/readyz",
    summary="The database answers",
    responses=error_responses(503),
    tags=["operations"],
)
async def readyz(request: Request[Any, Any, Any], db: DB) -> Envelope[Literal[200], Health]:
    await db.ping()
    return envelope(request, 200, "Ready", Health(status="ok"))
