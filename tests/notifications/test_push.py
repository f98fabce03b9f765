"""Web Push, received by a push service on loopback that checks each request's VAPID
token (RFC 8292) and decrypts its body (RFC 8291, aes128gcm) with the device keys the
test made: the notice says a message came (its first words only if the device opted
in), a 429 is retried and delivered once, a 410 removes the subscription, a muted
message sends nothing. Each test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import base64
import json
import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import http_ece  # type: ignore[import-untyped]
import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from anonbox.core.egress import MAX_STORED_URL_CHARACTERS, MAX_URL_CHARACTERS
from tests.actions import assert_error, post_message
from tests.conftest import Creator, make_creator_in
from tests.server import Server
from tests.support.db import execute
from tests.support.forms import csrf_of
from tests.support.http import loopback_client
from tests.support.receiver import receiving
from tests.support.servers import own_server
from tests.support.signin import signin_link_command

NO_PREVIEW = "Open your inbox to read it"


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Device:
    """A browser's push subscription: its endpoint and the keys only it holds."""

    endpoint: str
    key: ec.EllipticCurvePrivateKey
    auth: bytes

    def subscription(self, preview: bool = False) -> dict[str, Any]:
        point = self.key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {
            "endpoint": self.endpoint,
            "expirationTime": None,
            "keys": {"p256dh": b64url(point), "auth": b64url(self.auth)},
            "preview": preview,
        }


@dataclass
class PushService:
    """Accepts pushes for its devices: checks VAPID, decrypts, answers as told."""

    port: int = 0
    devices: dict[str, Device] = field(default_factory=dict)
    answers: dict[str, list[tuple[int, dict[str, str]]]] = field(default_factory=dict)
    accepted: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def device(self) -> Device:
        path = f"/push/{uuid.uuid4().hex}"
        made = Device(self.origin + path, ec.generate_private_key(ec.SECP256R1()), os.urandom(16))
        self.devices[path] = made
        return made

    def receive(self, path: str, headers: dict[str, str], body: bytes) -> dict[str, Any]:
        """One push, checked and decrypted (an AssertionError says what is wrong)."""
        self.attempts[path] = self.attempts.get(path, 0) + 1
        scheme, _, params = headers.get("authorization", "").partition(" ")
        parts = dict(part.strip().split("=", 1) for part in params.split(",") if "=" in part)
        assert scheme == "vapid", headers.get("authorization")
        signer = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(parts["k"]))
        claims = jwt.decode(
            parts["t"],
            signer,
            algorithms=["ES256"],
            audience=self.origin,
            options={"require": ["exp", "sub", "aud"]},
        )
        assert time.time() < claims["exp"] <= time.time() + 24 * 3600, claims
        assert claims["sub"], claims
        assert headers.get("content-encoding") == "aes128gcm", headers
        assert int(headers["ttl"]) > 0, headers
        device = self.devices[path]
        plain = http_ece.decrypt(
            body, private_key=device.key, auth_secret=device.auth, version="aes128gcm"
        )
        found = json.loads(plain)
        assert isinstance(found, dict)
        return found

    def answer(self, path: str) -> tuple[int, dict[str, str]]:
        queued = self.answers.get(path) or []
        return queued.pop(0) if queued else (201, {})


@pytest.fixture
def push_service() -> Iterator[PushService]:
    state = PushService()

    def on_post(path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str]]:
        try:
            notice = state.receive(path, headers, body)
        except Exception as exc:  # the test reads it, not a traceback on stderr
            state.problems.append(f"{type(exc).__name__}: {exc}")
            return 400, {}
        status, extra = state.answer(path)
        if 200 <= status < 300:
            state.accepted.setdefault(path, []).append(notice)
        return status, extra

    with receiving(on_post) as state.port:
        yield state


@pytest.fixture
def black_hole() -> Iterator[str]:
    """A push service that takes every connection and never answers (until the test ends)."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=512)
    held: list[socket.socket] = []
    stop = threading.Event()

    def hold() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    listener.close()


pushed = own_server(
    "pushed", {"ANONBOX_PUSH_ALLOW_LOCAL": "true", "ANONBOX_PUSH_RETRY_SECONDS": "0.2"}
)


@pytest.fixture
def api(pushed: Server) -> Iterator[httpx.Client]:
    with loopback_client(base_url=pushed.url, timeout=30) as client:
        yield client


def subscribe(api: httpx.Client, creator: Creator, device: Device, preview: bool = False) -> str:
    added = api.post(
        "/push/subscriptions", json=device.subscription(preview), headers=creator.headers
    )
    assert added.status_code == 201, added.text
    return str(added.json()["data"]["id"])


def subscribed(
    server: Server, api: httpx.Client, push_service: PushService, preview: bool = False
) -> tuple[Creator, Device, str]:
    """A new creator on ``server`` with one device of ``push_service`` subscribed (with
    previews when ``preview``): the creator, the device and its subscription's id."""
    creator = make_creator_in(server.database_url)
    device = push_service.device()
    return creator, device, subscribe(api, creator, device, preview)


def listed(api: httpx.Client, creator: Creator) -> list[str]:
    answer = api.get("/push/subscriptions", headers=creator.headers)
    assert answer.status_code == 200, answer.text
    return [item["id"] for item in answer.json()["data"]["items"]]


def wait_for(check: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "not in time"
        time.sleep(0.1)


def path_of(device: Device) -> str:
    return "/" + device.endpoint.split("/", 3)[3]


def test_the_vapid_key_is_made_once_and_kept(pushed: Server, api: httpx.Client) -> None:
    first = api.get("/push/key").json()["data"]["public_key"]
    assert api.get("/push/key").json()["data"]["public_key"] == first
    point = unb64url(first)
    assert len(point) == 65
    assert point[0] == 4


def test_a_push_is_signed_encrypted_retried_after_429_and_a_410_removes_the_device(
    pushed: Server, api: httpx.Client, push_service: PushService
) -> None:
    creator = make_creator_in(pushed.database_url)
    device = push_service.device()
    path = path_of(device)
    subscription_id = subscribe(api, creator, device)
    assert listed(api, creator) == [subscription_id]

    post_message(api, creator.link_id, "my secret question about pineapples")
    wait_for(lambda: len(push_service.accepted.get(path, [])) == 1)
    assert push_service.problems == []
    assert push_service.accepted[path][0] == {
        "title": "New anonymous message",
        "body": NO_PREVIEW,
        "url": f"/dashboard/links/{creator.link_id}",
    }

    push_service.answers[path] = [(429, {"Retry-After": "1"})]
    before = push_service.attempts[path]
    post_message(api, creator.link_id, "second")
    wait_for(lambda: len(push_service.accepted[path]) == 2)
    assert push_service.attempts[path] == before + 2  # the 429, then the accepted one
    time.sleep(1.5)
    assert len(push_service.accepted[path]) == 2  # delivered once
    assert push_service.problems == []

    push_service.answers[path] = [(410, {})]
    post_message(api, creator.link_id, "third")
    wait_for(lambda: listed(api, creator) == [])
    attempts = push_service.attempts[path]
    post_message(api, creator.link_id, "fourth")
    time.sleep(1.5)
    assert push_service.attempts[path] == attempts  # nothing more to a gone device
    assert len(push_service.accepted[path]) == 2


def test_a_creator_whose_push_service_never_answers_holds_up_no_one_else(
    pushed: Server, api: httpx.Client, push_service: PushService, black_hole: str
) -> None:
    """120 pushes to a push service that never answers (20 devices, 6 messages: more than
    a process attempts at once) and then one to another creator's device, which arrives
    while the 120 still wait for their 10-second timeout."""
    hostile, other = make_creator_in(pushed.database_url), make_creator_in(pushed.database_url)
    for _ in range(20):
        silent = push_service.device()
        silent.endpoint = f"{black_hole}/push/{uuid.uuid4().hex}"
        subscribe(api, hostile, silent)
    for number in range(6):
        post_message(api, hostile.link_id, f"into the void {number}")
    time.sleep(1.5)  # handed over, and as many claimed as will be
    device = push_service.device()
    subscribe(api, other, device)
    post_message(api, other.link_id, "for someone who answers")
    wait_for(lambda: len(push_service.accepted.get(path_of(device), [])) == 1, 5)
    assert push_service.problems == []


def test_first_words_only_for_a_device_that_opted_in(
    pushed: Server, api: httpx.Client, push_service: PushService
) -> None:
    creator = make_creator_in(pushed.database_url)
    plain, previewing = push_service.device(), push_service.device()
    subscribe(api, creator, plain)
    subscribe(api, creator, previewing, preview=True)
    words = " ".join(f"word{n}" for n in range(20))
    post_message(api, creator.link_id, words)
    wait_for(lambda: all(push_service.accepted.get(path_of(d)) for d in (plain, previewing)))
    assert push_service.accepted[path_of(plain)][0]["body"] == NO_PREVIEW
    assert "word0" not in json.dumps(push_service.accepted[path_of(plain)])
    shown = push_service.accepted[path_of(previewing)][0]
    assert shown["body"] == " ".join(f"word{n}" for n in range(12)) + "…"
    assert set(shown) == {"title", "body", "url"}  # nothing about the sender
    assert push_service.problems == []


def test_an_override_in_the_first_words_is_closed_before_the_ellipsis(
    pushed: Server, api: httpx.Client, push_service: PushService
) -> None:
    # A notification's body is plain text: the first words are isolated (FSI … PDI) after
    # the cut, which here drops the override's own PDF, so our "…" is not turned around.
    creator, previewing, _ = subscribed(pushed, api, push_service, preview=True)
    words = " ".join(f"word{n}" for n in range(20))
    post_message(api, creator.link_id, f"\u2069\u202e{words}\u202c")
    wait_for(lambda: push_service.accepted.get(path_of(previewing)))
    shown = push_service.accepted[path_of(previewing)][0]
    first = " ".join(f"word{n}" for n in range(12))
    assert shown["body"] == f"\u2068\u202e{first}\u202c\u2069…"
    assert push_service.problems == []


def test_a_device_stored_under_the_earlier_longer_bound_still_gets_its_pushes(
    pushed: Server, api: httpx.Client, push_service: PushService
) -> None:
    """Endpoints of up to 2,000 characters were taken until 2026-11-25, 1,024 since: one
    stored before is still pushed to, though it could not be added now."""
    creator, device, subscription_id = subscribed(pushed, api, push_service)
    padding = MAX_STORED_URL_CHARACTERS - len(device.endpoint) - 1
    old = Device(f"{device.endpoint}/{'a' * padding}", device.key, device.auth)
    assert MAX_URL_CHARACTERS < len(old.endpoint) == MAX_STORED_URL_CHARACTERS
    push_service.devices[path_of(old)] = old
    changed = execute(
        pushed.database_url,
        "UPDATE push_subscriptions SET endpoint = $1 WHERE id = $2",
        old.endpoint,
        subscription_id,
    )
    assert changed == 1
    refused = api.post("/push/subscriptions", json=old.subscription(), headers=creator.headers)
    assert_error(refused, 400, "validation_failed")

    post_message(api, creator.link_id, "still reaches the old device")
    wait_for(lambda: bool(push_service.accepted.get(path_of(old))))
    assert push_service.problems == []
    assert listed(api, creator) == [subscription_id]


def test_a_muted_message_sends_nothing(
    pushed: Server, api: httpx.Client, push_service: PushService
) -> None:
    creator, device, _ = subscribed(pushed, api, push_service, preview=True)
    muted = api.post("/muted-words", json={"word": "durian"}, headers=creator.headers)
    assert muted.status_code == 201, muted.text
    post_message(api, creator.link_id, "I love durian")
    post_message(api, creator.link_id, "an ordinary question")
    wait_for(lambda: bool(push_service.accepted.get(path_of(device))))
    time.sleep(1.0)
    assert [p["body"] for p in push_service.accepted[path_of(device)]] == ["an ordinary question"]


def test_a_device_is_stored_once_per_endpoint_and_removable(
    pushed: Server, api: httpx.Client, push_service: PushService
) -> None:
    creator, device, first = subscribed(pushed, api, push_service)
    assert subscribe(api, creator, device, preview=True) == first
    items = api.get("/push/subscriptions", headers=creator.headers).json()["data"]["items"]
    assert [(i["id"], i["preview"]) for i in items] == [(first, True)]

    other = make_creator_in(pushed.database_url)
    assert_error(api.delete(f"/push/subscriptions/{first}", headers=other.headers), 404)
    removed = api.delete(f"/push/subscriptions/{first}", headers=creator.headers)
    assert removed.status_code == 200, removed.text
    assert listed(api, creator) == []

    bad = device.subscription()
    bad["endpoint"] = "ftp://push.example/x"
    assert_error(api.post("/push/subscriptions", json=bad, headers=creator.headers), 400)
    bad = device.subscription()
    bad["keys"]["auth"] = b64url(b"short")
    assert_error(api.post("/push/subscriptions", json=bad, headers=creator.headers), 400)


def test_the_service_worker_is_served_at_the_root(pushed: Server, api: httpx.Client) -> None:
    worker = api.get("/sw.js")
    assert worker.status_code == 200
    assert worker.headers["content-type"].startswith("text/javascript")
    assert "showNotification" in worker.text
    assert "notificationclick" in worker.text


def test_the_dashboard_page_stores_and_removes_this_device(
    pushed: Server, push_service: PushService
) -> None:
    browser = loopback_client(base_url=pushed.url, timeout=30, headers={"Origin": pushed.url})
    with browser:
        signed_in = browser.get(signin_link_command(pushed, f"{uuid.uuid4().hex[:10]}@example.com"))
        assert signed_in.status_code == 303
        page = browser.get("/dashboard/push")
        assert page.status_code == 200
        key = browser.get("/push/key").json()["data"]["public_key"]
        assert f'data-vapid-key="{key}"' in page.text
        assert '<script src="/static/push.js"' in page.text
        token = csrf_of(page.text)
        device = push_service.device()
        posted = browser.post(
            "/dashboard/push/subscriptions",
            data={
                "csrf_token": token,
                "subscription": json.dumps(device.subscription()),
                "preview": "on",
            },
        )
        assert posted.status_code == 303, posted.text
        page = browser.get("/dashboard/push")
        found = re.search(r'data-subscription-id="([0-9a-zA-Z]{26})"', page.text)
        assert found is not None
        assert "first words" in page.text
        removed = browser.post(
            f"/dashboard/push/subscriptions/{found.group(1)}/delete",
            data={"csrf_token": token},
        )
        assert removed.status_code == 303, removed.text
        assert "data-subscription-id" not in browser.get("/dashboard/push").text
        refused = browser.post(
            "/dashboard/push/subscriptions",
            data={"subscription": json.dumps(device.subscription())},
        )
        assert refused.status_code == 403


def test_a_push_speaks_the_creators_language(
    pushed: Server, api: httpx.Client, push_service: PushService
) -> None:
    creator = make_creator_in(pushed.database_url)
    # As the account page saves it (tests/web/test_i18n.py drives that form).
    execute(pushed.database_url, "UPDATE users SET language = 'ja' WHERE id = $1", creator.user_id)
    device = push_service.device()
    subscribe(api, creator, device)

    post_message(api, creator.link_id, "こんにちは")
    wait_for(lambda: len(push_service.accepted.get(path_of(device), [])) == 1)

    assert push_service.accepted[path_of(device)][0] == {
        "title": "新しい匿名メッセージ",
        "body": "受信箱を開いて読んでください",
        "url": f"/dashboard/links/{creator.link_id}",
    }
