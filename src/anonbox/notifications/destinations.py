"""Where webhooks and pushes may go, and how a request is pinned to the address checked.

A destination is resolved and checked on every attempt, and the request goes to the
address that was checked, with the URL's host as ``Host`` (and as the TLS server name):
a name that resolves elsewhere a second time (DNS rebinding) reaches nothing. Loopback,
private, link-local and other special ranges are refused unless the caller allows them
(``ANONBOX_WEBHOOK_ALLOW_PRIVATE``, ``ANONBOX_PUSH_ALLOW_LOCAL``: tests, an intranet).
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit


class Undeliverable(Exception):
    """The destination may not be reached (refused range, or no such host)."""


# A push service's endpoint is a few hundred characters, a webhook's URL fewer. The bound
# also keeps every body the document allows within the 16 KiB body limit, however a client
# escapes it (tests/test_contract.py): written as JSON escapes, 1,024 characters take 12 KiB.
MAX_URL_CHARACTERS = 1024
# The bound until 2026-11-25: a destination stored under it is still delivered to.
MAX_STORED_URL_CHARACTERS = 2000
# The URLs a webhook or a push may be sent to, as the API document states them (a JSON
# Schema ``pattern``): a scheme, a host name or IPv4 address, a port, then printable ASCII
# only (anything else percent-encoded). ``well_formed`` holds a URL to one of them.
_HOST = r"[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.?"


def _url_pattern(*schemes: str) -> str:
    return rf"^({'|'.join(schemes)})://{_HOST}(:[0-9]{{1,5}})?([/?#][\x21-\x7e]*)?$"


WEBHOOK_URL = _url_pattern("http", "https")
PUSH_ENDPOINT = _url_pattern("https")
LOCAL_PUSH_ENDPOINT = _url_pattern("https", "http")  # ANONBOX_PUSH_ALLOW_LOCAL


def well_formed(url: str, pattern: str, *, longest: int = MAX_URL_CHARACTERS) -> bool:
    """Whether ``url`` is as long and shaped as ``pattern`` lets it be, read as a JSON Schema
    validator reads it (``fullmatch``: Python's ``$`` alone would also take a final newline).
    ``longest``: MAX_STORED_URL_CHARACTERS for one already stored, checked again to send."""
    return len(url) <= longest and re.fullmatch(pattern, url) is not None


def literal_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a host names outright, including the old IPv4 forms resolvers still
    read (``127.1``, ``0x7f000001``, ``2130706433``, ``0177.0.0.1``)."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


async def pinned_address(url: str, *, allow_private: bool) -> str:
    """The address to send to: the host resolved now, refused if not a public address."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise Undeliverable(f"cannot resolve {host}") from exc
    for _family, _type, _proto, _name, address in found:
        candidate = ipaddress.ip_address(address[0])
        if allow_private or candidate.is_global:
            return str(candidate)
    raise Undeliverable("the host resolves only to private or local addresses")


@dataclass(frozen=True, slots=True)
class Pinned:
    """A request target with the address in place of the name, and what keeps the name."""

    url: str
    host: str  # the ``Host`` header
    extensions: dict[str, str] = field(default_factory=dict)  # httpx: the TLS server name


async def pinned_target(url: str, *, allow_private: bool) -> Pinned:
    """``url`` with its host replaced by the address it resolves to now (checked)."""
    address = await pinned_address(url, allow_private=allow_private)
    parts = urlsplit(url)
    netloc = f"[{address}]" if ":" in address else address
    if parts.port:
        netloc += f":{parts.port}"
    return Pinned(
        url=urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, "")),
        host=parts.netloc.rsplit("@", 1)[-1],
        extensions={"sni_hostname": parts.hostname or ""} if parts.scheme == "https" else {},
    )
