"""Reading a remote actor: its key (to check a signature) and its inboxes (to answer).

Each fetch goes where the courier's deliveries go, and no further
(``notifications.destinations``): the name resolved now and pinned, no private, loopback
or link-local address unless ``ANONBOX_FEDERATION_ALLOW_PRIVATE``, no redirects, at most
``MAX_DOCUMENT_BYTES``. The GET is signed with the link's own key (servers in "secure
mode" answer only signed fetches). No SQL here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urldefrag, urlsplit

import httpx
import msgspec

from anonbox.federation import signatures
from anonbox.notifications.destinations import Undeliverable, pinned_target

MAX_DOCUMENT_BYTES = 1 << 20
ACCEPT = 'application/activity+json, application/ld+json; profile="https://www.w3.org/ns/activitystreams"'


class Unreachable(Exception):
    """The remote document could not be had, or is not what it should be."""


@dataclass(frozen=True, slots=True)
class RemoteActor:
    id: str
    key_id: str
    public_key: str
    inbox: str
    shared_inbox: str | None


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


async def fetch_json(
    http: httpx.AsyncClient, url: str, *, allow_private: bool, signer: Signer | None
) -> dict[str, Any]:
    try:
        target = await pinned_target(url, allow_private=allow_private)
    except Undeliverable as exc:
        raise Unreachable(str(exc)) from exc
    parts = urlsplit(url)
    headers = {"Accept": ACCEPT, "User-Agent": "anonbox-federation", "Host": target.host}
    if signer is not None:
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        headers.update(
            signatures.sign(
                method="GET",
                target=path,
                host=target.host,
                body=None,
                key_id=signer.key_id,
                private_pem=signer.private_pem,
            )
        )
    try:
        async with http.stream(
            "GET", target.url, headers=headers, extensions=target.extensions
        ) as answer:
            if answer.status_code != 200:
                raise Unreachable(f"HTTP {answer.status_code}")
            body = b""
            async for chunk in answer.aiter_bytes():
                body += chunk
                if len(body) > MAX_DOCUMENT_BYTES:
                    raise Unreachable("The document is too large")
    except httpx.HTTPError as exc:
        raise Unreachable(type(exc).__name__) from exc
    try:
        document = msgspec.json.decode(body)
    except msgspec.DecodeError as exc:
        raise Unreachable("The document is not JSON") from exc
    if not isinstance(document, dict):
        raise Unreachable("The document is not a JSON object")
    return document


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
    """The actor that owns ``key_id``, with that key, read from where the key id points."""
    document = await fetch_json(
        http, urldefrag(key_id)[0], allow_private=allow_private, signer=signer
    )
    found = _key_of(document, key_id)
    if found is None:
        raise Unreachable("The key is not in the document its id names")
    owner, pem = found
    if document.get("id") != owner:  # a key document: its owner holds the inboxes
        document = await fetch_json(http, owner, allow_private=allow_private, signer=signer)
        if _key_of(document, key_id) is None:
            raise Unreachable("The key's owner does not name the key")
    if domain_of(owner) != domain_of(key_id) or document.get("id") != owner:
        raise Unreachable("The key's owner is not on the key's server")
    inbox = document.get("inbox")
    endpoints = document.get("endpoints")
    shared = endpoints.get("sharedInbox") if isinstance(endpoints, dict) else None
    if not isinstance(inbox, str):
        raise Unreachable("The actor has no inbox")
    return RemoteActor(
        id=owner,
        key_id=key_id,
        public_key=pem,
        inbox=inbox,
        shared_inbox=shared if isinstance(shared, str) else None,
    )


@dataclass(frozen=True, slots=True)
class Inboxes:
    id: str
    inbox: str
    shared_inbox: str | None


async def inboxes_of(
    http: httpx.AsyncClient, actor_id: str, *, allow_private: bool, signer: Signer | None
) -> Inboxes:
    """Where an actor (a new follower) is reached."""
    document = await fetch_json(http, actor_id, allow_private=allow_private, signer=signer)
    inbox = document.get("inbox")
    endpoints = document.get("endpoints")
    shared = endpoints.get("sharedInbox") if isinstance(endpoints, dict) else None
    if document.get("id") != actor_id or not isinstance(inbox, str):
        raise Unreachable("The actor document is not the actor's, or has no inbox")
    return Inboxes(actor_id, inbox, shared if isinstance(shared, str) else None)
