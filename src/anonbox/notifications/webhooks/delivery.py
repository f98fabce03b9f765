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
disabled, which its creator sees on the API and the dashboard. Attempts are made by the
shared ``courier.Dispatcher``: a slow or dead receiver holds up only its own creator.

Destinations are checked when an endpoint is added and again, resolved and pinned, on
every attempt, by the same check (``core.egress.destination``): loopback, private,
link-local and other special ranges are refused unless ``ANONBOX_WEBHOOK_ALLOW_PRIVATE``
is set, multicast and reserved ones always. A destination found undeliverable at an
attempt (a name that no longer resolves, or resolves only to refused addresses) is a
failed attempt like a refusing receiver: retried, then given up.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime

import httpx
import msgspec
from standardwebhooks import Webhook

from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Connection, Database, Row
from anonbox.core.egress import (
    MAX_URL_CHARACTERS,
    WEBHOOK_URL,
    Malformed,
    Refused,
    Undeliverable,
    destination,
    pinned_target,
    well_formed,
)
from anonbox.core.errors import FieldProblem, Forbidden, ValidationFailed
from anonbox.core.ids import new_ulid
from anonbox.core.settings import Settings
from anonbox.notifications.courier import DeliveryRows, Outcome, backoff_seconds
from anonbox.notifications.webhooks import repository
from anonbox.outbox.repository import message_texts
from anonbox.outbox.schemas import Event, Kind

logger = logging.getLogger("anonbox.notifications")

_US = 1_000_000
MAX_WAIT_SECONDS = 4 * 3600


def check_url(url: str, *, allow_private: bool) -> None:
    """Refuse what is not an http(s) URL anything can be delivered to (400), or points to
    an address or name this server does not send to (403: well formed, but not a
    destination this server may be sent to). The check each attempt makes again
    (``core.egress.destination``), so nothing is taken that is then never delivered."""
    problem = None
    if not well_formed(url, WEBHOOK_URL):
        problem = (
            f"The webhook URL must be an http:// or https:// URL of at most "
            f"{MAX_URL_CHARACTERS} characters, with no spaces or characters outside ASCII"
        )
    else:
        try:
            destination(url, allow_private=allow_private)
        except Malformed as exc:
            problem = f"The webhook URL is not one anything can be delivered to: {exc}"
        except Refused as exc:
            raise Forbidden(f"The webhook URL may not point to {exc.why}") from exc
    if problem is not None:
        raise ValidationFailed(problem, [FieldProblem("url", "invalid")])


def _payload(event: Event, texts: dict[str, str]) -> dict[str, object]:
    data: dict[str, object] = {"link_id": event.link_id, "message_id": event.message_id}
    if event.kind == Kind.MESSAGE_CREATED and event.message_id in texts:
        data["message_content"] = texts[event.message_id]
    if event.kind == Kind.REPLY_CREATED and event.reply_id is not None:
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
        texts = await message_texts(
            conn,
            [e.message_id for e in events if e.kind == Kind.MESSAGE_CREATED],
            [e.reply_id for e in events if e.reply_id is not None],
        )
        # Each creator's endpoints with the kinds they take, sorted out once per batch:
        # this runs for every event of every creator with webhooks.
        subscribed: dict[str, list[tuple[str, frozenset[str]]]] = {}
        for endpoint in endpoints:
            kinds = frozenset(endpoint["events"].split(","))
            subscribed.setdefault(endpoint["user_id"], []).append((endpoint["id"], kinds))
        now = now_us()
        rows: list[repository.NewDelivery] = []
        for event in events:
            body: str | None = None
            for endpoint_id, kinds in subscribed.get(event.user_id, ()):
                if event.kind in kinds:
                    body = body or msgspec.json.encode(_payload(event, texts)).decode()
                    rows.append((new_ulid(now), endpoint_id, event.kind, body, now))
        await repository.insert_deliveries(conn, rows)


class WebhookCourier(DeliveryRows):
    """Attempts a delivery: one signed POST to the address its endpoint resolves to now."""

    name = "webhooks"
    title = "Webhook"

    def __init__(self, db: Database, settings: Settings, http: httpx.AsyncClient) -> None:
        super().__init__(db, repository.due_deliveries, repository.claim_delivery)
        self._db = db
        self._settings = settings
        self._http = http

    async def attempt(self, delivery: Row) -> Outcome:
        status_code, error = await self._send(delivery)
        attempts = int(delivery["attempts"]) + 1
        now = now_us()
        if status_code is not None and 200 <= status_code < 300:
            await self._finish(delivery, "delivered", attempts, now, status_code, None)
            return Outcome.DELIVERED
        wait = backoff_seconds(self._settings.webhook_retry_seconds, attempts, MAX_WAIT_SECONDS)
        retry_at = now + int(wait * _US)
        if retry_at - int(delivery["created_at"]) > self._settings.webhook_give_up_seconds * _US:
            await self._finish(delivery, "failed", attempts, now, status_code, error)
            hours = self._settings.webhook_give_up_seconds / 3600
            await repository.disable_endpoint(
                self._db,
                endpoint_id=str(delivery["endpoint_id"]),
                reason=f"Disabled: deliveries failed for {hours:g} hours"
                f" (last: {error or status_code}). Delete it and add it again to resume.",
            )
            logger.warning("webhooks: an endpoint was disabled after failing deliveries")
            return Outcome.FAILED
        await self._finish(delivery, "pending", attempts, retry_at, status_code, error)
        return Outcome.RETRY

    async def _finish(
        self,
        delivery: Row,
        status: str,
        attempts: int,
        next_attempt_at: int,
        status_code: int | None,
        error: str | None,
    ) -> None:
        await repository.finish_attempt(
            self._db,
            delivery_id=str(delivery["id"]),
            status=status,
            attempts=attempts,
            next_attempt_at=next_attempt_at,
            status_code=status_code,
            error=error,
            finished_at=None if status == "pending" else next_attempt_at,
        )

    async def _send(self, delivery: Row) -> tuple[int | None, str | None]:
        """One attempt: the status code, or None and why there was none."""
        body = str(delivery["payload"])
        try:
            target = await pinned_target(
                str(delivery["url"]), allow_private=self._settings.webhook_allow_private
            )
        except Undeliverable as exc:  # a failed attempt, retried as any other
            return None, str(exc)
        except Exception as exc:  # never a claim left to run out, again and again
            logger.warning("webhooks: a destination could not be checked (%s)", exc.__class__)
            return None, "The destination could not be checked"
        delivery_id = str(delivery["id"])
        sent_at = datetime.now(UTC)
        headers = {
            "Host": target.host,
            "Content-Type": "application/json",
            "User-Agent": "anonbox-webhooks",
            "webhook-id": delivery_id,
            "webhook-timestamp": str(int(sent_at.timestamp())),
            "webhook-signature": Webhook(str(delivery["secret"])).sign(delivery_id, sent_at, body),
        }
        try:
            answer = await self._http.post(
                target.url,
                content=body.encode(),
                headers=headers,
                extensions=target.extensions,
                follow_redirects=False,
            )
        except httpx.HTTPError as exc:
            return None, type(exc).__name__
        return answer.status_code, None if answer.is_success else f"HTTP {answer.status_code}"
