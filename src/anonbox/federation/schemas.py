"""Request and response bodies of the admin's federation endpoints (the envelope's ``data``).

The ActivityPub documents themselves are not enveloped: peers read them as the specs
say (``activities``)."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar.params import KwargDefinition

from anonbox.core.envelope import Timestamp

# A server's host name as the document states it; the service also bounds the whole.
DOMAIN_PATTERN = r"^[A-Za-z0-9-]{1,63}(\.[A-Za-z0-9-]{1,63})*\.?$"


class BlockedDomainIn(msgspec.Struct):
    domain: Annotated[
        str,
        KwargDefinition(
            min_length=1,
            max_length=253,
            pattern=DOMAIN_PATTERN,
            description="A server's host name (example.social); its subdomains are blocked too",
        ),
    ]


class BlockedDomain(msgspec.Struct):
    domain: str
    created_at: Timestamp


class BlockedDomainList(msgspec.Struct):
    items: list[BlockedDomain]
