"""Reading a remote actor: its key (to check a signature) and its inboxes (to answer),
both from one read of its document (``keys`` keeps them, for the document's max-age).

Each fetch goes where the courier's deliveries go, and no further
(``core.egress``): the name resolved now and pinned, no private, loopback
or link-local address unless ``ANONBOX_FEDERATION_ALLOW_PRIVATE``, no redirects, at most
``MAX_DOCUMENT_BYTES``, bounded in depth before it is parsed (``peerjson``). The GET is
signed with the link's own key (servers in "secure mode" answer only signed fetches).

**A document speaks only for itself** (Mastodon's CVE-2024-23832): what is taken from a
document is believed only when it was served, as ActivityPub (``application/activity+json``,
or ``application/ld+json`` with the ActivityStreams profile), from the address its ``id``
names. A key is an actor's only when that actor's own document, so fetched, lists it with
the actor as its owner; a key document served apart (``…/main-key``, as GoToSocial serves
it) is only a pointer to its owner, whose document is then read from the owner's id. No
SQL here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urldefrag, urlsplit

import httpx

from anonbox.core.egress import Pinned, Undeliverable, destination, pinned_target
from anonbox.federation import peerjson, signatures

MAX_DOCUMENT_BYTES = 1 << 20
ACTIVITY_STREAMS = "https://www.w3.org/ns/activitystreams"
ACCEPT = f'application/activity+json, application/ld+json; profile="{ACTIVITY_STREAMS}"'
# The longest address kept of a remote actor (its id, inboxes, key id): the columns' size.
MAX_URL_CHARACTERS = 2048
# How long an actor's key and inboxes, once read, are used without reading them again: the
# response's Cache-Control max-age, within these bounds (docs/decisions.md, issue 42).
CACHE_SECONDS = 24 * 3600
MIN_CACHE_SECONDS = 3600
_MAX_AGE = re.compile(r"(?:^|[,\s])max-age\s*=\s*\"?(\d{1,10})", re.IGNORECASE)


class Unreachable(Exception):
    """The remote document could not be had, or is not what it should be."""


@dataclass(frozen=True, slots=True)
class RemoteActor:
    id: str
    key_id: str
    public_key: str
    inbox: str
    shared_inbox: str | None
    cache_seconds: int = CACHE_SECONDS  # how long this reading may be used


def cache_seconds(cache_control: str | None) -> int:
    """How long a document may be kept, from its ``Cache-Control``: its max-age between an
    hour and a day; a day without one; an hour for ``no-store`` or ``no-cache`` (a key is
    kept all the same, to check the request it came for, and read again when it fails)."""
    if not cache_control:
        return CACHE_SECONDS
    lowered = cache_control.lower()
    if "no-store" in lowered or "no-cache" in lowered:
        return MIN_CACHE_SECONDS
    found = _MAX_AGE.search(cache_control)
    if found is None:
        return CACHE_SECONDS
    return max(MIN_CACHE_SECONDS, min(CACHE_SECONDS, int(found.group(1))))


@dataclass(frozen=True, slots=True)
class Signer:
    key_id: str
    private_pem: str


def domain_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower().removesuffix(".")


def domains_to_check(url: str) -> list[str]:
    """The host and every parent domain: a block of ``example.com`` covers its subdomains."""
    labels = domain_of(url).split(".")
    return [".".join(labels[i:]) for i in range(len(labels)) if labels[i:] != [""]]


def activitypub_media(content_type: str | None) -> bool:
    """Whether a response's ``Content-Type`` is ActivityPub's: ``application/activity+json``,
    or ``application/ld+json`` whose profile names ActivityStreams (as Mastodon reads it).
    An uploaded file (``application/octet-stream``), a page or plain JSON is not."""
    if not content_type:
        return False
    media, *params = (part.strip() for part in content_type.split(";"))
    if media.lower() == "application/activity+json":
        return True
    if media.lower() != "application/ld+json":
        return False
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "profile" and ACTIVITY_STREAMS in value.strip('"').split():
            return True
    return False


def checked_url(url: object) -> str:
    """``url`` if it is an http(s) address anonbox could fetch or send to (its shape only:
    where it points is checked when it is fetched); ``Unreachable`` otherwise."""
    if not isinstance(url, str) or len(url) > MAX_URL_CHARACTERS:
        raise Unreachable("Not an address")
    try:
        destination(url, allow_private=True)
    except Undeliverable as exc:
        raise Unreachable(str(exc)) from exc
    return url


async def fetch_json(
    http: httpx.AsyncClient, url: str, *, allow_private: bool, signer: Signer | None
) -> dict[str, Any]:
    """The JSON object served as ActivityPub at ``url``, not following redirects (so the
    document is the one at ``url``; ``fetch_object`` checks that it says so too)."""
    return (await _fetch(http, url, allow_private=allow_private, signer=signer))[0]


def _headers(url: str, host: str, signer: Signer | None, standard: str) -> dict[str, str]:
    headers = {"Accept": ACCEPT, "User-Agent": "anonbox-federation", "Host": host}
    if signer is None:
        return headers
    if standard == signatures.RFC9421:
        signed = signatures.sign_rfc9421(
            method="GET", url=url, body=None, key_id=signer.key_id, private_pem=signer.private_pem
        )
        return {**headers, **signed}
    parts = urlsplit(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    signed = signatures.sign(
        method="GET",
        target=path,
        host=host,
        body=None,
        key_id=signer.key_id,
        private_pem=signer.private_pem,
    )
    return {**headers, **signed}


async def _get(
    http: httpx.AsyncClient, target: Pinned, headers: dict[str, str]
) -> tuple[int, bytes, int]:
    """One GET: its status, and with a 200 the document's bytes and ``cache_seconds``."""
    try:
        async with http.stream(
            "GET",
            target.url,
            headers=headers,
            extensions=target.extensions,
            follow_redirects=False,  # a redirect is another document: not the one asked for
        ) as answer:
            if answer.status_code != 200:
                return answer.status_code, b"", 0
            if not activitypub_media(answer.headers.get("content-type")):
                raise Unreachable("The document is not served as ActivityPub")
            keep = cache_seconds(answer.headers.get("cache-control"))
            body = b""
            async for chunk in answer.aiter_bytes():
                body += chunk
                if len(body) > MAX_DOCUMENT_BYTES:
                    raise Unreachable("The document is too large")
    except (httpx.HTTPError, httpx.InvalidURL, ValueError) as exc:
        raise Unreachable(type(exc).__name__) from exc
    return 200, body, keep


async def _fetch(
    http: httpx.AsyncClient, url: str, *, allow_private: bool, signer: Signer | None
) -> tuple[dict[str, Any], int]:
    """``fetch_json``'s document, and for how long it may be kept (``cache_seconds``).
    A signed GET is signed with draft-cavage, and once more with RFC 9421 if that is
    refused (400, 401 or 403), as deliveries are (``delivery``)."""
    try:
        target = await pinned_target(checked_url(url), allow_private=allow_private)
    except Undeliverable as exc:
        raise Unreachable(str(exc)) from exc
    knocks = (signatures.CAVAGE, signatures.RFC9421) if signer is not None else (signatures.CAVAGE,)
    for standard in knocks:
        status, body, keep = await _get(http, target, _headers(url, target.host, signer, standard))
        if status not in signatures.REFUSED_SIGNATURE:
            break
    if status != 200:
        raise Unreachable(f"HTTP {status}")
    try:
        return peerjson.decode_object(body), keep
    except peerjson.NotJSON as exc:
        raise Unreachable(f"The document: {exc}") from exc


async def fetch_object(
    http: httpx.AsyncClient, url: str, *, allow_private: bool, signer: Signer | None
) -> tuple[dict[str, Any], int]:
    """The document at ``url`` that says it is ``url`` (the only kind whose contents are
    believed: a document at one address claiming another's id is refused, as Mastodon's
    ``fetch_resource`` refuses it), and for how long it may be kept."""
    document, keep = await _fetch(http, url, allow_private=allow_private, signer=signer)
    if document.get("id") != url:
        raise Unreachable("The document is not the one its address names")
    return document, keep


def _key_of(document: dict[str, Any], key_id: str) -> tuple[str, str] | None:
    """(owner, PEM) of the key ``key_id`` in an actor or key document."""
    keys = document.get("publicKey", document if "publicKeyPem" in document else None)
    for key in keys if isinstance(keys, list) else [keys]:
        if isinstance(key, dict) and key.get("id") == key_id:
            pem, owner = key.get("publicKeyPem"), key.get("owner", document.get("id"))
            if isinstance(pem, str) and isinstance(owner, str):
                return owner, pem
    return None


async def actor_of_key(
    http: httpx.AsyncClient, key_id: str, *, allow_private: bool, signer: Signer | None
) -> RemoteActor:
    """The actor that owns ``key_id``, with that key: the key's document is read from where
    the key id points; unless it is the owner's own document (served at the owner's id),
    the owner's document is read from the owner's id and must list the key as its own."""
    where = urldefrag(checked_url(key_id))[0]
    document, keep = await _fetch(http, where, allow_private=allow_private, signer=signer)
    found = _key_of(document, key_id)
    if found is None:
        raise Unreachable("The key is not in the document its id names")
    owner = found[0]
    if document.get("id") != where or owner != where:
        # A key document, or a document claiming to be someone else's: only the owner's
        # own document can say that the key is the owner's.
        document, keep = await fetch_object(
            http, checked_url(owner), allow_private=allow_private, signer=signer
        )
        found = _key_of(document, key_id)
        if found is None or found[0] != owner:
            raise Unreachable("The key's owner does not list the key as its own")
    pem = found[1]
    if domain_of(owner) != domain_of(key_id):
        raise Unreachable("The key's owner is not on the key's server")
    inboxes = _inboxes(document, owner)
    return RemoteActor(
        id=owner,
        key_id=key_id,
        public_key=pem,
        inbox=inboxes.inbox,
        shared_inbox=inboxes.shared_inbox,
        cache_seconds=keep,
    )


@dataclass(frozen=True, slots=True)
class Inboxes:
    id: str
    inbox: str
    shared_inbox: str | None


def _inboxes(document: dict[str, Any], actor_id: str) -> Inboxes:
    endpoints = document.get("endpoints")
    shared = endpoints.get("sharedInbox") if isinstance(endpoints, dict) else None
    try:
        inbox = checked_url(document.get("inbox"))
    except Unreachable as exc:
        raise Unreachable("The actor has no inbox") from exc
    try:
        shared = checked_url(shared) if shared is not None else None
    except Unreachable:
        shared = None  # its own inbox will do
    return Inboxes(actor_id, inbox, shared)
