"""Answers posted to the creator's own Mastodon or Misskey account, through the courier.

When the creator answers a message (``reply.created``) on a link that posts its answers
(``links.crosspost``: the visibility; ``crosspost_cw``: a content warning), the relay
records one delivery per connected fediverse account of the creator. An attempt uploads
the answer's share card with its alt text (Mastodon ``POST /api/v2/media``, Misskey
``drive/files/create``), then posts the question, the answer and the link (Mastodon
``POST /api/v1/statuses`` with the delivery's id as ``Idempotency-Key``, Misskey
``notes/create``). Instances are reached as webhooks are: resolved, checked and pinned on
every attempt (``core.egress``; private addresses only with
``ANONBOX_FEDERATION_ALLOW_PRIVATE``). A token the instance refuses (401 or 403)
disconnects the account: its token is forgotten, its waiting posts given up, and the
creator sees it on the dashboard and the account page until they sign in with it again.
Other failures are retried like webhooks', each wait 4 times the last.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import httpx

from anonbox.core.clock import now_us
from anonbox.core.database import Connection, Database, Row
from anonbox.core.egress import Undeliverable, pinned_target
from anonbox.core.i18n import gettext, use_locale
from anonbox.core.ids import new_ulid
from anonbox.core.settings import Settings
from anonbox.notifications.courier import DeliveryRows, Outcome, backoff_seconds
from anonbox.notifications.crosspost import repository
from anonbox.outbox.repository import message_texts
from anonbox.outbox.schemas import Event, Kind

logger = logging.getLogger("anonbox.notifications")

_US = 1_000_000
MAX_WAIT_SECONDS = 4 * 3600
KEEP_FINISHED_SECONDS = 7 * 24 * 3600
# Mastodon's 500 characters by default, a link counted as 23: the question and the
# answer are cut to fit (the card carries them whole); Misskey allows 3,000.
_QUESTION_CHARACTERS = 180
_ANSWER_CHARACTERS = 220
# The visibility a link chose, as each software names it.
_MASTODON_VISIBILITY = {"public": "public", "unlisted": "unlisted", "followers": "private"}
_MISSKEY_VISIBILITY = {"public": "public", "unlisted": "home", "followers": "followers"}

# Draws an answer's share card: (link id, message id) → PNG, or None if there is none.
CardMaker = Callable[[str, str], Awaitable[bytes | None]]


class Refused(Exception):
    """The instance refused the token (401, 403)."""


class Failed(Exception):
    """Not this time: no answer, or not a success."""


def _cut(text: str, most: int) -> str:
    text = text.strip()
    return text if len(text) <= most else text[: most - 1].rstrip() + "…"


def post_texts(*, question: str, answer: str, url: str, language: str | None) -> tuple[str, str]:
    """The post's text and the card's alt text, in the link's language (its setting, else
    the creator's), as its card is drawn."""
    with use_locale(language):
        text = "\n\n".join(
            (
                gettext(
                    "Anonymous question: %(question)s",
                    question=_cut(question, _QUESTION_CHARACTERS),
                ),
                gettext("My answer: %(answer)s", answer=_cut(answer, _ANSWER_CHARACTERS)),
                url,
            )
        )
        alt = gettext(
            "A card with an anonymous question, “%(question)s”, and the answer, “%(answer)s”.",
            question=question.strip(),
            answer=answer.strip(),
        )
    return text, alt[:1500]


class CrosspostChannel:
    """Records a post per answer on a posting link and connected account, in the relay's
    transaction."""

    name = "crosspost"

    async def accept(self, conn: Connection, events: Sequence[Event]) -> None:
        answers = [e for e in events if e.kind == Kind.REPLY_CREATED and e.reply_id]
        if not answers:
            return
        targets: dict[str, list[str]] = {}
        since: dict[str, int] = {}
        for row in await repository.posting_links(conn, [e.link_id for e in answers]):
            targets.setdefault(str(row["link_id"]), []).append(str(row["account_id"]))
            since[str(row["link_id"])] = int(row["crosspost_since"] or 0)
        now = now_us()
        for event in answers:
            if event.created_at < since.get(event.link_id, 0):
                continue  # answered before the link posted its answers
            for account_id in targets.get(event.link_id, ()):
                assert event.reply_id is not None
                await repository.insert_delivery(
                    conn,
                    delivery_id=new_ulid(now),
                    account_id=account_id,
                    link_id=event.link_id,
                    message_id=event.message_id,
                    reply_id=event.reply_id,
                    created_at=now,
                )


class CrosspostCourier(DeliveryRows):
    name = "crosspost"
    title = "Posted answer"

    def __init__(
        self, db: Database, settings: Settings, http: httpx.AsyncClient, card: CardMaker
    ) -> None:
        super().__init__(db, repository.due_deliveries, repository.claim_delivery)
        self._db = db
        self._settings = settings
        self._http = http
        self._card = card

    async def purge(self) -> None:
        await repository.purge_finished(
            self._db, finished_before=now_us() - KEEP_FINISHED_SECONDS * _US
        )

    async def attempt(self, delivery: Row) -> Outcome:
        attempts = int(delivery["attempts"]) + 1
        texts = await message_texts(
            self._db, [str(delivery["message_id"])], [str(delivery["reply_id"])]
        )
        question = texts.get(str(delivery["message_id"]))
        answer = texts.get(str(delivery["reply_id"]))
        if question is None or answer is None:  # deleted before it was posted
            await self._finish(delivery, "failed", attempts, now_us(), "The answer was deleted")
            return Outcome.FAILED
        try:
            post_url = await self._post(delivery, question, answer)
        except Refused:
            now = now_us()
            async with self._db.transaction() as tx:
                await repository.disconnect(tx, account_id=str(delivery["account_id"]), at=now)
                await repository.fail_pending_of(
                    tx,
                    account_id=str(delivery["account_id"]),
                    at=now,
                    error="The instance refused the account's token",
                )
            logger.warning("crosspost: an instance refused a token; the account is disconnected")
            return Outcome.GONE
        except Failed as exc:
            return await self._retry(delivery, attempts, str(exc))
        await self._finish(delivery, "delivered", attempts, now_us(), None, post_url)
        return Outcome.DELIVERED

    async def _retry(self, delivery: Row, attempts: int, error: str) -> Outcome:
        now = now_us()
        wait = backoff_seconds(self._settings.webhook_retry_seconds, attempts, MAX_WAIT_SECONDS)
        retry_at = now + int(wait * _US)
        if retry_at - int(delivery["created_at"]) > self._settings.webhook_give_up_seconds * _US:
            await self._finish(delivery, "failed", attempts, now, error)
            return Outcome.FAILED
        await self._finish(delivery, "pending", attempts, retry_at, error)
        return Outcome.RETRY

    async def _finish(
        self,
        delivery: Row,
        status: str,
        attempts: int,
        next_attempt_at: int,
        error: str | None,
        post_url: str | None = None,
    ) -> None:
        await repository.finish_attempt(
            self._db,
            delivery_id=str(delivery["id"]),
            status=status,
            attempts=attempts,
            next_attempt_at=next_attempt_at,
            error=None if error is None else error[:300],
            post_url=post_url,
            finished_at=None if status == "pending" else next_attempt_at,
        )

    async def _send(
        self, url: str, *, headers: dict[str, str] | None = None, **body: Any
    ) -> dict[str, Any]:
        """One POST to the instance, pinned to the address checked now."""
        try:
            target = await pinned_target(url, allow_private=self._settings.federation_allow_private)
            answer = await self._http.post(
                target.url,
                headers={"Host": target.host, "User-Agent": "anonbox", **(headers or {})},
                extensions=target.extensions,
                follow_redirects=False,
                **body,
            )
        except Undeliverable as exc:
            raise Failed(str(exc)) from exc
        except httpx.HTTPError as exc:
            raise Failed(type(exc).__name__) from exc
        if answer.status_code in (401, 403):
            raise Refused()
        if not answer.is_success:
            raise Failed(f"HTTP {answer.status_code}")
        try:
            found = answer.json()
        except ValueError as exc:
            raise Failed("The instance's answer is not JSON") from exc
        if not isinstance(found, dict):
            raise Failed("The instance's answer is not an object")
        return found

    async def _post(self, delivery: Row, question: str, answer: str) -> str | None:
        site = (self._settings.public_url or "http://localhost").rstrip("/")
        page = f"{site}/{delivery['link_id']}"  # the answer's own page, once it has one
        if delivery["answer_id"] is not None:
            page += f"/a/{delivery['answer_id']}"
        text, alt = post_texts(
            question=question,
            answer=answer,
            url=page,
            language=delivery["language"],
        )
        png = await self._card(str(delivery["link_id"]), str(delivery["message_id"]))
        base = str(delivery["instance"])
        token = str(delivery["access_token"])
        visibility = str(delivery["crosspost"] or "public")
        warning = str(delivery["crosspost_cw"] or "")
        if delivery["software"] == "misskey":
            return await self._misskey(base, token, text, alt, png, visibility, warning)
        return await self._mastodon(
            base, token, text, alt, png, visibility, warning, str(delivery["id"])
        )

    async def _mastodon(
        self,
        base: str,
        token: str,
        text: str,
        alt: str,
        png: bytes | None,
        visibility: str,
        warning: str,
        key: str,
    ) -> str | None:
        auth = {"Authorization": f"Bearer {token}"}
        form: dict[str, str | list[str]] = {
            "status": text,
            "visibility": _MASTODON_VISIBILITY.get(visibility, "public"),
        }
        if warning:
            form["spoiler_text"] = warning
        if png is not None:
            media = await self._send(
                f"{base}/api/v2/media",
                headers=auth,
                files={"file": ("answer.png", png, "image/png")},
                data={"description": alt},
            )
            form["media_ids[]"] = [str(media.get("id", ""))]
        status = await self._send(
            f"{base}/api/v1/statuses",
            headers={**auth, "Idempotency-Key": key},
            data=form,
        )
        return str(status["url"]) if status.get("url") else None

    async def _misskey(
        self,
        base: str,
        token: str,
        text: str,
        alt: str,
        png: bytes | None,
        visibility: str,
        warning: str,
    ) -> str | None:
        note: dict[str, Any] = {
            "i": token,
            "text": text,
            "visibility": _MISSKEY_VISIBILITY.get(visibility, "public"),
        }
        if warning:
            note["cw"] = warning
        if png is not None:
            drive = await self._send(
                f"{base}/api/drive/files/create",
                files={"file": ("answer.png", png, "image/png")},
                data={"i": token, "comment": alt, "name": "answer.png"},
            )
            note["fileIds"] = [str(drive.get("id", ""))]
        created = await self._send(f"{base}/api/notes/create", json=note)
        found = created.get("createdNote")
        if isinstance(found, dict) and found.get("id"):
            return f"{base}/notes/{found['id']}"
        return None
