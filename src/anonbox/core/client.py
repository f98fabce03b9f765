"""Who is calling: the address the envelope reports and abuse controls key on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def client_ip(scope: Mapping[str, Any]) -> str:
    # The socket peer. X-Forwarded-For is deliberately ignored until trusted proxies
    # are configurable, so a caller cannot claim another address.
    client = scope.get("client")
    return client[0] if client else "unknown"
