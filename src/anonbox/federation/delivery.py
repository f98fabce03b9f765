"""Federation through the durable courier: the channel that turns answers into ``Create``
deliveries, and the courier that makes each delivery a signed POST.

The channel takes ``reply.created`` events in the relay's transaction (an answer is sent
once, or again after a crash, never lost); ``service.enqueue`` writes the other
activities in the transactions that decide them. The courier attempts each delivery
through the shared ``courier.Dispatcher`` (at most ``PER_CREATOR`` of one creator's in
flight: a creator with a slow follower server holds up only themselves), to the address
the inbox's host resolves to now, checked and pinned (``core.egress``;
private, loopback and link-local ones only with ``ANONBOX_FEDERATION_ALLOW_PRIVATE``).
Each POST is signed with draft-cavage, or with RFC 9421 where the server was found to take
only that: a 400, 401 or 403 is knocked on once more with the other standard, which is then
remembered for the server if it is taken (``federation_servers``, Fedify's
"double-knocking"). A 2xx is delivered; a 4xx other than 408 and 429 (after both knocks)
is given up at once (the peer refuses it); anything else is retried, each wait 4 times
the last, at most 4 hours, for two days. A delivery to a server an admin blocked
meanwhile is given up.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from urllib.parse import urlsplit

import httpx

from anonbox.core.clock import now_us
from anonbox.core.database import Connection, Database, Row
from anonbox.core.egress import Pinned, Undeliverable, pinned_target
from anonbox.core.settings import Settings
from anonbox.federation import remote, repository, service, signatures
from anonbox.federation.activities import ACTIVITY_JSON, Site
from anonbox.notifications.courier import DeliveryRows, Outcome, backoff_seconds
from anonbox.outbox.schemas import Event, Kind

logger = logging.getLogger("anonbox.notifications")

_US = 1_000_000
MAX_WAIT_SECONDS = 4 * 3600
GIVE_UP_SECONDS = 2 * 24 * 3600
KEEP_SECONDS = 24 * 3600  # finished deliveries are purged after this
MAX_HOST_CHARACTERS = 253  # federation_servers.host


class FederationChannel:
    """Records a ``Create`` per new answer of a followed link, in the relay's transaction."""

    name = "federation"

    def __init__(self, site: Site) -> None:
        self._site = site

    async def accept(self, conn: Connection, events: Sequence[Event]) -> None:
        replies = [
            (e.link_id, e.reply_id, e.user_id)
            for e in events
            if e.kind == Kind.REPLY_CREATED and e.reply_id is not None
        ]
        if replies:
            await service.send_answers(conn, self._site, replies)


class FederationCourier(DeliveryRows):
    """Attempts a delivery: one POST signed with the link's key to the inbox."""

    name = "federation"
    title = "Fediverse"

    def __init__(self, db: Database, settings: Settings, site: Site, http: httpx.AsyncClient):
        super().__init__(db, repository.due_deliveries, repository.claim_delivery)
        self._db = db
        self._settings = settings
        self._site = site
        self._http = http

    async def purge(self) -> None:
        await repository.purge_finished(self._db, now_us() - KEEP_SECONDS * _US)

    async def attempt(self, delivery: Row) -> Outcome:
        attempts = int(delivery["attempts"]) + 1
        now = now_us()
        if await repository.blocked_among(
            self._db, remote.domains_to_check(str(delivery["inbox"]))
        ):
            await self._finish(delivery, "failed", attempts, now, "blocked")
            return Outcome.FAILED
        status_code, error = await self._send(delivery)
        now = now_us()
        if status_code is not None and 200 <= status_code < 300:
            await self._finish(delivery, "delivered", attempts, now, None)
            return Outcome.DELIVERED
        if status_code is not None and 400 <= status_code < 500 and status_code not in (408, 429):
            await self._finish(delivery, "failed", attempts, now, error)
            return Outcome.FAILED
        wait = backoff_seconds(self._settings.federation_retry_seconds, attempts, MAX_WAIT_SECONDS)
        retry_at = now + int(wait * _US)
        if retry_at - int(delivery["created_at"]) > GIVE_UP_SECONDS * _US:
            await self._finish(delivery, "failed", attempts, now, error)
            return Outcome.FAILED
        await repository.finish_attempt(
            self._db,
            delivery_id=str(delivery["id"]),
            status="pending",
            attempts=attempts,
            next_attempt_at=retry_at,
            error=error,
            finished_at=None,
        )
        return Outcome.RETRY

    async def _finish(
        self, delivery: Row, status: str, attempts: int, at: int, error: str | None
    ) -> None:
        await repository.finish_attempt(
            self._db,
            delivery_id=str(delivery["id"]),
            status=status,
            attempts=attempts,
            next_attempt_at=at,
            error=error,
            finished_at=at,
        )

    async def _send(self, delivery: Row) -> tuple[int | None, str | None]:
        link_id = str(delivery["link_id"])
        key = await repository.private_key(self._db, link_id)
        if key is None:
            return 410, "The link's actor is gone"
        inbox = str(delivery["inbox"])
        try:
            target = await pinned_target(
                inbox, allow_private=self._settings.federation_allow_private
            )
        except Undeliverable as exc:
            return None, str(exc)
        except Exception as exc:  # never a claim left to run out, again and again
            logger.warning("federation: a destination could not be checked (%s)", exc.__class__)
            return None, "The destination could not be checked"
        body = str(delivery["payload"]).encode()
        server = server_of(inbox)
        known = await repository.signature_standard(self._db, server)
        first = signatures.RFC9421 if known == signatures.RFC9421 else signatures.CAVAGE
        status_code, error = await self._post(target, inbox, body, link_id, key, first)
        if status_code not in signatures.REFUSED_SIGNATURE:
            return status_code, error
        # Refused: perhaps the server checks only the other standard. Knock once more with
        # it, and remember it for the server if it is taken (Fedify's double-knocking).
        other = signatures.CAVAGE if first == signatures.RFC9421 else signatures.RFC9421
        second, second_error = await self._post(target, inbox, body, link_id, key, other)
        if second is not None and 200 <= second < 300 and len(server) <= MAX_HOST_CHARACTERS:
            await repository.remember_signature_standard(
                self._db, host=server, standard=other, now=now_us()
            )
        if second is None:  # not answered: tried again later, both knocks
            return None, second_error
        if second_error is not None:
            second_error = f"{error} ({first}), {second_error} ({other})"
        return second, second_error

    async def _post(
        self, target: Pinned, inbox: str, body: bytes, link_id: str, key: str, standard: str
    ) -> tuple[int | None, str | None]:
        """One POST of ``body`` to ``inbox``, signed with the link's key as ``standard`` says."""
        parts = urlsplit(inbox)
        if standard == signatures.RFC9421:
            headers = signatures.sign_rfc9421(
                method="POST",
                url=inbox,
                body=body,
                key_id=self._site.key(link_id),
                private_pem=key,
            )
            headers["Host"] = target.host
        else:
            headers = signatures.sign(
                method="POST",
                target=(parts.path or "/") + (f"?{parts.query}" if parts.query else ""),
                host=target.host,
                body=body,
                key_id=self._site.key(link_id),
                private_pem=key,
            )
        headers["Content-Type"] = ACTIVITY_JSON
        headers["User-Agent"] = "anonbox-federation"
        try:
            answer = await self._http.post(
                target.url,
                content=body,
                headers=headers,
                extensions=target.extensions,
                follow_redirects=False,
            )
        except httpx.HTTPError as exc:
            return None, type(exc).__name__
        return answer.status_code, None if answer.is_success else f"HTTP {answer.status_code}"


def server_of(inbox: str) -> str:
    """The server an inbox is on, as its signature standard is remembered: host and port."""
    parts = urlsplit(inbox)
    return (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
