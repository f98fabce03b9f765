"""Signed webhooks, received by a real HTTP server on loopback and verified with the
``standardwebhooks`` package: in order, retried while the receiver is down (the same
webhook-id each time), given up and disabled after the give-up time, never to private
addresses unless allowed. Each test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import json
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from standardwebhooks import Webhook

from anonbox.core.clock import now_us
from anonbox.core.database import connect
from anonbox.core.ids import new_ulid
from anonbox.notifications.courier import LEASE_SECONDS
from anonbox.notifications.webhooks import repository as webhook_rows
from tests.actions import post_message, post_reply
from tests.conftest import Creator, make_creator_in
from tests.server import Server
from tests.support.http import loopback_client
from tests.support.metrics import scrape, value
from tests.support.receiver import receiving
from tests.support.servers import own_server

GIVE_UP_SECONDS = 3


@dataclass
class Receiver:
    """A webhook receiver: answers ``status`` (after ``delay`` seconds), records requests."""

    status: int = 204
    delay: float = 0.0
    received: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(body) for _, body in self.received]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state = Receiver()

    def on_post(path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str]]:
        time.sleep(state.delay)
        state.received.append((headers, body))
        return state.status, {}

    with receiving(on_post) as state.port:
        yield state


hooked = own_server(
    "hooked",
    {
        "ANONBOX_WEBHOOK_ALLOW_PRIVATE": "true",
        "ANONBOX_WEBHOOK_RETRY_SECONDS": "0.2",
        "ANONBOX_WEBHOOK_GIVE_UP_SECONDS": str(GIVE_UP_SECONDS),
    },
)


def add_webhook(api: httpx.Client, creator: Creator, url: str, **extra: Any) -> dict[str, Any]:
    added = api.post("/webhooks", json={"url": url, **extra}, headers=creator.headers)
    assert added.status_code == 201, added.text
    return dict(added.json()["data"])


def wait_for(check: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "not in time"
        time.sleep(0.1)


def verified(secret: str, receiver: Receiver) -> list[dict[str, Any]]:
    """Every received body, each checked against its signature."""
    hook = Webhook(secret)
    return [hook.verify(body, headers) for headers, body in receiver.received]


def test_events_arrive_signed_and_in_order_with_only_what_the_inbox_shows(
    hooked: Server, receiver: Receiver
) -> None:
    creator = make_creator_in(hooked.database_url)
    with loopback_client(base_url=hooked.url, timeout=30) as api:
        hook = add_webhook(api, creator, receiver.url)
        assert hook["secret"].startswith("whsec_")
        assert hook["events"] == [
            "message.created",
            "reply.created",
            "message.deleted",
            "message.reported",
        ]
        ids = [post_message(api, creator.link_id, f"question {n}") for n in range(5)]
        reply_id = post_reply(api, creator, ids[0], "an answer")
        # (A message deleted before its event is handed over goes out without its text:
        # a payload carries what the inbox shows at that moment.)
        wait_for(lambda: len(receiver.received) >= 6)
        api.delete(f"/message/{creator.link_id}/{ids[1]}", headers=creator.headers)
        wait_for(lambda: len(receiver.received) >= 7)
        # Anyone may report a message; the creator hears of it, never who or why.
        reported = api.post(
            f"/message/{creator.link_id}/{ids[2]}/report", json={"reason": "reporter's words"}
        )
        assert reported.status_code == 201, reported.text
        made_up = api.post(
            f"/message/{creator.link_id}/01j000000000000000000000aa/report", json={"reason": "x"}
        )
        assert made_up.status_code == 404, made_up.text
        wait_for(lambda: len(receiver.received) >= 8)
        time.sleep(0.5)  # and nothing more comes
        bodies = verified(hook["secret"], receiver)
        assert [b["type"] for b in bodies] == ["message.created"] * 5 + [
            "reply.created",
            "message.deleted",
            "message.reported",
        ]
        assert bodies[7]["data"] == {
            "link_id": creator.link_id,
            "message_id": ids[2],
            "created_at": bodies[7]["data"]["created_at"],
        }
        assert [b["data"]["message_content"] for b in bodies[:5]] == [
            f"question {n}" for n in range(5)
        ]
        assert bodies[5]["data"]["reply_id"] == reply_id
        assert bodies[5]["data"]["reply_content"] == "an answer"
        assert bodies[6]["data"] == {
            "link_id": creator.link_id,
            "message_id": ids[1],
            "created_at": bodies[6]["data"]["created_at"],
        }
        for headers, _ in receiver.received:
            assert "127.0.0.1" not in json.dumps(headers) or headers["host"].startswith("127.")
        # Nothing of a sender: no field names one. (Not "ip" anywhere in the text: a random
        # link id holds those two letters now and then.)
        assert all(not {"ip", "sender", "network"} & set(b["data"]) for b in bodies)
        assert len({h["webhook-id"] for h, _ in receiver.received}) == 8
        log = api.get(f"/webhooks/{hook['id']}/deliveries", headers=creator.headers)
        assert [(d["status"], d["attempts"]) for d in log.json()["data"]["items"]] == [
            ("delivered", 1)
        ] * 8
        listed = api.get("/webhooks", headers=creator.headers).json()["data"]["items"]
        assert [w["id"] for w in listed] == [hook["id"]]
        assert "secret" not in listed[0]  # shown once, when made


def test_a_receiver_down_for_a_while_gets_every_event_once_it_is_back(
    hooked: Server, receiver: Receiver
) -> None:
    creator = make_creator_in(hooked.database_url)
    receiver.status = 503
    with loopback_client(base_url=hooked.url, timeout=30) as api:
        hook = add_webhook(api, creator, receiver.url)
        ids = [post_message(api, creator.link_id, f"while down {n}") for n in range(3)]
        wait_for(lambda: len(receiver.received) >= 2)  # refused, retried
        receiver.status = 200
        wait_for(
            lambda: len({b["data"]["message_id"] for b in receiver.bodies() if b["data"]}) >= 3
        )
        time.sleep(0.5)
        bodies = verified(hook["secret"], receiver)
        delivered = [b["data"]["message_id"] for b in bodies]
        assert sorted(set(delivered)) == sorted(ids)
        assert delivered[-3:] == ids  # in order once back
        # A retried delivery carries the same webhook-id as its first attempt.
        by_message: dict[str, set[str]] = {}
        for headers, body in receiver.received:
            by_message.setdefault(json.loads(body)["data"]["message_id"], set()).add(
                headers["webhook-id"]
            )
        assert all(len(webhook_ids) == 1 for webhook_ids in by_message.values())
        log = api.get(f"/webhooks/{hook['id']}/deliveries", headers=creator.headers)
        items = log.json()["data"]["items"]
        assert {d["status"] for d in items} == {"delivered"}
        assert max(d["attempts"] for d in items) > 1
        samples = scrape(api)
        assert value(samples, "anonbox_webhooks_retries") >= 1
        assert value(samples, "anonbox_webhooks_delivered") >= 3


def test_an_endpoint_failing_past_the_give_up_time_is_disabled(
    hooked: Server, receiver: Receiver
) -> None:
    creator = make_creator_in(hooked.database_url)
    receiver.status = 500
    with loopback_client(base_url=hooked.url, timeout=30) as api:
        hook = add_webhook(api, creator, receiver.url)
        post_message(api, creator.link_id, "nobody hears this")

        def disabled() -> bool:
            listed = api.get("/webhooks", headers=creator.headers).json()["data"]["items"]
            return not listed[0]["enabled"]

        wait_for(disabled, GIVE_UP_SECONDS + 10)
        [listed] = api.get("/webhooks", headers=creator.headers).json()["data"]["items"]
        assert "failed" in listed["disabled_reason"]
        log = api.get(f"/webhooks/{hook['id']}/deliveries", headers=creator.headers)
        [delivery] = log.json()["data"]["items"]
        assert delivery["status"] == "failed"
        assert delivery["last_status_code"] == 500
        tried = len(receiver.received)
        post_message(api, creator.link_id, "a disabled endpoint gets nothing")
        time.sleep(1)
        assert len(receiver.received) == tried


def test_a_slow_receiver_holds_up_only_its_own_endpoint(hooked: Server, receiver: Receiver) -> None:
    slow_creator, other = make_creator_in(hooked.database_url), make_creator_in(hooked.database_url)
    receiver.delay = 0.0
    with loopback_client(base_url=hooked.url, timeout=30) as api:
        add_webhook(api, slow_creator, "http://10.255.255.1:9/hook")  # never answers
        add_webhook(api, other, receiver.url)
        post_message(api, slow_creator.link_id, "to the black hole")
        time.sleep(0.5)
        started = time.monotonic()
        post_message(api, other.link_id, "to a good receiver")
        wait_for(lambda: len(receiver.received) >= 1, 5)
        assert time.monotonic() - started < 3


def test_a_test_event_can_be_sent_on_request(hooked: Server, receiver: Receiver) -> None:
    creator = make_creator_in(hooked.database_url)
    with loopback_client(base_url=hooked.url, timeout=30) as api:
        hook = add_webhook(api, creator, receiver.url, events=["reply.created"])
        post_message(api, creator.link_id, "not subscribed to this")
        sent = api.post(f"/webhooks/{hook['id']}/test", headers=creator.headers)
        assert sent.status_code == 201, sent.text
        wait_for(lambda: len(receiver.received) >= 1)
        time.sleep(0.5)
        assert [b["type"] for b in verified(hook["secret"], receiver)] == ["webhook.test"]


@pytest.mark.parametrize(
    ("url", "status", "code"),
    [
        # Well formed, to a destination this server may not send to: forbidden.
        ("http://127.0.0.1:8080/hook", 403, "forbidden"),
        ("http://localhost/hook", 403, "forbidden"),
        ("http://10.0.0.7/hook", 403, "forbidden"),
        ("http://192.168.1.1/hook", 403, "forbidden"),
        ("http://169.254.169.254/latest/meta-data", 403, "forbidden"),
        ("http://127.1/hook", 403, "forbidden"),  # old IPv4 forms resolvers read as loopback
        ("http://0x7f000001/hook", 403, "forbidden"),
        ("http://2130706433:9999/hook", 403, "forbidden"),
        ("http://0177.0.0.1/hook", 403, "forbidden"),
        ("http://0/hook", 403, "forbidden"),
        # Written with a final dot, a name or address is the same one (issue 32, part 7).
        ("http://localhost./hook", 403, "forbidden"),
        ("http://127.0.0.1./hook", 403, "forbidden"),
        ("http://app.localhost./hook", 403, "forbidden"),
        ("http://100.64.0.1/hook", 403, "forbidden"),  # shared address space (CGNAT)
        # Where nothing is ever delivered, whatever the settings.
        ("http://224.0.0.1/", 403, "forbidden"),  # multicast
        ("http://239.255.255.250:1900/hook", 403, "forbidden"),
        ("http://255.255.255.255/hook", 403, "forbidden"),  # broadcast
        ("http://240.0.0.1/hook", 403, "forbidden"),  # reserved
        ("http://0.0.0.0/hook", 403, "forbidden"),  # unspecified
        ("https://example.org:99999/hook", 400, "validation_failed"),  # no such port
        ("https://example.org:65536/hook", 400, "validation_failed"),
        ("https://example.org:0/hook", 400, "validation_failed"),
        ("https://example.org:00443/hook", 400, "validation_failed"),
        (f"https://{'a' * 64}.example.org/hook", 400, "validation_failed"),  # label > 63
        (f"https://{'a.' * 127}org/hook", 400, "validation_failed"),  # name > 253
        # Not a URL the document allows.
        ("http://[::1]/hook", 400, "validation_failed"),
        ("ftp://example.org/hook", 400, "validation_failed"),
        ("not a url", 400, "validation_failed"),
        ("https://example.org/a\x00b", 400, "validation_failed"),  # PostgreSQL refuses a NUL
        ("https://example.org/a b", 400, "validation_failed"),
        ("https://example.org/hook\n", 400, "validation_failed"),
        ("https://exämple.org/hook", 400, "validation_failed"),  # punycode it
    ],
)
def test_private_and_odd_destinations_are_refused_by_default(
    api: httpx.Client, creator: Creator, url: str, status: int, code: str
) -> None:
    refused = api.post("/webhooks", json={"url": url}, headers=creator.headers)
    assert refused.status_code == status, refused.text
    assert refused.json()["error"]["code"] == code
    assert api.get("/webhooks", headers=creator.headers).json()["data"]["items"] == []


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("http://224.0.0.1/", 403),
        ("http://239.255.255.250:1900/hook", 403),
        ("http://255.255.255.255/hook", 403),
        ("http://0.0.0.0:8080/hook", 403),
        ("http://0/hook", 403),
        ("http://127.0.0.1:99999/hook", 400),
        ("http://127.0.0.1:0/hook", 400),
    ],
)
def test_what_can_never_be_delivered_is_refused_even_where_private_is_allowed(
    hooked: Server, url: str, status: int
) -> None:
    creator = make_creator_in(hooked.database_url)
    with loopback_client(base_url=hooked.url, timeout=30) as api:
        refused = api.post("/webhooks", json={"url": url}, headers=creator.headers)
        assert refused.status_code == status, refused.text
        assert refused.json()["status_code"] == status
        assert api.get("/webhooks", headers=creator.headers).json()["data"]["items"] == []


def test_a_name_with_a_final_dot_is_delivered_to_as_the_name(
    hooked: Server, receiver: Receiver
) -> None:
    creator = make_creator_in(hooked.database_url)
    with loopback_client(base_url=hooked.url, timeout=30) as api:
        hook = add_webhook(api, creator, f"http://localhost.:{receiver.port}/hook")
        sent = api.post(f"/webhooks/{hook['id']}/test", headers=creator.headers)
        assert sent.status_code == 201, sent.text
        wait_for(lambda: len(receiver.received) >= 1)
        assert [b["type"] for b in verified(hook["secret"], receiver)] == ["webhook.test"]
        assert receiver.received[0][0]["host"] == f"localhost:{receiver.port}"


def _store_endpoint(database_url: str, creator: Creator, url: str) -> str:
    """An endpoint as an older version stored it, before its URL was checked as now."""

    async def run() -> str:
        db = await connect(database_url)
        try:
            endpoint_id = new_ulid(now_us())
            await webhook_rows.insert_endpoint(
                db,
                endpoint_id=endpoint_id,
                user_id=creator.user_id,
                url=url,
                secret="whsec_" + base64.b64encode(secrets.token_bytes(24)).decode(),
                events="message.created",
                created_at=now_us(),
            )
        finally:
            await db.close()
        return endpoint_id

    return asyncio.run(run())


def test_a_destination_undeliverable_at_its_attempts_fails_them_and_the_rest_go_out(
    hooked: Server, receiver: Receiver
) -> None:
    """A port past 65535 (stored before it was refused) made each attempt raise inside the
    check: never attempted nor failed, a traceback a minute, and the endpoint stuck. Now
    that, an address nothing reaches and a name that resolves to nothing are each a failed
    attempt, retried and given up like a receiver that refuses; the creator's other
    endpoint gets every event meanwhile."""
    creator = make_creator_in(hooked.database_url)
    with loopback_client(base_url=hooked.url, timeout=30) as api:
        good = add_webhook(api, creator, receiver.url, events=["message.created"])
        bad = {
            _store_endpoint(hooked.database_url, creator, "http://127.0.0.1:99999/hook"): "port",
            _store_endpoint(hooked.database_url, creator, "http://224.0.0.1:9/hook"): "multicast",
            # RFC 6761: never resolves. Resolved at each attempt, not when it was added.
            add_webhook(api, creator, "http://anonbox-test.invalid/hook")["id"]: "resolve",
        }
        ids = [post_message(api, creator.link_id, f"to every endpoint {n}") for n in range(3)]
        wait_for(lambda: len(receiver.received) >= 3)
        assert [b["data"]["message_id"] for b in verified(good["secret"], receiver)] == ids

        def all_given_up() -> bool:
            listed = api.get("/webhooks", headers=creator.headers).json()["data"]["items"]
            return all(not w["enabled"] for w in listed if w["id"] in bad)

        wait_for(all_given_up, GIVE_UP_SECONDS + 15)
        for endpoint_id, why in bad.items():
            log = api.get(f"/webhooks/{endpoint_id}/deliveries", headers=creator.headers)
            first = log.json()["data"]["items"][-1]
            assert first["status"] == "failed", (why, first)
            assert first["attempts"] > 1, (why, first)  # retried after a wait, like any
            assert first["last_status_code"] is None
            assert why.lower() in first["last_error"].lower(), (why, first)
        listed = api.get("/webhooks", headers=creator.headers).json()["data"]["items"]
        assert [w["enabled"] for w in listed if w["id"] == good["id"]] == [True]
    assert "an attempt failed to finish" not in hooked.log()
    assert "Traceback" not in hooked.log()


@contextlib.contextmanager
def running(server: Server) -> Iterator[Server]:
    server.start(60)
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_an_endpoint_refused_at_its_attempts_gets_them_once_allowed_again(
    backend: str,
    database_url_factory: Callable[[str], str],
    tmp_path_factory: pytest.TempPathFactory,
    receiver: Receiver,
) -> None:
    """Added while private destinations were allowed, then refused at each attempt while
    they are not (a failed attempt, the queue not stuck on it): allowed again, the
    refused delivery and the next go out, in order."""
    url = database_url_factory(backend)
    log = tmp_path_factory.mktemp("webhook-allowed") / f"{backend}.log"
    retry = {"ANONBOX_WEBHOOK_RETRY_SECONDS": "0.2"}
    allowed = {**retry, "ANONBOX_WEBHOOK_ALLOW_PRIVATE": "true"}
    creator = make_creator_in(url)
    first_server = Server(url, log, env=allowed)
    with running(first_server), loopback_client(base_url=first_server.url, timeout=30) as api:
        hook = add_webhook(api, creator, f"http://localhost.:{receiver.port}/hook")
    deliveries = f"/webhooks/{hook['id']}/deliveries"
    refusing = Server(url, log, env=retry)
    with running(refusing), loopback_client(base_url=refusing.url, timeout=30) as api:
        first = post_message(api, creator.link_id, "while refused")

        def tried_twice() -> bool:
            items = api.get(deliveries, headers=creator.headers).json()["data"]["items"]
            return bool(items) and items[-1]["attempts"] >= 2

        wait_for(tried_twice)
        [refused] = api.get(deliveries, headers=creator.headers).json()["data"]["items"]
        assert refused["status"] == "pending"
        assert "private or local address" in refused["last_error"]
        assert "an attempt failed to finish" not in refusing.log()
    assert receiver.received == []
    again = Server(url, log, env=allowed)
    with running(again), loopback_client(base_url=again.url, timeout=30) as api:
        second = post_message(api, creator.link_id, "allowed again")
        # (Stopped within an attempt, the last server left it claimed: its lease runs out.)
        wait_for(lambda: len(receiver.received) >= 2, LEASE_SECONDS + 15)
    delivered = [b["data"]["message_id"] for b in verified(hook["secret"], receiver)]
    assert delivered == [first, second]


def test_webhooks_are_each_creators_own(hooked: Server, receiver: Receiver) -> None:
    owner, stranger = make_creator_in(hooked.database_url), make_creator_in(hooked.database_url)
    with loopback_client(base_url=hooked.url, timeout=30) as api:
        hook = add_webhook(api, owner, receiver.url)
        for method, path in [
            ("GET", f"/webhooks/{hook['id']}/deliveries"),
            ("POST", f"/webhooks/{hook['id']}/test"),
            ("DELETE", f"/webhooks/{hook['id']}"),
        ]:
            answer = api.request(method, path, headers=stranger.headers)
            assert answer.status_code == 404, answer.text
        assert api.get("/webhooks", headers=stranger.headers).json()["data"]["items"] == []
        assert api.get("/webhooks").status_code == 401


def _all_delivered(receiver: Receiver, ids: set[str]) -> bool:
    return {b["data"]["message_id"] for b in receiver.bodies() if b["data"]} >= ids


def test_nothing_is_lost_when_the_service_is_killed_mid_delivery(
    database_url_factory: Callable[[str], str],
    tmp_path_factory: pytest.TempPathFactory,
    receiver: Receiver,
) -> None:
    """SIGKILL while deliveries are pending and being retried; the restarted service
    delivers every committed message's event, each under its one webhook-id."""
    for backend in ("sqlite", "postgresql"):
        receiver.received.clear()
        receiver.status = 503
        url = database_url_factory(backend)
        log = tmp_path_factory.mktemp("webhook-kill") / f"{backend}.log"
        env = {"ANONBOX_WEBHOOK_ALLOW_PRIVATE": "true", "ANONBOX_WEBHOOK_RETRY_SECONDS": "0.2"}
        first = Server(url, log, env=env).start(60)
        try:
            creator = make_creator_in(url)
            with loopback_client(base_url=first.url, timeout=30) as api:
                hook = add_webhook(api, creator, receiver.url)
                ids = [
                    post_message(api, creator.link_id, f"before the crash {n}") for n in range(5)
                ]
            wait_for(lambda: len(receiver.received) >= 2)  # being retried
            first.kill()
        finally:
            first.stop()
        receiver.status = 200
        second = Server(url, log, env=env).start(60)
        try:
            # A kill that lands during an attempt leaves that delivery claimed: another
            # process takes it up once the claim's lease has run out, and the endpoint's
            # later deliveries wait behind it, in order.
            wait_for(functools.partial(_all_delivered, receiver, set(ids)), LEASE_SECONDS + 15)
        finally:
            second.stop()
        bodies = verified(hook["secret"], receiver)
        assert {b["data"]["message_id"] for b in bodies} == set(ids)
        webhook_ids: dict[str, set[str]] = {}
        for headers, body in receiver.received:
            webhook_ids.setdefault(json.loads(body)["data"]["message_id"], set()).add(
                headers["webhook-id"]
            )
        assert all(len(found) == 1 for found in webhook_ids.values()), webhook_ids


def test_two_instances_deliver_each_event_once(
    database_url_factory: Callable[[str], str],
    tmp_path_factory: pytest.TempPathFactory,
    receiver: Receiver,
) -> None:
    """On PostgreSQL several instances share the relay and the deliveries: every event
    arrives once, in order, whichever instance sends it."""
    url = database_url_factory("postgresql")
    logs = tmp_path_factory.mktemp("webhook-pair")
    env = {"ANONBOX_WEBHOOK_ALLOW_PRIVATE": "true"}
    servers = [Server(url, logs / f"{n}.log", env=env).start(60) for n in range(2)]
    try:
        creator = make_creator_in(url)
        with loopback_client(base_url=servers[0].url, timeout=30) as api:
            add_webhook(api, creator, receiver.url)
        ids = []
        for n in range(20):
            with loopback_client(base_url=servers[n % 2].url, timeout=30) as api:
                ids.append(post_message(api, creator.link_id, f"to instance {n % 2}"))
        wait_for(lambda: len(receiver.received) >= 20, 15)
        time.sleep(1.5)  # and no second copy follows
    finally:
        for server in servers:
            server.stop()
    delivered = [b["data"]["message_id"] for b in receiver.bodies()]
    assert delivered == ids


@pytest.mark.parametrize("token", ["\x00", "a\x00.b", "abc def", "x" * 201])
def test_a_malformed_mail_token_is_a_400(api: httpx.Client, token: str) -> None:
    for method, path in [
        ("GET", "/notifications/email/confirm"),
        ("POST", "/notifications/unsubscribe"),
    ]:
        answer = api.request(method, path, params={"token": token})
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"]["code"] == "validation_failed"
