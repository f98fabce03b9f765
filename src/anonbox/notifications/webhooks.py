"""Signed webhooks: the channel that records deliveries, and the worker that makes them.

Bodies and headers follow the Standard Webhooks specification: ``webhook-id`` (the
delivery's id, the same on every attempt, so a receiver can drop duplicates),
``webhook-timestamp`` and ``webhook-signature`` (``v1,`` + HMAC-SHA256 under the
endpoint's ``whsec_`` secret), made with the ``standardwebhooks`` package; the body is
``{"type", "timestamp", "data"}``, and ``data`` holds only what the creator's own inbox
shows, never anything about a sender.

Each endpoint receives its deliveries in order: only its oldest pending one is
attempted. A failed attempt (no answer within 10 s, or not a 2xx) is retried after
``webhook_retry_seconds``, each wait 4 times the last, at most 4 hours, for
``webhook_give_up_seconds`` (26 hours); then the delivery is failed and the endpoint
disabled, which its creator sees on the API and the dashboard. A slow or dead receiver
holds up only its own endpoint: attempts run as tasks of their own.

Destinations are resolved and checked on every attempt, and the request goes to the
address that was checked (so a name that resolves elsewhere a second time, DNS
rebinding, reaches nothing): loopback, private, link-local and other special ranges are
refused unless ``ANONBOX_WEBHOOK_ALLOW_PRIVATE`` is set.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from urllib.parse import urlsplit, urlunsplit

import httpx
import msgspec
from standardwebhooks import Webhook

from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Connection, Database
from anonbox.core.errors import ValidationFailed
from anonbox.core.ids import new_ulid
from anonbox.core.settings import Settings
from anonbox.notifications import repository
from anonbox.notifications.relay import Event

logger = logging.getLogger("anonbox.notifications")

_US = 1_000_000
ATTEMPT_TIMEOUT_SECONDS = 10.0
LEASE_SECONDS = 60  # an attempt in progress holds its delivery this long
MAX_WAIT_SECONDS = 4 * 3600
POLL_SECONDS = 0.5
CONCURRENT_ATTEMPTS = 20


class Undeliverable(Exception):
    """The destination may not be reached (refused range, or no such host)."""


def check_url(url: str, *, allow_private: bool) -> None:
    """Refuse what is not an http(s) URL to a host, or names a private address outright."""
    if not _printable_url(url):
        raise ValidationFailed("The webhook URL may not contain spaces or control characters")
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ValidationFailed("The webhook URL must be an http:// or https:// URL")
    if not allow_private:
        host = parts.hostname
        literal = _literal_address(host)
        if (
            host == "localhost"
            or host.endswith(".localhost")
            or (literal is not None and not literal.is_global)
        ):
            raise ValidationFailed("The webhook URL may not point to a private or local address")


def _printable_url(url: str) -> bool:
    """No spaces, control characters or NUL: what a URL never holds unencoded."""
    return url.isprintable() and not any(character.isspace() for character in url)


def _literal_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
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


def _payload(event: Event, texts: dict[str, str]) -> dict[str, object]:
    data: dict[str, object] = {"link_id": event.link_id, "message_id": event.message_id}
    if event.kind == "message.created" and event.message_id in texts:
        data["message_content"] = texts[event.message_id]
    if event.kind == "reply.created" and event.reply_id is not None:
        data["reply_id"] = event.reply_id
        if event.reply_id in texts:
            data["reply_content"] = texts[event.reply_id]
    data["created_at"] = isoformat_us(event.created_at)
    return {"type": event.kind, "timestamp": isoformat_us(event.created_at), "data": data}


class WebhookChannel:
    """Records a delivery per event and subscribed endpoint, in the relay's transaction."""

    name = "webhooks"

    async def accept(self, conn: Connection, events: Sequence[Event]) -> None:
        endpoints = await repository.enabled_endpoints(conn, [e.user_id for e in events])
        if not endpoints:
            return
        texts = await repository.message_texts(
            conn,
            [e.message_id for e in events if e.kind == "message.created"],
            [e.reply_id for e in events if e.reply_id is not None],
        )
        now = now_us()
        for event in events:
            body: str | None = None
            for endpoint in endpoints:
                if endpoint["user_id"] != event.user_id:
                    continue
                if event.kind not in endpoint["events"].split(","):
                    continue
                body = body or msgspec.json.encode(_payload(event, texts)).decode()
                await repository.insert_delivery(
                    conn,
                    delivery_id=new_ulid(now),
                    endpoint_id=endpoint["id"],
                    kind=event.kind,
                    payload=body,
                    at=now,
                )


def _wait_seconds(settings: Settings, attempts: int) -> float:
    wait: float = settings.webhook_retry_seconds * 4.0 ** (attempts - 1)
    return min(wait, MAX_WAIT_SECONDS)


class WebhookDeliverer:
    """Attempts due deliveries, in a task each, on every instance (claims keep them apart)."""

    def __init__(self, db: Database, settings: Settings) -> None:
        self._db = db
        self._settings = settings
        self._slots = asyncio.Semaphore(CONCURRENT_ATTEMPTS)
        self._running: set[asyncio.Task[None]] = set()
        self.attempts = 0  # metrics: attempts made, deliveries done, retries, give-ups
        self.delivered = 0
        self.retried = 0
        self.failed = 0

    def stats(self) -> Mapping[str, int]:
        return {
            "attempts": self.attempts,
            "delivered": self.delivered,
            "retries": self.retried,
            "failed": self.failed,
            "in_flight": len(self._running),
        }

    async def run(self) -> None:
        async with httpx.AsyncClient(timeout=ATTEMPT_TIMEOUT_SECONDS) as http:
            while True:
                try:
                    await self._start_due(http)
                except Exception:  # the database is away a moment: try again next time
                    logger.warning("webhooks: looking for due deliveries failed", exc_info=True)
                await asyncio.sleep(POLL_SECONDS)

    async def _start_due(self, http: httpx.AsyncClient) -> None:
        free = CONCURRENT_ATTEMPTS - len(self._running)
        if free <= 0:
            return
        now = now_us()
        for row in await repository.due_deliveries(self._db, now, free):
            until = now + LEASE_SECONDS * _US
            claimed = await repository.claim_delivery(
                self._db, delivery_id=row["id"], seen_at=row["next_attempt_at"], until=until
            )
            if claimed:
                task = asyncio.create_task(self._attempt(http, dict(row)))
                self._running.add(task)
                task.add_done_callback(self._running.discard)

    async def _attempt(self, http: httpx.AsyncClient, delivery: dict[str, object]) -> None:
        async with self._slots:
            status_code, error = await self._send(http, delivery)
        self.attempts += 1
        attempts = int(str(delivery["attempts"])) + 1
        now = now_us()
        if status_code is not None and 200 <= status_code < 300:
            self.delivered += 1
            await repository.finish_attempt(
                self._db,
                delivery_id=str(delivery["id"]),
                status="delivered",
                attempts=attempts,
                next_attempt_at=now,
                status_code=status_code,
                error=None,
                finished_at=now,
            )
            return
        retry_at = now + int(_wait_seconds(self._settings, attempts) * _US)
        created = int(str(delivery["created_at"]))
        if retry_at - created > self._settings.webhook_give_up_seconds * _US:
            self.failed += 1
            await repository.finish_attempt(
                self._db,
                delivery_id=str(delivery["id"]),
                status="failed",
                attempts=attempts,
                next_attempt_at=now,
                status_code=status_code,
                error=error,
                finished_at=now,
            )
            hours = self._settings.webhook_give_up_seconds / 3600
            await repository.disable_endpoint(
                self._db,
                endpoint_id=str(delivery["endpoint_id"]),
                reason=f"Disabled: deliveries failed for {hours:g} hours"
                f" (last: {error or status_code}). Delete it and add it again to resume.",
            )
            logger.warning("webhooks: an endpoint was disabled after failing deliveries")
            return
        self.retried += 1
        await repository.finish_attempt(
            self._db,
            delivery_id=str(delivery["id"]),
            status="pending",
            attempts=attempts,
            next_attempt_at=retry_at,
            status_code=status_code,
            error=error,
            finished_at=None,
        )

    async def _send(
        self, http: httpx.AsyncClient, delivery: dict[str, object]
    ) -> tuple[int | None, str | None]:
        """One attempt: the status code, or None and why there was none."""
        url = str(delivery["url"])
        body = str(delivery["payload"])
        try:
            address = await pinned_address(url, allow_private=self._settings.webhook_allow_private)
        except Undeliverable as exc:
            return None, str(exc)
        parts = urlsplit(url)
        host = parts.hostname or ""
        netloc = f"[{address}]" if ":" in address else address
        if parts.port:
            netloc += f":{parts.port}"
        target = urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))
        delivery_id = str(delivery["id"])
        sent_at = datetime.now(UTC)
        headers = {
            "Host": parts.netloc.rsplit("@", 1)[-1],
            "Content-Type": "application/json",
            "User-Agent": "anonbox-webhooks",
            "webhook-id": delivery_id,
            "webhook-timestamp": str(int(sent_at.timestamp())),
            "webhook-signature": Webhook(str(delivery["secret"])).sign(delivery_id, sent_at, body),
        }
        try:
            answer = await http.post(
                target,
                content=body.encode(),
                headers=headers,
                extensions={"sni_hostname": host} if parts.scheme == "https" else {},
                follow_redirects=False,
            )
        except httpx.HTTPError as exc:
            return None, type(exc).__name__
        return answer.status_code, None if answer.is_success else f"HTTP {answer.status_code}"
