"""Fixtures for the account tests: a server per backend, signed-in sessions as a finished
sign-in would issue them, and a creator whose account holds a little of everything."""

from __future__ import annotations

import asyncio
import io
import secrets
import sqlite3
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import httpx
import pytest
from PIL import Image

from anonbox.auth.sessions import open_session
from anonbox.core.clock import now_us
from anonbox.core.database import connect
from anonbox.core.ids import new_ulid
from anonbox.core.settings import Settings
from tests.conftest import Creator, make_creator_in
from tests.server import Server
from tests.support.db import query
from tests.support.http import loopback_client
from tests.support.push import subscription_body

# Every post comes from a sender of its own (X-Forwarded-For from a trusted 127.0.0.1).
TRUSTING = {"ANONBOX_TRUSTED_PROXIES": "127.0.0.1/32", "ANONBOX_WEBHOOK_ALLOW_PRIVATE": "true"}
_senders = iter(range(1, 1_000_000))


def start_server(
    database_url: str, log_dir: Any, name: str, env: dict[str, str] | None = None
) -> Server:
    return Server(database_url, log_dir / f"{name}.log", env={**TRUSTING, **(env or {})}).start()


def signed_in(database_url: str, user_id: str) -> dict[str, str]:
    """Headers with a sign-in access token of the account, as signing in would give."""

    async def run() -> str:
        db = await connect(database_url)
        try:
            tokens = await open_session(db, user_id=user_id, settings=Settings.from_env({}))
            return tokens.access_token
        finally:
            await db.close()

    return {"X-API-Key": asyncio.run(run())}


def insert_messages(database_url: str, link_id: str, texts: Iterable[str]) -> int:
    """Insert messages straight into the database, oldest first, 5,000 to a statement (as
    bench/run.py seeds), each from a sender hash of its own; how many."""
    start = now_us() - 10 * 60_000_000
    batch: list[tuple[Any, ...]] = []
    count = 0

    async def run() -> None:
        nonlocal count
        if database_url.startswith("sqlite"):
            conn = sqlite3.connect(database_url.removeprefix("sqlite:///"), isolation_level=None)
            try:
                # The server may be writing too (its chores, its outbox): wait for the
                # write lock up front, as long as a loaded machine may make it take.
                conn.execute("PRAGMA busy_timeout=30000")
                for rows in batches():
                    conn.execute("BEGIN IMMEDIATE")
                    conn.executemany(
                        f"INSERT INTO messages ({', '.join(_COLUMNS)})"  # noqa: S608
                        f" VALUES ({', '.join('?' for _ in _COLUMNS)})",
                        [(*row[:3], int(row[3]), *row[4:]) for row in rows],
                    )
                    conn.execute("COMMIT")
                    count += len(rows)
            finally:
                conn.close()
            return
        pg = await asyncpg.connect(database_url)
        try:
            for rows in batches():
                await pg.copy_records_to_table("messages", records=rows, columns=_COLUMNS)
                count += len(rows)
            await pg.execute("ANALYZE messages")
        finally:
            await pg.close()

    def batches() -> Iterator[list[tuple[Any, ...]]]:
        for i, text in enumerate(texts):
            created = start + i
            batch.append(
                (new_ulid(created), link_id, text, False, 0, created, 1, secrets.token_hex(32))
            )
            if len(batch) == 5_000:
                yield list(batch)
                batch.clear()
        if batch:
            yield list(batch)

    asyncio.run(run())
    return count


_COLUMNS = (
    "id",
    "link_id",
    "content",
    "like_by_creator",
    "reply_count",
    "created_at",
    "sender_epoch",
    "sender_hash",
)


def unique(label: str) -> str:
    """Text no other test writes: a marker word of letters and digits, then the label."""
    return f"zq{uuid.uuid4().hex[:16]} {label}"


def send(api: httpx.Client, link_id: str, text: str, **headers: str) -> httpx.Response:
    n = next(_senders)
    return api.post(
        f"/message/{link_id}",
        json={"message_content": text},
        headers={"X-Forwarded-For": f"10.88.{(n >> 8) & 255}.{n & 255}", **headers},
    )


@dataclass
class Furnished:
    """A creator whose account holds some of everything, and what was made."""

    creator: Creator
    session: dict[str, str]
    email: str
    link_ids: list[str]
    messages: dict[str, str] = field(default_factory=dict)  # id -> text
    filtered: dict[str, str] = field(default_factory=dict)  # in a filtered folder: id -> text
    replies: dict[str, str] = field(default_factory=dict)  # id -> text
    liked: set[str] = field(default_factory=set)
    blocked_excerpt: str = ""
    muted_word: str = ""
    api_key_ids: list[str] = field(default_factory=list)
    webhook_url: str = ""
    webhook_secret: str = ""
    push_endpoint: str = ""
    report_reason: str = ""
    avatar_url: str = ""

    def ok(self, api: httpx.Client, method: str, path: str, **kwargs: Any) -> Any:
        headers = kwargs.pop("headers", self.creator.headers)
        answer = api.request(method, path, headers=headers, **kwargs)
        assert answer.status_code in {200, 201}, f"{method} {path}: {answer.text}"
        return answer.json()["data"]

    def secrets(self) -> set[str]:
        """What names this account or was written in it: none may outlive its erasure."""
        return {
            self.creator.user_id,
            self.email,
            *self.link_ids,
            *self.messages,
            *(text.split()[0] for text in self.messages.values()),
            *self.filtered,
            *(text.split()[0] for text in self.filtered.values()),
            *self.replies,
            *(text.split()[0] for text in self.replies.values()),
            self.muted_word,
            *self.api_key_ids,
            self.webhook_url,
            self.push_endpoint,
            self.report_reason.split()[0],
            self.avatar_url.rsplit("/", 1)[-1].removesuffix(".webp"),  # the upload's id
        }


def furnish(server: Server, api: httpx.Client) -> Furnished:
    """A creator with two links, messages (one answered twice, one liked, one blocked, one
    reported), a muted word, a message it filtered and one it dropped (the
    second link is set to drop), an extra API key, a webhook, a push
    device and an e-mail notice choice."""
    creator = make_creator_in(server.database_url)
    [row] = query(server.database_url, "SELECT email FROM users WHERE id = $1", creator.user_id)
    account = Furnished(
        creator, signed_in(server.database_url, creator.user_id), row["email"], [creator.link_id]
    )
    second = account.ok(api, "POST", "/links", json={"prompt": unique("second prompt")})["id"]
    account.link_ids.append(second)
    for link_id in account.link_ids:
        for label in ("plain", "answered", "liked", "blocked", "reported"):
            text = unique(f"{label} message, ünïcødé ✓")
            sent = send(api, link_id, text)
            assert sent.status_code == 201, sent.text
            account.messages[sent.json()["data"]["id"]] = text
    ids = list(account.messages)
    answered, liked, blocked, reported = ids[1], ids[2], ids[3], ids[4]
    base = f"/message/{account.creator.link_id}"
    for label in ("first", "second"):
        text = unique(f"{label} reply")
        reply = account.ok(api, "POST", f"{base}/{answered}", json={"message_content": text})
        account.replies[reply["reply_message_id"]] = text
    account.ok(api, "PUT", f"{base}/{liked}/like")
    account.liked.add(liked)
    account.ok(api, "POST", f"{base}/{blocked}/block")
    account.blocked_excerpt = account.messages[blocked]  # it stays: a block moves nothing
    account.report_reason = unique("report reason")
    reported_answer = api.post(f"{base}/{reported}/report", json={"reason": account.report_reason})
    assert reported_answer.status_code == 201, reported_answer.text
    account.muted_word = f"zqmuted{uuid.uuid4().hex[:10]}"
    account.ok(api, "POST", "/muted-words", json={"word": account.muted_word})
    text = unique(f"filtered, it holds {account.muted_word}")
    held = send(api, account.link_ids[0], text)  # the first link keeps it, in its folder
    assert held.status_code == 201, held.text
    account.filtered[held.json()["data"]["id"]] = text
    account.ok(api, "PATCH", f"/links/{second}", json={"muted": "drop"})  # dropped, not filtered
    dropped = send(api, second, f"this has {account.muted_word} in it")
    assert dropped.status_code == 201, dropped.text
    key = account.ok(api, "POST", "/auth/api-keys", headers=account.session, json={"name": "bot"})
    account.api_key_ids = [
        k["id"] for k in account.ok(api, "GET", "/auth/api-keys", headers=account.session)["items"]
    ]
    assert key["id"] in account.api_key_ids
    account.webhook_url = f"http://127.0.0.1:9/{uuid.uuid4().hex}"
    hook = account.ok(api, "POST", "/webhooks", json={"url": account.webhook_url})
    account.webhook_secret = hook["secret"]
    body = subscription_body()
    account.push_endpoint = body["endpoint"]
    account.ok(api, "POST", "/push/subscriptions", json=body)
    account.ok(api, "PUT", "/notifications/email", json={"mode": "daily"})
    picture = io.BytesIO()
    Image.new("RGB", (32, 32), (200, 40, 40)).save(picture, "PNG")
    uploaded = account.ok(
        api, "PUT", "/account/avatar", content=picture.getvalue(),
        headers={**creator.headers, "Content-Type": "image/png"},
    )  # fmt: skip
    account.avatar_url = uploaded["avatar_url"]
    return account


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def server(
    request: pytest.FixtureRequest,
    database_url_factory: Callable[[str], str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Server]:
    """A server with the default grace period of 30 days."""
    logs = tmp_path_factory.mktemp("account")
    running = start_server(database_url_factory(request.param), logs, request.param)
    yield running
    running.stop()
    assert "Traceback" not in running.log(), f"the server logged a traceback: {running.log_path}"


@pytest.fixture
def api(server: Server) -> Iterator[httpx.Client]:
    with loopback_client(base_url=server.url, timeout=60) as client:
        yield client
