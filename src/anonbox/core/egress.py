"""Where webhooks and pushes may go, and how a request is pinned to the address checked.

One check (``destination``) says whether a URL may be sent to, when it is given and again
before every attempt: parsed as a URL (``urlsplit``), a port from 1 to 65535, a host name
of labels of 1 to 63 characters (253 in all), compared without its final dot
(``localhost.`` is ``localhost``, ``127.0.0.1.`` is ``127.0.0.1``). A name is ASCII
letters, digits, hyphens (not first or last in a label) and underscores, and an ``xn--``
label Punycode that decodes to printable text: anything else (a NUL, a space, a letter
outside ASCII, ``xn--zz``) is ``Malformed`` here, never an exception from the resolver or
the HTTP client later; a name outside ASCII is for the caller to convert (IDNA) first.
An address written out (in any of the IPv4 forms resolvers read) and every address a
name resolves to must be one this server may send to (``refusal``): never multicast,
broadcast, the unspecified address or a reserved range, which nothing can be delivered
to; and unless the caller allows private destinations (``ANONBOX_WEBHOOK_ALLOW_PRIVATE``,
``ANONBOX_PUSH_ALLOW_LOCAL``: tests, an intranet) nothing loopback, private, link-local,
shared or otherwise not global, nor ``localhost``, nor an IPv6 address that carries one
of those IPv4 addresses (IPv4-mapped and -compatible, 6to4, NAT64).

The request goes to the address that was checked, with the URL's host as ``Host`` (and as
the TLS server name): a name that resolves elsewhere a second time (DNS rebinding)
reaches nothing. Whatever goes wrong in checking or resolving is an ``Undeliverable``,
never another exception: a channel records it as a failed attempt.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit


class Undeliverable(Exception):
    """The destination may not be reached now (refused, or no such host)."""


class Malformed(Undeliverable):
    """Not a URL anything can be delivered to (a port out of range, a label too long)."""


class Refused(Undeliverable):
    """A well-formed URL to an address or name this server does not send to; ``why``:
    what it points to ("a private or local address")."""

    def __init__(self, message: str, why: str) -> None:
        super().__init__(message)
        self.why = why


# A push service's endpoint is a few hundred characters, a webhook's URL fewer. The bound
# also keeps every body the document allows within the 16 KiB body limit, however a client
# escapes it (tests/core/test_contract.py): written as JSON escapes, 1,024 characters take 12 KiB.
MAX_URL_CHARACTERS = 1024
# The bound until 2026-11-25: a destination stored under it is still delivered to.
MAX_STORED_URL_CHARACTERS = 2000
# The URLs a webhook or a push may be sent to, as the API document states them (a JSON
# Schema ``pattern``): a scheme, a host name or IPv4 address (labels of 1 to 63
# characters), a port from 1 to 65535, then printable ASCII only (anything else
# percent-encoded). ``well_formed`` holds a URL to one of them; ``destination`` checks the
# rest (the host's whole length, the addresses).
# A label neither starts nor ends with a hyphen (RFC 1123), as ``destination`` checks.
_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST = rf"{_LABEL}(\.{_LABEL})*\.?"
_PORT = r"(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})"


def _url_pattern(*schemes: str) -> str:
    return rf"^({'|'.join(schemes)})://{_HOST}(:{_PORT})?([/?#][\x21-\x7e]*)?$"


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
    except (OSError, ValueError):  # ValueError: a NUL or a lone surrogate in the host
        return None


IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Nothing is delivered to these whatever the settings: "this network" and the reserved
# range up to the broadcast address (multicast and the unspecified address are asked of
# the address itself).
_NEVER = (ipaddress.IPv4Network("0.0.0.0/8"), ipaddress.IPv4Network("240.0.0.0/4"))
# IPv6 prefixes whose last 32 bits are an IPv4 address that is reached: NAT64's well-known
# prefix, and the deprecated IPv4-compatible form.
_CARRIES_IPV4 = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("::/96"))
# Not global, though Python 3.11's ``is_global`` says so: local-use NAT64, site-local.
_NOT_GLOBAL = (ipaddress.IPv6Network("64:ff9b:1::/48"), ipaddress.IPv6Network("fec0::/10"))
_PRIVATE = "a private or local address"
# A label of a host name as resolvers and TLS take it (RFC 1123; underscores too, which
# DNS holds and some hosts carry), lower case as ``urlsplit`` gives it.
_NAME_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")
_NOWHERE = "a multicast, broadcast, unspecified or reserved address, which nothing reaches"


def _carried(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one reaches (mapped, 6to4, NAT64, compatible), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if int(address) > 1 and any(address in prefix for prefix in _CARRIES_IPV4):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def refusal(address: IPAddress, *, allow_private: bool) -> str | None:
    """Why nothing may be sent to ``address`` (None: it may)."""
    if isinstance(address, ipaddress.IPv6Address):
        carried = _carried(address)
        if carried is not None:
            return refusal(carried, allow_private=allow_private)
    if (
        address.is_multicast
        or address.is_unspecified
        or (isinstance(address, ipaddress.IPv4Address) and any(address in n for n in _NEVER))
    ):
        return _NOWHERE
    if allow_private:
        return None
    if not address.is_global or any(address in network for network in _NOT_GLOBAL):
        return _PRIVATE
    return None


@dataclass(frozen=True, slots=True)
class Destination:
    """A URL that passed ``destination``: where to connect, and what to call it."""

    scheme: str
    host: str  # lower case, without a final dot
    port: int | None  # as written; None: the scheme's
    path: str
    query: str

    @property
    def connect_port(self) -> int:
        return self.port or (443 if self.scheme == "https" else 80)

    @property
    def host_header(self) -> str:
        """The host as ``Host`` names it: an IPv6 address in brackets, the port if given."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port is None else f"{host}:{self.port}"


def destination(url: str, *, allow_private: bool) -> Destination:
    """The one check of where a webhook or a push may go, made when it is given and again
    before every attempt; raises ``Malformed`` or ``Refused``, nothing else. It looks at
    the URL only: ``pinned_address`` checks what a name resolves to."""
    try:
        parts = urlsplit(url)
        port = parts.port  # ValueError: not a number, or past 65535
    except ValueError as exc:
        raise Malformed("The URL's port must be a number from 1 to 65535") from exc
    if parts.scheme not in ("http", "https"):
        raise Malformed("The URL must start with http:// or https://")
    if port is not None and not 1 <= port <= 65535:
        raise Malformed("The URL's port must be a number from 1 to 65535")
    if parts.username is not None or parts.password is not None:
        raise Malformed("The URL may not hold a user name or password")
    host = (parts.hostname or "").removesuffix(".")
    labels = host.split(".")
    if not host or len(host) > 253 or not all(1 <= len(label) <= 63 for label in labels):
        raise Malformed("The URL's host name must be labels of 1 to 63 characters")
    literal = literal_address(host)
    if literal is not None:
        why = refusal(literal, allow_private=allow_private)
        if why is not None:
            raise Refused(f"The URL may not point to {why}", why)
        return Destination(parts.scheme, host, port, parts.path, parts.query)
    if not all(_is_name_label(label) for label in labels):
        raise Malformed(
            "The URL's host must be a name of letters, digits and hyphens, or an IP address"
        )
    if not allow_private and (host == "localhost" or host.endswith(".localhost")):
        raise Refused(f"The URL may not point to {_PRIVATE}", _PRIVATE)
    return Destination(parts.scheme, host, port, parts.path, parts.query)


def _is_name_label(label: str) -> bool:
    """Whether ``label`` may be part of a host name: letters, digits, hyphens and
    underscores; an ``xn--`` label Punycode for printable text with a letter outside ASCII."""
    if not label.isascii() or _NAME_LABEL.fullmatch(label) is None:
        return False
    if not label.startswith("xn--"):
        return True
    try:
        text = label[4:].encode("ascii").decode("punycode")
    except UnicodeError:
        return False
    return not text.isascii() and text.isprintable()


async def pinned_address(where: Destination, *, allow_private: bool) -> str:
    """The address to send to: the host resolved now, refused if no address it resolves
    to may be sent to. Any failure to resolve is ``Undeliverable``."""
    literal = literal_address(where.host)
    if literal is not None:  # checked by ``destination``; an old IPv4 form, written out
        return str(literal)
    try:
        found = await asyncio.get_running_loop().getaddrinfo(
            where.host, where.connect_port, type=socket.SOCK_STREAM
        )
    except (OSError, ValueError) as exc:  # gaierror; a name the IDNA codec refuses
        raise Undeliverable(f"Cannot resolve {where.host}") from exc
    reasons = set()
    for _family, _type, _proto, _name, sockaddr in found:
        try:
            candidate = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        except ValueError:
            continue
        why = refusal(candidate, allow_private=allow_private)
        if why is None:
            return str(candidate)
        reasons.add(why)
    why = " or ".join(sorted(reasons)) or "no address"
    raise Refused(f"{where.host} resolves only to {why}", why)


@dataclass(frozen=True, slots=True)
class Pinned:
    """A request target with the address in place of the name, and what keeps the name."""

    url: str
    host: str  # the ``Host`` header
    extensions: dict[str, str] = field(default_factory=dict)  # httpx: the TLS server name


async def pinned_target(url: str, *, allow_private: bool) -> Pinned:
    """``url`` checked (``destination``), with its host replaced by the address it
    resolves to now (checked too). Raises ``Undeliverable`` and nothing else."""
    where = destination(url, allow_private=allow_private)
    address = await pinned_address(where, allow_private=allow_private)
    netloc = f"[{address}]" if ":" in address else address
    if where.port is not None:
        netloc += f":{where.port}"
    return Pinned(
        url=urlunsplit((where.scheme, netloc, where.path or "/", where.query, "")),
        host=where.host_header,
        extensions={"sni_hostname": where.host} if where.scheme == "https" else {},
    )
