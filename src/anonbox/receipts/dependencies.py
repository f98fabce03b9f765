"""What the receipt routes take from a request."""

from __future__ import annotations

from anonbox.core.envelope import AnyRequest
from anonbox.core.settings import Settings


def site_of(request: AnyRequest) -> str:
    """Where people reach this service, for the receipt's URL (as ``web.infra.routing.site_url``,
    a layer up): the configured public URL, or else the address this request came to."""
    settings: Settings = request.app.state.settings
    return settings.public_url or str(request.base_url).rstrip("/")
