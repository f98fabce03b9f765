"""Who is calling: the address the envelope reports and abuse controls key on.

The socket peer, unless that peer is a configured trusted proxy: then the
``X-Forwarded-For`` chain is read from the right, skipping trusted proxies, and the
first address that is not one is the client. A header from anyone else is ignored,
so a caller cannot claim another address.

The trusted proxies are read once, from the settings (``ANONBOX_TRUSTED_PROXIES``), into
the process's one :class:`ClientAddresses`, which ``wiring`` builds: handlers take the
address as ``client_address: ClientAddress`` (``core.dependencies``); the post path, which
keeps to one dependency, asks the posting object's (``messages.service.Posting``); the
request log and ``/metrics`` find it in the app's state (``STATE_KEY``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from anonbox.core.settings import IPNetwork

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
STATE_KEY = "client_addresses"  # where the app's state keeps the process's ClientAddresses


@lru_cache(maxsize=4096)  # the same callers come back; each post reads its address twice
def _parse(value: str) -> IPAddress | None:
    try:
        address = ipaddress.ip_address(value.strip())
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def _trusted(address: IPAddress, proxies: Iterable[IPNetwork]) -> bool:
    return any(address in network for network in proxies)


def client_address(scope: Mapping[str, Any], proxies: tuple[IPNetwork, ...]) -> IPAddress | None:
    client = scope.get("client")
    peer = _parse(client[0]) if client else None
    if peer is None or not proxies or not _trusted(peer, proxies):
        return peer
    forwarded = [
        value.decode("latin-1")
        for name, value in scope.get("headers", ())
        if name == b"x-forwarded-for"
    ]
    hops = [hop for header in forwarded for hop in header.split(",")]
    for hop in reversed(hops):
        address = _parse(hop)
        if address is None:
            return peer  # a garbled chain: trust nothing past the proxy we know
        if not _trusted(address, proxies):
            return address
    return peer


@dataclass(frozen=True, slots=True)
class ClientAddresses:
    """Who is calling, with the process's trusted proxies: the one reader of them."""

    proxies: tuple[IPNetwork, ...] = ()

    def of(self, scope: Mapping[str, Any]) -> IPAddress | None:
        return client_address(scope, self.proxies)


NO_PROXIES = ClientAddresses()


def addresses_of(scope: Mapping[str, Any]) -> ClientAddresses:
    """The app's ``ClientAddresses`` (none trusted before start-up has set it)."""
    state = getattr(scope.get("app"), "state", None)
    found = getattr(state, STATE_KEY, None)
    return found if isinstance(found, ClientAddresses) else NO_PROXIES


def client_ip(scope: Mapping[str, Any]) -> str:
    """The client address as text, with the app's trusted proxies applied."""
    address = addresses_of(scope).of(scope)
    return str(address) if address is not None else "unknown"
