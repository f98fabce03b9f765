"""What makes anonbox installable on a phone and its link easy to pass on: the web app
manifest at ``/manifest.webmanifest`` (icons in ``static/icons``), and the QR code of a
link, drawn on the server as SVG for its owner's dashboard. See ``docs/pages.md``."""

from __future__ import annotations

import io
import json
from typing import Any

import segno
from litestar import Request, Response, get
from litestar.types import ControllerRouterHandler

from anonbox.core.dependencies import AppSettings
from anonbox.web.infra.dependencies import OwnedPageLink, SignedInBrowser, signed_in_pages
from anonbox.web.infra.routing import site_url
from anonbox.web.infra.session import carry_renewal

AnyRequest = Request[Any, Any, Any]

# The light theme's background and accent (static/app.css): the splash screen and the bar.
BACKGROUND = "#f6f5f2"
THEME = "#3d2bd6"

MANIFEST: dict[str, Any] = {
    "name": "anonbox",
    "short_name": "anonbox",
    "description": "Anonymous messages to you, answered when you like.",
    "id": "/dashboard",
    "start_url": "/dashboard",
    "scope": "/",
    "display": "standalone",
    "background_color": BACKGROUND,
    "theme_color": THEME,
    "icons": [
        {"src": "/static/icons/icon-192.png", "sizes": "192x192", "type": "image/png"},
        {"src": "/static/icons/icon-512.png", "sizes": "512x512", "type": "image/png"},
        {
            "src": "/static/icons/maskable-512.png",
            "sizes": "512x512",
            "type": "image/png",
            "purpose": "maskable",
        },
    ],
}


@get("/manifest.webmanifest", name="manifest", sync_to_thread=False)
def manifest() -> Response[bytes]:
    return Response(
        content=json.dumps(MANIFEST).encode(),
        media_type="application/manifest+json",
        headers={"Cache-Control": "public, max-age=3600"},
    )


def qr_svg(url: str) -> bytes:
    """``url`` as a QR code in SVG: error correction M (it survives a crease or a crack in
    a screen), one unit per module, a quiet zone of four, a title for screen readers."""
    code = segno.make(url, error="m", micro=False)
    out = io.BytesIO()
    code.save(out, kind="svg", border=4, dark="#000000", light="#ffffff", title=f"QR code: {url}")
    return out.getvalue()


@get("/dashboard/links/{link_id:str}/qr.svg", name="dashboard:qr")
async def link_qr(
    request: AnyRequest, browser: SignedInBrowser, link: OwnedPageLink, settings: AppSettings
) -> Response[bytes]:
    """The QR code of the owner's link, to show to someone who has a phone in hand."""
    url = f"{site_url(request, settings)}/{link.link_id}"
    response = Response(
        content=qr_svg(url),
        media_type="image/svg+xml",
        headers={"Cache-Control": "private, max-age=3600"},
    )
    carry_renewal(response, browser, settings)
    return response


ROUTES: list[ControllerRouterHandler] = [manifest, signed_in_pages(link_qr)]
