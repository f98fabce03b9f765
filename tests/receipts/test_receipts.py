"""Answer receipts through the real server, on SQLite and on PostgreSQL: a sender who asks
gets a private link showing whether the creator answered, the answers, and one follow-up
into the same thread; a dropped message gets one that behaves like any other; the creator
learns nothing of who holds one; the token is stored only as its hash."""

from __future__ import annotations

import asyncio
import hashlib
import html
import itertools
import re
import secrets
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import httpx
import pytest

from anonbox.core.clock import now_us
from anonbox.core.database import connect
from anonbox.receipts.repository import purge as purge_receipts
from tests.actions import assert_error, inbox_items, post_reply, reply_items
from tests.conftest import Creator
from tests.server import Server
from tests.support.db import execute, query
from tests.support.http import loopback_client
from tests.support.pages import article, row
from tests.support.racing import race, statuses
from tests.support.servers import own_server
from tests.support.signin import signed_in
from tests.support.timing import AnswerTimes

SEED_KEYS = {"id", "message_content", "created_at"}
_senders = itertools.count(1)
RACERS = 15  # requests fired at once at a once-only action


# 127.0.0.1 is a trusted proxy: each test names its senders with X-Forwarded-For.
site = own_server("site", {"ANONBOX_TRUSTED_PROXIES": "127.0.0.1/32"}, clean_log=True)


@pytest.fixture
def server(site: Server) -> Server:
    """The module's server, as the root conftest's ``api``, ``make_creator`` and ``creator``
    take it."""
    return site


def new_sender() -> dict[str, str]:
    n = next(_senders)
    return {"X-Forwarded-For": f"10.44.{(n >> 8) & 255}.{n & 255}"}


def unique(label: str) -> str:
    return f"{label} {uuid.uuid4().hex[:10]}"


def send(
    api: httpx.Client, link_id: str, text: str, sender: dict[str, str] | None = None
) -> dict[str, Any]:
    """Post with a receipt; returns the 201's data."""
    sent = api.post(
        f"/message/{link_id}",
        params={"receipt": "true"},
        json={"message_content": text},
        headers=sender or new_sender(),
    )
    assert sent.status_code == 201, sent.text
    data: dict[str, Any] = sent.json()["data"]
    return data


def receipt(api: httpx.Client, token: str) -> dict[str, Any]:
    shown = api.get(f"/receipts/{token}")
    assert shown.status_code == 200, shown.text
    data: dict[str, Any] = shown.json()["data"]
    return data


def unanswered(sent: dict[str, Any], text: str) -> dict[str, Any]:
    """How a receipt shows ``text``, sent as ``sent``, before any reply."""
    return {
        "message_content": text,
        "created_at": sent["created_at"],
        "answered": False,
        "replies": [],
    }


def follow_up(
    api: httpx.Client, token: str, text: str, sender: dict[str, str] | None = None
) -> httpx.Response:
    """From 127.0.0.1 itself unless ``sender`` names another address."""
    return api.post(
        f"/receipts/{token}/follow-up", json={"message_content": text}, headers=sender or {}
    )


def purge(database_url: str) -> int:
    async def run() -> int:
        db = await connect(database_url)
        try:
            return await purge_receipts(db, expired_before=now_us())  # what the chore runs
        finally:
            await db.close()

    return asyncio.run(run())


# --- what the sender sees ------------------------------------------------------------------


def test_a_receipt_is_given_only_when_asked_for(api: httpx.Client, creator: Creator) -> None:
    plain = api.post(
        f"/message/{creator.link_id}", json={"message_content": "no receipt"}, headers=new_sender()
    )
    assert plain.status_code == 201, plain.text
    assert set(plain.json()["data"]) == SEED_KEYS  # the seed interface's shape, exactly

    data = send(api, creator.link_id, "with a receipt")
    assert set(data) == SEED_KEYS | {"receipt"}
    token = data["receipt"]["token"]
    assert len(token) == 43  # 32 random bytes, URL-safe base64
    assert data["receipt"]["url"] == f"{api.base_url}".rstrip("/") + f"/r/{token}"
    assert data["receipt"]["expires_at"].endswith("Z")


def test_the_receipt_shows_not_answered_then_the_creators_reply(
    api: httpx.Client, creator: Creator
) -> None:
    text = unique("Will you answer?")
    data = send(api, creator.link_id, text)
    token = data["receipt"]["token"]

    shown = receipt(api, token)
    assert shown["message"] == unanswered(data, text)
    assert shown["follow_up"] is None
    assert shown["can_follow_up"] is True

    post_reply(api, creator, data["id"], "First answer")
    post_reply(api, creator, data["id"], "Second answer")
    shown = receipt(api, token)
    assert shown["message"]["answered"] is True
    assert [r["message_content"] for r in shown["message"]["replies"]] == [
        "First answer",
        "Second answer",
    ]
    # Only the public answer: no like, no id, nothing else of the creator.
    assert set(shown["message"]["replies"][0]) == {"message_content", "created_at"}
    assert set(shown) == {"message", "follow_up", "can_follow_up", "expires_at"}


def test_one_follow_up_lands_in_the_creators_thread_and_a_second_is_refused(
    api: httpx.Client, creator: Creator
) -> None:
    original = send(api, creator.link_id, unique("original"))
    token = original["receipt"]["token"]
    text = unique("and one more thing")

    sent = follow_up(api, token, text)
    assert sent.status_code == 201, sent.text
    data = sent.json()["data"]
    assert set(data) == SEED_KEYS
    assert data["message_content"] == text

    inbox = {item["id"]: item for item in inbox_items(api, creator)}
    assert inbox[data["id"]]["message_content"] == text
    assert inbox[data["id"]]["follow_up_of"] == original["id"]
    assert inbox[original["id"]]["follow_up_of"] is None

    shown = receipt(api, token)
    assert shown["follow_up"] == unanswered(data, text)
    assert shown["can_follow_up"] is False

    again = follow_up(api, token, unique("a second one"))
    assert_error(again, 409)
    assert again.json()["error"]["code"] == "follow_up_sent"
    assert len(inbox_items(api, creator)) == len(inbox)

    # The creator answers the follow-up: the receipt shows it under the follow-up.
    post_reply(api, creator, data["id"], "Answer to the follow-up")
    shown = receipt(api, token)
    assert shown["message"]["answered"] is False
    assert [r["message_content"] for r in shown["follow_up"]["replies"]] == [
        "Answer to the follow-up"
    ]
    # Anyone else sees the answered follow-up, but not which message it follows.
    [public] = [m for m in inbox_items(api, creator, headers={}) if m["id"] == data["id"]]
    assert public["follow_up_of"] is None


@pytest.mark.parametrize("round_", range(3))
def test_many_follow_ups_sent_at_once_through_one_receipt_land_once(
    api: httpx.Client, creator: Creator, round_: int
) -> None:
    """The one follow-up is claimed in one statement (``follow_up_id IS NULL`` in its
    UPDATE): fired at once, from as many senders, one lands and every other is a 409."""
    original = send(api, creator.link_id, unique("original"))
    token = original["receipt"]["token"]
    texts = [unique(f"one more thing {i}") for i in range(RACERS)]
    senders = [new_sender() for _ in range(RACERS)]

    answers = race(RACERS, lambda i: follow_up(api, token, texts[i], senders[i]))

    assert statuses(answers) == {201: 1, 409: RACERS - 1}, [a.text for a in answers]
    [landed] = [a.json()["data"] for a in answers if a.status_code == 201]
    assert {a.json()["error"]["code"] for a in answers if a.status_code == 409} == {
        "follow_up_sent"
    }
    follow_ups = [m for m in inbox_items(api, creator) if m["follow_up_of"] == original["id"]]
    assert [(m["id"], m["message_content"]) for m in follow_ups] == [
        (landed["id"], landed["message_content"])
    ]
    shown = receipt(api, token)
    assert shown["follow_up"]["message_content"] == landed["message_content"]
    assert shown["can_follow_up"] is False


def test_a_follow_up_is_refused_where_the_creator_turned_them_off(
    api: httpx.Client, creator: Creator
) -> None:
    link = api.get(f"/links/{creator.link_id}", headers=creator.headers)
    assert link.json()["data"]["follow_ups"] is True  # on by default
    token = send(api, creator.link_id, unique("original"))["receipt"]["token"]
    before = inbox_items(api, creator)

    off = api.patch(
        f"/links/{creator.link_id}", json={"follow_ups": False}, headers=creator.headers
    )
    assert off.status_code == 200, off.text
    assert off.json()["data"]["follow_ups"] is False
    assert receipt(api, token)["can_follow_up"] is False
    refused = follow_up(api, token, unique("follow-up"))
    assert_error(refused, 409)
    assert refused.json()["error"]["code"] == "follow_ups_off"
    assert inbox_items(api, creator) == before

    on = api.patch(f"/links/{creator.link_id}", json={"follow_ups": True}, headers=creator.headers)
    assert on.json()["data"]["follow_ups"] is True
    assert receipt(api, token)["can_follow_up"] is True
    assert follow_up(api, token, unique("follow-up")).status_code == 201


def test_a_follow_up_obeys_the_rules_of_a_post(api: httpx.Client, creator: Creator) -> None:
    token = send(api, creator.link_id, unique("original"))["receipt"]["token"]
    before = inbox_items(api, creator)

    assert_error(follow_up(api, token, "   "), 400)
    assert_error(follow_up(api, token, "x" * 501), 400)
    wrong_type = api.post(f"/receipts/{token}/follow-up", json={"message_content": 5})
    assert_error(wrong_type, 400)

    paused = api.patch(f"/links/{creator.link_id}", json={"paused": True}, headers=creator.headers)
    assert paused.status_code == 200
    assert receipt(api, token)["can_follow_up"] is False
    refused = follow_up(api, token, unique("while paused"))
    assert_error(refused, 409)
    assert refused.json()["error"]["code"] == "link_paused"
    api.patch(f"/links/{creator.link_id}", json={"paused": False}, headers=creator.headers)

    assert inbox_items(api, creator) == before  # none of that changed anything
    assert receipt(api, token)["can_follow_up"] is True
    assert follow_up(api, token, unique("now")).status_code == 201


# --- drops ---------------------------------------------------------------------------------


def block_sender_of(api: httpx.Client, creator: Creator, message_id: str) -> None:
    blocked = api.post(f"/message/{creator.link_id}/{message_id}/block", headers=creator.headers)
    assert blocked.status_code == 201, blocked.text


def shape(value: Any) -> Any:
    """The structure of an answer with every value replaced by its type."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value]
    return type(value).__name__


def test_a_blocked_senders_post_gets_a_receipt_like_any_other_and_its_follow_up_is_dropped(
    api: httpx.Client, creator: Creator
) -> None:
    blocked_sender = new_sender()
    first = send(api, creator.link_id, unique("before the block"), blocked_sender)
    block_sender_of(api, creator, first["id"])
    before = inbox_items(api, creator)

    dropped = send(api, creator.link_id, unique("after the block"), blocked_sender)
    stored = send(api, creator.link_id, unique("someone else"))
    assert shape(dropped) == shape(stored)
    assert [m["id"] for m in inbox_items(api, creator)] == [stored["id"]] + [
        m["id"] for m in before
    ]

    dropped_view = receipt(api, dropped["receipt"]["token"])
    stored_view = receipt(api, stored["receipt"]["token"])
    assert shape(dropped_view) == shape(stored_view)
    for view in (dropped_view, stored_view):
        assert view["message"]["answered"] is False
        assert view["can_follow_up"] is True

    # From another address the gate would let it through: the receipt still drops it.
    text = unique("follow-up of a dropped message")
    sent = follow_up(api, dropped["receipt"]["token"], text, new_sender())
    assert sent.status_code == 201, sent.text
    assert set(sent.json()["data"]) == SEED_KEYS
    assert text not in {m["message_content"] for m in inbox_items(api, creator)}
    after = receipt(api, dropped["receipt"]["token"])
    assert after["follow_up"]["message_content"] == text
    assert after["follow_up"]["answered"] is False
    again = follow_up(api, dropped["receipt"]["token"], unique("again"))
    assert_error(again, 409)
    assert again.json()["error"]["code"] == "follow_up_sent"


def test_a_follow_up_is_dropped_when_the_original_was_muted_or_its_sender_blocked(
    api: httpx.Client, creator: Creator
) -> None:
    word = f"muted{uuid.uuid4().hex[:8]}"
    muted = api.post("/muted-words", json={"word": word}, headers=creator.headers)
    assert muted.status_code == 201, muted.text
    muted_post = send(api, creator.link_id, f"this has {word} in it")
    stored = send(api, creator.link_id, unique("stored, then its sender blocked"))
    block_sender_of(api, creator, stored["id"])

    for token in (muted_post["receipt"]["token"], stored["receipt"]["token"]):
        text = unique("a follow-up with no muted word, from a new address")
        assert follow_up(api, token, text, new_sender()).status_code == 201
        assert text not in {m["message_content"] for m in inbox_items(api, creator)}
        assert receipt(api, token)["follow_up"]["message_content"] == text


FOLLOW_UPS_EACH = 150


def test_a_dropped_follow_up_answers_when_a_stored_one_would(
    api: httpx.Client, creator: Creator
) -> None:
    """A follow-up to a blocked sender's message is dropped: it must take what a stored
    follow-up takes (``safety.pace``), by the sender's clock and by the answer's own
    ``execution_time_ms``. Each from an address of its own, interleaved."""
    blocked = new_sender()
    block_sender_of(api, creator, send(api, creator.link_id, unique("before"), blocked)["id"])
    originals = {
        "stored": [send(api, creator.link_id, unique("kept")) for _ in range(FOLLOW_UPS_EACH)],
        "held back": [
            send(api, creator.link_id, unique("dropped"), blocked) for _ in range(FOLLOW_UPS_EACH)
        ],
    }
    times = AnswerTimes()
    for n in range(FOLLOW_UPS_EACH):
        for kind in ("stored", "held back"):
            token = originals[kind][n]["receipt"]["token"]
            times.created(kind, partial(follow_up, api, token, unique("and"), new_sender()))
    thread_of = {m["id"]: m["follow_up_of"] for m in inbox_items(api, creator)}
    assert originals["stored"][-1]["id"] in thread_of.values()  # the stored ones landed
    assert originals["held back"][-1]["id"] not in thread_of.values()

    times.assert_alike("held back", "stored")


# --- what the creator sees -----------------------------------------------------------------


def creator_views(api: httpx.Client, creator: Creator, message_id: str) -> dict[str, Any]:
    views: dict[str, Any] = {}
    [views["inbox item"]] = [m for m in inbox_items(api, creator) if m["id"] == message_id]
    views["replies"] = reply_items(api, creator, message_id)
    for path in ("/user", "/links", f"/links/{creator.link_id}", "/blocks", "/muted-words"):
        views[path] = api.get(path, headers=creator.headers).json()["data"]
    exported = api.get("/account/export", headers=creator.headers)  # once it exists
    views["export"] = exported.text if exported.status_code == 200 else None
    return views


def test_nothing_the_creator_is_shown_tells_which_messages_have_a_receipt(
    site: Server, api: httpx.Client, creator: Creator
) -> None:
    with_receipt = send(api, creator.link_id, unique("with"))
    without = api.post(
        f"/message/{creator.link_id}", json={"message_content": unique("without")}
    ).json()["data"]
    for message in (with_receipt, without):
        post_reply(api, creator, message["id"], "same answer")
    token = with_receipt["receipt"]["token"]
    hashed = hashlib.sha256(token.encode()).hexdigest()

    seen_with = creator_views(api, creator, with_receipt["id"])
    seen_without = creator_views(api, creator, without["id"])
    item_with, item_without = seen_with.pop("inbox item"), seen_without.pop("inbox item")
    for item in (item_with, item_without):
        for key in ("id", "message_content", "created_at", "answer_id"):  # each its own
            item.pop(key)
    assert item_with == item_without
    assert shape(seen_with["replies"]) == shape(seen_without["replies"])
    everything = repr(seen_with) + repr(seen_without)
    assert token not in everything
    assert hashed not in everything
    assert "receipt" not in everything.lower()


def test_the_token_is_stored_only_as_its_hash_and_the_text_only_sealed(
    site: Server, api: httpx.Client, creator: Creator
) -> None:
    text = unique("a text only its sender may read back")
    data = send(api, creator.link_id, text)
    token = data["receipt"]["token"]
    follow = unique("the follow-up, sealed too")
    assert follow_up(api, token, follow).status_code == 201

    [row] = query(site.database_url, "SELECT * FROM receipts WHERE message_id = $1", data["id"])
    assert row["token_hash"] == hashlib.sha256(token.encode()).hexdigest()
    stored = repr(row)
    for secret in (token, text, follow):
        assert secret not in stored
    assert set(row) == {
        "token_hash",
        "link_id",
        "message_id",
        "content",
        "follow_up_id",
        "follow_up_content",
        "created_at",
        "expires_at",
    }  # nothing about the sender


# --- wrong, expired and gone ---------------------------------------------------------------


def assert_no_receipt(api: httpx.Client, token: str) -> dict[str, Any]:
    shown = api.get(f"/receipts/{token}")
    body = assert_error(shown, 404)
    assert body["error"]["code"] == "not_found"
    assert_error(follow_up(api, token, "hello?"), 404)
    return {"message": body["message"], "error": body["error"]}


def test_an_expired_receipt_is_a_404_like_a_wrong_token_and_is_purged(
    site: Server, api: httpx.Client, creator: Creator
) -> None:
    data = send(api, creator.link_id, unique("soon expired"))
    token = data["receipt"]["token"]
    execute(
        site.database_url, "UPDATE receipts SET expires_at = 1 WHERE message_id = $1", data["id"]
    )

    assert assert_no_receipt(api, token) == assert_no_receipt(api, secrets.token_urlsafe(32))
    assert purge(site.database_url) >= 1
    assert (
        query(site.database_url, "SELECT 1 FROM receipts WHERE message_id = $1", data["id"]) == []
    )


@pytest.mark.parametrize(
    "token",
    [
        "x",
        "0" * 43,
        "a" * 2000,
        "01jabcdefghjkmnpqrstvwxyz0",
        "%C3%A9t%C3%A9",
        "%00",
        "..%2F..",
        "' OR 1=1 --",
    ],
)
def test_random_tokens_are_a_404_never_a_500(api: httpx.Client, token: str) -> None:
    assert_no_receipt(api, token)


def test_a_deleted_link_takes_its_receipts_with_it(
    site: Server, api: httpx.Client, creator: Creator
) -> None:
    made = api.post("/links", json={"prompt": "short-lived"}, headers=creator.headers)
    link_id = made.json()["data"]["id"]
    token = send(api, link_id, unique("to a link about to go"))["receipt"]["token"]
    assert api.delete(f"/links/{link_id}", headers=creator.headers).status_code == 200
    assert_no_receipt(api, token)
    assert query(site.database_url, "SELECT 1 FROM receipts WHERE link_id = $1", link_id) == []


# --- a replayed post (Idempotency-Key) never touches the first receipt ----------------------


def replay(
    api: httpx.Client, link_id: str, text: str, key: dict[str, str], *, receipt: bool = True
) -> dict[str, Any]:
    """The same post again (``key`` holds the Idempotency-Key and the sender's address):
    the first answer's message, exactly, and never a receipt."""
    sent = api.post(
        f"/message/{link_id}",
        params={"receipt": "true"} if receipt else {},
        json={"message_content": text},
        headers=key,
    )
    assert sent.status_code == 201, sent.text
    data: dict[str, Any] = sent.json()["data"]
    assert set(data) == SEED_KEYS, data  # no receipt, nor anything else
    return data


def assert_first_receipt_holds(
    site: Server, api: httpx.Client, creator: Creator, first: dict[str, Any], text: str
) -> None:
    """The first answer's receipt is the message's one receipt and still works: it shows
    the message, then the creator's answer, and takes its follow-up."""
    token = first["receipt"]["token"]
    stored = query(
        site.database_url, "SELECT token_hash FROM receipts WHERE message_id = $1", first["id"]
    )
    assert [row["token_hash"] for row in stored] == [hashlib.sha256(token.encode()).hexdigest()]
    shown = receipt(api, token)
    assert shown["message"]["message_content"] == text
    assert shown["can_follow_up"] is True
    post_reply(api, creator, first["id"], "an answer for the first sender")
    answered = receipt(api, token)["message"]
    assert answered["answered"] is True
    assert [r["message_content"] for r in answered["replies"]] == ["an answer for the first sender"]
    assert follow_up(api, token, unique("the first sender's follow-up")).status_code == 201
    assert receipt(api, token)["follow_up"] is not None


def test_a_replayed_post_never_takes_over_the_first_receipt(
    site: Server, api: httpx.Client, creator: Creator
) -> None:
    """Issue 32: the replay used to replace the receipt's token, giving the replayer a
    working receipt (and the follow-up) and leaving the sender's link a 404."""
    key = {"Idempotency-Key": uuid.uuid4().hex, **new_sender()}
    text = unique("sent twice, stored once")
    first = send(api, creator.link_id, text, key)
    first_answer = {k: first[k] for k in SEED_KEYS}
    # The sender retrying, and someone else who learnt the key and the text.
    for who in (key, {**key, **new_sender()}):
        assert replay(api, creator.link_id, text, who) == first_answer
    assert replay(api, creator.link_id, text, key, receipt=False) == first_answer
    assert inbox_items(api, creator)[0]["id"] == first["id"]
    assert_first_receipt_holds(site, api, creator, first, text)
    # Still none once the follow-up went through.
    assert replay(api, creator.link_id, text, key) == first_answer


def test_a_replay_never_gets_a_receipt_the_first_post_did_not_ask_for(
    site: Server, api: httpx.Client, creator: Creator
) -> None:
    key = {"Idempotency-Key": uuid.uuid4().hex, **new_sender()}
    text = unique("no receipt asked")
    first = api.post(f"/message/{creator.link_id}", json={"message_content": text}, headers=key)
    assert first.status_code == 201, first.text
    data = first.json()["data"]
    assert replay(api, creator.link_id, text, key) == data
    assert (
        query(site.database_url, "SELECT 1 FROM receipts WHERE message_id = $1", data["id"]) == []
    )


def parallel_posts(
    site: Server, link_id: str, text: str, key: dict[str, str], n: int
) -> list[httpx.Response]:
    """``n`` posts of ``text`` with a receipt asked for, sent at once (each thread its
    own connection, all let go together)."""
    start = threading.Barrier(n)

    def post(_: int) -> httpx.Response:
        with loopback_client(base_url=site.url, timeout=30) as client:
            start.wait()
            return client.post(
                f"/message/{link_id}",
                params={"receipt": "true"},
                json={"message_content": text},
                headers=key,
            )

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(post, range(n)))


def test_parallel_replays_never_take_over_the_first_receipt(
    site: Server, api: httpx.Client, creator: Creator
) -> None:
    key = {"Idempotency-Key": uuid.uuid4().hex, **new_sender()}
    text = unique("replayed ten times at once")
    first = send(api, creator.link_id, text, key)
    replays = parallel_posts(site, creator.link_id, text, key, 10)
    assert [r.status_code for r in replays] == [201] * 10, [r.text for r in replays]
    assert [r.json()["data"] for r in replays] == [{k: first[k] for k in SEED_KEYS}] * 10
    assert_first_receipt_holds(site, api, creator, first, text)


def test_parallel_first_posts_with_one_key_give_one_working_receipt(
    site: Server, api: httpx.Client, creator: Creator
) -> None:
    """Ten posts racing with one key: one lands, and one answer carries its receipt; the
    others (replays that raced it) get the same message and no receipt."""
    key = {"Idempotency-Key": uuid.uuid4().hex, **new_sender()}
    text = unique("raced ten times")
    answers = parallel_posts(site, creator.link_id, text, key, 10)
    assert [r.status_code for r in answers] == [201] * 10, [r.text for r in answers]
    data = [r.json()["data"] for r in answers]
    assert len({d["id"] for d in data}) == 1
    [first] = [d for d in data if "receipt" in d]
    assert all(set(d) == SEED_KEYS for d in data if d is not first)
    assert [m["id"] for m in inbox_items(api, creator)] == [first["id"]]
    assert_first_receipt_holds(site, api, creator, first, text)


def test_a_follow_up_with_a_muted_word_lands_in_the_folder_answered_as_a_stored_one(
    api: httpx.Client, creator: Creator
) -> None:
    word = f"muted{uuid.uuid4().hex[:8]}"
    muted_one = send(api, creator.link_id, unique("an ordinary first message"))
    stored_one = send(api, creator.link_id, unique("another ordinary first message"))
    muted = api.post("/muted-words", json={"word": word}, headers=creator.headers)
    assert muted.status_code == 201, muted.text

    filtered = follow_up(api, muted_one["receipt"]["token"], f"and {word.upper()} too")
    stored = follow_up(api, stored_one["receipt"]["token"], unique("a plain follow-up"))
    assert filtered.status_code == stored.status_code == 201, filtered.text
    assert shape(filtered.json()) == shape(stored.json())
    assert filtered.json()["message"] == stored.json()["message"]
    filtered_id = filtered.json()["data"]["id"]

    # In the folder, threaded under its original; not in the inbox.
    inbox = {m["id"]: m for m in inbox_items(api, creator)}
    assert filtered_id not in inbox
    assert inbox[stored.json()["data"]["id"]]["follow_up_of"] == stored_one["id"]
    folder = api.get(f"/message/{creator.link_id}/filtered", headers=creator.headers)
    assert folder.status_code == 200, folder.text
    [item] = folder.json()["data"]["items"]
    assert (item["id"], item["follow_up_of"]) == (filtered_id, muted_one["id"])
    # The sender's receipt reads as for the stored follow-up.
    filtered_view = receipt(api, muted_one["receipt"]["token"])
    assert shape(filtered_view) == shape(receipt(api, stored_one["receipt"]["token"]))
    assert filtered_view["follow_up"]["answered"] is False
    assert filtered_view["can_follow_up"] is False

    # Restored, it is in the thread; answered, the receipt shows the answer.
    restored = api.post(
        f"/message/{creator.link_id}/{filtered_id}/restore", headers=creator.headers
    )
    assert restored.status_code == 200, restored.text
    inbox = {m["id"]: m for m in inbox_items(api, creator)}
    assert inbox[filtered_id]["follow_up_of"] == muted_one["id"]
    post_reply(api, creator, filtered_id, "answered after all")
    shown = receipt(api, muted_one["receipt"]["token"])["follow_up"]
    assert shown["answered"] is True
    assert [r["message_content"] for r in shown["replies"]] == ["answered after all"]


# --- the creator's dashboard marks follow-ups ------------------------------------------------


def text_of(markup: str) -> str:
    """What a page says, single-spaced, without its tags."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


def test_the_dashboard_marks_a_follow_up_with_the_message_it_follows(
    site: Server, api: httpx.Client, creator: Creator
) -> None:
    marker = uuid.uuid4().hex[:10]
    original = send(api, creator.link_id, f"{marker} " + "a long first message " * 6)
    ordinary = send(api, creator.link_id, f"{marker} an ordinary message")
    sent = follow_up(api, original["receipt"]["token"], f"{marker} and one more thing")
    assert sent.status_code == 201, sent.text
    follow_up_id = sent.json()["data"]["id"]
    excerpt = original["message_content"][:79].rstrip() + "…"
    base = f"/dashboard/links/{creator.link_id}"

    with signed_in(site, creator.user_id) as browser:
        # In the list (the inbox's and search's), a badge; on its page, what it follows.
        for path in (base, f"{base}/search?q={marker}"):
            page = browser.get(path)
            assert page.status_code == 200, page.text
            assert "Follow-up" in text_of(row(page.text, follow_up_id))
            for plain in (original["id"], ordinary["id"]):
                assert "Follow-up" not in row(page.text, plain)
        opened = browser.get(f"{base}/messages/{follow_up_id}").text
        marked = article(opened, follow_up_id)
        assert 'class="follow-up' in marked
        assert f'data-follow-up-of="{original["id"]}"' in marked
        assert text_of(marked).count(f"Follow-up to “{excerpt}”") == 1, marked
        assert f'href="{base}/messages/{original["id"]}"' in marked  # it leads there
        for plain in (original["id"], ordinary["id"]):
            assert "Follow-up" not in article(browser.get(f"{base}/messages/{plain}").text, plain)

        # Its original deleted, the follow-up still says what it is.
        deleted = api.delete(
            f"/message/{creator.link_id}/{original['id']}", headers=creator.headers
        )
        assert deleted.status_code == 200, deleted.text
        marked = article(browser.get(f"{base}/messages/{follow_up_id}").text, follow_up_id)
        assert "Follow-up to an earlier message" in text_of(marked)
