"""Web Push: the channel that records a push per new message and device, and the worker
that sends them.

A push is a JSON notice, ``{"title", "body", "url"}``, encrypted for the device
(RFC 8291 ``aes128gcm``, ``pywebpush``) and sent with a VAPID token (RFC 8292,
``py-vapid``) signed by the service's key pair, made on first start and kept in the
database so that every instance signs with the same one. The body says only that a
message came, or its first words if the creator chose that for the device; never
anything about the sender.

The push service answers 201 (accepted): the delivery row is deleted, with what it
carried. 429 or 5xx, or no answer: tried again after its ``Retry-After`` or a growing
wait, until ``give_up_seconds``. 404 or 410: the subscription is gone, and so is its row.
Endpoints must be https URLs to public addresses, resolved and pinned as webhooks are,
unless ``ANONBOX_PUSH_ALLOW_LOCAL`` is set (tests). Pushes are attempted by the shared
``courier.Dispatcher``.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Sequence
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

import httpx
import msgspec
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import Vapid02  # type: ignore[import-untyped]
from pywebpush import WebPusher  # type: ignore[import-untyped]

from anonbox.core.clock import now_us
from anonbox.core.database import Connection, Database, Row
from anonbox.core.egress import (
    LOCAL_PUSH_ENDPOINT,
    MAX_STORED_URL_CHARACTERS,
    MAX_URL_CHARACTERS,
    PUSH_ENDPOINT,
    Malformed,
    Refused,
    Undeliverable,
    destination,
    pinned_target,
    well_formed,
)
from anonbox.core.errors import FieldProblem, Forbidden, ValidationFailed
from anonbox.core.i18n import N_, _, use_locale
from anonbox.core.ids import new_ulid
from anonbox.core.settings import Settings
from anonbox.core.text import isolated
from anonbox.notifications.courier import DeliveryRows, Outcome, backoff_seconds
from anonbox.notifications.push import repository
from anonbox.outbox.repository import message_texts
from anonbox.outbox.schemas import Event, Kind

logger = logging.getLogger("anonbox.notifications")

_US = 1_000_000
MAX_WAIT_SECONDS = 3600
TTL_SECONDS = 24 * 3600  # how long the push service keeps a notice for an offline device
TOKEN_SECONDS = 12 * 3600  # a VAPID token's life (RFC 8292: at most 24 hours)
PREVIEW_WORDS = 12
PREVIEW_CHARACTERS = 80
TITLE = N_("New anonymous message")
NO_PREVIEW = N_("Open your inbox to read it")


def check_endpoint(endpoint: str, *, allow_local: bool, stored: bool = False) -> None:
    """A push service's URL: https (http too, when local endpoints are allowed). ``stored``:
    checked again before a push, under the length stored endpoints were allowed."""
    longest = MAX_STORED_URL_CHARACTERS if stored else MAX_URL_CHARACTERS
    pattern = LOCAL_PUSH_ENDPOINT if allow_local else PUSH_ENDPOINT
    problem = None
    if not well_formed(endpoint, pattern, longest=longest):
        problem = "The subscription's endpoint must be an https:// URL"
    else:
        try:  # the check each push makes again (``pinned_target``)
            destination(endpoint, allow_private=allow_local)
        except Malformed as exc:
            problem = f"The subscription's endpoint is not a URL anything reaches: {exc}"
        except Refused as exc:
            raise Forbidden(f"The subscription's endpoint may not point to {exc.why}") from exc
    if problem is not None:
        raise ValidationFailed(problem, [FieldProblem("endpoint", "invalid")])


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


async def vapid_keys(db: Database) -> tuple[str, str]:
    """The service's VAPID key pair (private scalar, public point; base64url), made by
    whichever instance asks first."""
    row = await repository.vapid_keys(db)
    if row is None:
        key = ec.generate_private_key(ec.SECP256R1())
        public = key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        await repository.offer_vapid_keys(
            db,
            private_key=_b64url(key.private_numbers().private_value.to_bytes(32, "big")),
            public_key=_b64url(public),
            at=now_us(),
        )
        row = await repository.vapid_keys(db)
        assert row is not None
    return str(row["private_key"]), str(row["public_key"])


def preview_of(text: str) -> str:
    words = text.split()
    shown = " ".join(words[:PREVIEW_WORDS])
    if len(shown) > PREVIEW_CHARACTERS:
        shown = shown[:PREVIEW_CHARACTERS].rstrip()
    # Isolated after the cut (which may drop the closer of an override in the text), so
    # that our "…" and the notification's own words keep their direction.
    return isolated(shown) + ("…" if shown != " ".join(words) else "")


def notice(event: Event, text: str | None, language: str | None = None) -> str:
    """The push's JSON: that a message came (its first words only when ``text`` is given),
    in the creator's ``language``."""
    with use_locale(language):
        title, body = _(TITLE), preview_of(text) if text else _(NO_PREVIEW)
    return msgspec.json.encode(
        {"title": title, "body": body, "url": f"/dashboard/links/{event.link_id}"}
    ).decode()


class PushChannel:
    """Records a push per ``message.created`` event and device, in the relay's transaction."""

    name = "push"

    async def accept(self, conn: Connection, events: Sequence[Event]) -> None:
        created = [e for e in events if e.kind == Kind.MESSAGE_CREATED]
        if not created:
            return
        subscriptions = await repository.subscriptions_for(conn, [e.user_id for e in created])
        if not subscriptions:
            return
        previewed = {s["user_id"] for s in subscriptions if s["preview"]}
        texts = await message_texts(
            conn, [e.message_id for e in created if e.user_id in previewed], []
        )
        now = now_us()
        rows = []
        for event in created:
            for subscription in subscriptions:
                if subscription["user_id"] != event.user_id:
                    continue
                language = subscription["language"]
                plain = notice(event, None, language)
                shown = notice(event, texts.get(event.message_id, ""), language)
                rows.append(
                    repository.delivery_row(
                        delivery_id=new_ulid(now),
                        subscription_id=subscription["id"],
                        payload=shown if subscription["preview"] else plain,
                        at=now,
                    )
                )
        await repository.insert_deliveries(conn, rows)


def encrypted(payload: str, *, endpoint: str, p256dh: str, auth: str) -> bytes:
    """The payload encrypted for one device (RFC 8291, aes128gcm)."""
    pusher = WebPusher({"endpoint": endpoint, "keys": {"p256dh": p256dh, "auth": auth}})
    body = pusher.encode(payload.encode(), "aes128gcm")["body"]
    assert isinstance(body, bytes)
    return body


def vapid_header(private_key: str, *, endpoint: str, contact: str) -> str:
    """``vapid t=<JWT>, k=<public key>`` for the endpoint's origin (RFC 8292)."""
    parts = urlsplit(endpoint)
    origin = f"{parts.scheme}://{parts.netloc.rsplit('@', 1)[-1]}"
    claims = {"aud": origin, "sub": contact, "exp": int(now_us() / _US) + TOKEN_SECONDS}
    signed = Vapid02.from_raw(private_key.encode()).sign(claims)
    header = signed["Authorization"]
    assert isinstance(header, str)
    return header


def retry_after_seconds(value: str | None) -> float | None:
    """A ``Retry-After`` in seconds or as an HTTP date; None if absent or unreadable."""
    if not value:
        return None
    if value.strip().isdigit():
        return float(value.strip())
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - now_us() / _US)


class PushCourier(DeliveryRows):
    """Attempts a push: the notice encrypted for its device, to its push service."""

    name = "push"
    title = "Web Push"

    def __init__(self, db: Database, settings: Settings, http: httpx.AsyncClient) -> None:
        super().__init__(db, repository.due_deliveries, repository.claim_delivery)
        self._db = db
        self._settings = settings
        self._http = http
        self._private_key: str | None = None

    async def attempt(self, delivery: Row) -> Outcome:
        if self._private_key is None:
            self._private_key, _ = await vapid_keys(self._db)
        status_code, retry_after, error = await self._send(self._private_key, delivery)
        delivery_id = str(delivery["id"])
        if status_code is not None and 200 <= status_code < 300:
            await repository.delete_delivery(self._db, delivery_id)
            return Outcome.DELIVERED
        if status_code in {404, 410}:
            await repository.forget_subscription(self._db, str(delivery["subscription_id"]))
            return Outcome.GONE
        if status_code is not None and status_code != 429 and status_code < 500:
            # 400, 403, 413…: trying again would be refused the same way.
            logger.warning("push: the push service refused a notice (HTTP %s)", status_code)
            await repository.delete_delivery(self._db, delivery_id)
            return Outcome.FAILED
        attempts = int(delivery["attempts"]) + 1
        wait = retry_after
        if wait is None:
            wait = backoff_seconds(self._settings.push_retry_seconds, attempts, MAX_WAIT_SECONDS)
        retry_at = now_us() + int(wait * _US)
        if retry_at - int(delivery["created_at"]) > self._settings.push_give_up_seconds * _US:
            logger.warning("push: gave up on a notice (last: %s)", error or status_code)
            await repository.delete_delivery(self._db, delivery_id)
            return Outcome.FAILED
        await repository.retry_delivery(
            self._db, delivery_id=delivery_id, attempts=attempts, next_attempt_at=retry_at
        )
        return Outcome.RETRY

    async def _send(
        self, private_key: str, delivery: Row
    ) -> tuple[int | None, float | None, str | None]:
        """One attempt: the status code and its Retry-After, or None and why none."""
        endpoint = str(delivery["endpoint"])
        allow_local = self._settings.push_allow_local
        try:
            check_endpoint(endpoint, allow_local=allow_local, stored=True)
            target = await pinned_target(endpoint, allow_private=allow_local)
        except (Undeliverable, ValidationFailed, Forbidden) as exc:
            return None, None, str(exc)
        except Exception as exc:  # never a claim left to run out, again and again
            logger.warning("push: a destination could not be checked (%s)", exc.__class__)
            return None, None, "The destination could not be checked"
        body = encrypted(
            str(delivery["payload"]),
            endpoint=endpoint,
            p256dh=str(delivery["p256dh"]),
            auth=str(delivery["auth"]),
        )
        headers = {
            "Host": target.host,
            "Authorization": vapid_header(
                private_key, endpoint=endpoint, contact=self._settings.push_contact
            ),
            "Content-Encoding": "aes128gcm",
            "Content-Type": "application/octet-stream",
            "TTL": str(TTL_SECONDS),
            "Urgency": "normal",
        }
        try:
            answer = await self._http.post(
                target.url,
                content=body,
                headers=headers,
                extensions=target.extensions,
                follow_redirects=False,
            )
        except httpx.HTTPError as exc:
            return None, None, type(exc).__name__
        return answer.status_code, retry_after_seconds(answer.headers.get("Retry-After")), None
