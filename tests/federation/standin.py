"""A stand-in remote fediverse server for the tests: a small HTTP server on 127.0.0.2
serving one actor document with its public key (as Mastodon does), taking what anonbox
sends to its inbox (answering ``inbox_status``), and signing requests as draft-cavage-12
asks, written here with ``cryptography``, independently of anonbox's own signing."""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any

import httpx
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from tests.federation.conftest import AP
from tests.server import Server
from tests.support.receiver import receiving


def _key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _pem(key: rsa.RSAPrivateKey) -> str:
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


@dataclass
class Remote:
    """The stand-in remote server: its actors (``/actor``, ``/actor2``…) sharing one key
    (which a test may rotate), each with an inbox of its own, and a shared inbox
    (``/shared``) they name when ``shared`` is set."""

    port: int = 0
    key: rsa.RSAPrivateKey = field(default_factory=_key)
    received: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    inbox_status: int = 202  # what its inboxes answer
    shared: bool = False
    # Documents served as they are (body, Content-Type) in place of an actor, by path:
    # what a hostile server (or a user's upload on an honest one) serves.
    pages: dict[str, tuple[bytes, str]] = field(default_factory=dict)
    fetched: list[str] = field(default_factory=list)  # the paths asked for, in order

    @property
    def actor(self) -> str:
        return f"http://127.0.0.2:{self.port}/actor"

    @property
    def key_id(self) -> str:
        return f"{self.actor}#main-key"

    def document(self, path: str = "/actor") -> dict[str, Any]:
        actor = f"http://127.0.0.2:{self.port}{path}"
        found: dict[str, Any] = {
            "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"],
            "id": actor,
            "type": "Person",
            "preferredUsername": "stand-in",
            "inbox": f"{actor}/inbox".replace("/actor/inbox", "/inbox"),
            "publicKey": {
                "id": f"{actor}#main-key",
                "owner": actor,
                "publicKeyPem": _pem(self.key),
            },
        }
        if self.shared:
            found["endpoints"] = {"sharedInbox": f"http://127.0.0.2:{self.port}/shared"}
        return found


@contextmanager
def serving() -> Iterator[Remote]:
    state = Remote()

    def on_get(path: str) -> tuple[bytes, str]:
        state.fetched.append(path)
        return state.pages.get(path) or (
            json.dumps(state.document(path)).encode(),
            "application/activity+json",
        )

    def on_post(path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str]]:
        state.received.append(({**headers, "x-path": path}, body))
        return state.inbox_status, {}

    with receiving(on_post, on_get=on_get, host="127.0.0.2") as state.port:
        yield state


def signed(
    server: Server,
    path: str,
    activity: dict[str, Any] | bytes,
    *,
    key: rsa.RSAPrivateKey,
    key_id: str,
    date: datetime | None = None,
    digest_of: bytes | None = None,
) -> dict[str, str]:
    """Headers signing a POST as draft-cavage-12 asks (written here, not anonbox's), of an
    activity or of a body as it is sent."""
    body = activity if isinstance(activity, bytes) else json.dumps(activity).encode()
    host = server.url.removeprefix("http://")
    when = format_datetime(date or datetime.now(UTC), usegmt=True)
    digest = "SHA-256=" + base64.b64encode(hashlib.sha256(digest_of or body).digest()).decode()
    text = f"(request-target): post {path}\nhost: {host}\ndate: {when}\ndigest: {digest}"
    signature = base64.b64encode(key.sign(text.encode(), padding.PKCS1v15(), hashes.SHA256()))
    return {
        "Host": host,
        "Date": when,
        "Digest": digest,
        "Content-Type": "application/activity+json",
        "Signature": f'keyId="{key_id}",algorithm="rsa-sha256",'
        f'headers="(request-target) host date digest",signature="{signature.decode()}"',
    }


def follow_of(remote: Remote, actor_url: str, follower: str | None = None) -> dict[str, Any]:
    """A Follow of ``actor_url`` by the stand-in's ``follower`` (its first actor)."""
    actor = follower or remote.actor
    return {
        "@context": "https://www.w3.org/ns/activitystreams",
        "id": f"{actor}/follows/{uuid.uuid4()}",
        "type": "Follow",
        "actor": actor,
        "object": actor_url,
    }


def post(
    api: httpx.Client, path: str, activity: dict[str, Any], headers: dict[str, str]
) -> httpx.Response:
    return api.post(path, content=json.dumps(activity).encode(), headers=headers)


def followers(api: httpx.Client, actor_url: str) -> int:
    return int(api.get(f"{actor_url}/followers", headers=AP).json()["totalItems"])
