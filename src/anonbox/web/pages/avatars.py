"""The creators' pictures at their public addresses (``account.avatar``): an upload at
``/avatars/{id}.webp``, a generated one at ``/avatars/generated/{key}.svg`` and the neutral
one at ``/avatars/neutral.svg``; the generated and neutral ones also as PNG (``….png``,
for the fediverse, whose servers show no SVG). No address names the account or its
e-mail; each address always shows the same picture (an upload is a new address), so
browsers keep it long."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

from litestar import Response, get
from litestar.types import ControllerRouterHandler

from anonbox.account import avatar
from anonbox.account import service as account
from anonbox.core.dependencies import DB
from anonbox.core.envelope import AnyRequest
from anonbox.web.pages.public import not_found

# The same bytes at an address for ever; an SVG shown on its own runs nothing.
_KEPT = "public, max-age=31536000, immutable"
_SVG_POLICY = "default-src 'none'; style-src 'unsafe-inline'"


def _image(request: AnyRequest, content: bytes | None, media_type: str, etag: str) -> Response[Any]:
    """The picture (``content``; None only when the browser has it: ``_kept``), or 304."""
    headers = {"Cache-Control": _KEPT, "ETag": f'"{etag}"', "X-Content-Type-Options": "nosniff"}
    if media_type == "image/svg+xml":
        headers["Content-Security-Policy"] = _SVG_POLICY
    if _kept(request, etag) or content is None:
        return Response(content=b"", status_code=304, headers=headers)
    return Response(content=content, media_type=media_type, headers=headers)


def _kept(request: AnyRequest, etag: str) -> bool:
    return request.headers.get("if-none-match") == f'"{etag}"'


async def _png(request: AnyRequest, draw: Callable[[], bytes], etag: str) -> Response[Any]:
    """A drawn PNG, drawn off the event loop and only for a browser that lacks it."""
    content = None if _kept(request, etag) else await asyncio.to_thread(draw)
    return _image(request, content, "image/png", etag)


@get("/avatars/{file:str}", name="avatar")
async def uploaded_avatar(request: AnyRequest, file: str, db: DB) -> Response[Any]:
    if file == avatar.NEUTRAL_URL.rsplit("/", 1)[1]:
        return _image(request, avatar.neutral_svg().encode(), "image/svg+xml", "neutral")
    if file == avatar.NEUTRAL_PNG_URL.rsplit("/", 1)[1]:
        return await _png(request, avatar.neutral_png, "neutral-png")
    avatar_id = avatar.uploaded_id(file)
    image = None if avatar_id is None else await account.avatar_image(db, avatar_id=avatar_id)
    if avatar_id is None or image is None:
        return not_found(request)
    # Removed or replaced, it is gone from here at once; only a browser that kept it
    # still shows it.
    return _image(request, image, "image/webp", avatar_id)


@get("/avatars/generated/{file:str}", name="avatar-generated")
async def generated_avatar(request: AnyRequest, file: str) -> Response[Any]:
    key = avatar.generated_of(file)
    if key is None:
        return not_found(request)
    if file.endswith(".png"):
        return await _png(request, functools.partial(avatar.generated_png, key), f"{key}-png")
    return _image(request, avatar.generated_svg(key).encode(), "image/svg+xml", key)


ROUTES: list[ControllerRouterHandler] = [uploaded_avatar, generated_avatar]
