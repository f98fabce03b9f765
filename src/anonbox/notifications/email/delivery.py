"""E-mail notices: the channel that records them, and the worker that mails them.

A creator chooses ``immediately``, an ``hourly`` or ``daily`` digest, or ``off`` (the
default), and notices go only to an address confirmed for them (``email.service``). The
channel writes a notice per new message in the relay's transaction, due now or at the
end of its digest period; the sender mails each creator's due notices as one mail. A
mail says "New anonymous message" and what the creator's own inbox shows (the text),
never anything about the sender, and carries a one-click unsubscribe (RFC 8058): a POST
to its ``List-Unsubscribe`` URL turns notices off, the token in it an HMAC of the
creator's id. When the SMTP server refuses or is down, the notices are tried again after
``retry_seconds``, each wait 4 times the last (at most 4 hours), for ``give_up_seconds``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from email.message import EmailMessage

from anonbox.core.clock import now_us
from anonbox.core.database import Connection, Database, Row
from anonbox.core.errors import ServiceUnavailable
from anonbox.core.i18n import _, ngettext, use_locale
from anonbox.core.ids import new_ulid
from anonbox.core.mail import Mailer, compose
from anonbox.core.settings import Settings
from anonbox.core.text import isolated
from anonbox.notifications.courier import Outcome, backoff_seconds
from anonbox.notifications.email import repository
from anonbox.outbox.repository import message_texts
from anonbox.outbox.schemas import Event, Kind

logger = logging.getLogger("anonbox.notifications")

UNSUBSCRIBE_PATH = "/notifications/unsubscribe"  # the API's
CONFIRM_PATH = "/notifications/email/confirm"
# The pages a mail links to (``web.pages.email_notices``): a person opens them in a browser.
UNSUBSCRIBE_PAGE = "/email/unsubscribe"
CONFIRM_PAGE = "/email/confirm"
SETTINGS_PAGE = "/dashboard/notifications"
DEVELOPMENT_URL = "http://127.0.0.1:8000"  # as ``anonbox serve`` prints it
MAX_WAIT_SECONDS = 4 * 3600
NOTICES_PER_MAIL = 50
KEEP_SECONDS = 24 * 3600  # sent and dropped notices, then purged
_US = 1_000_000


@dataclass(frozen=True, slots=True)
class NoticeTiming:
    """How long a digest gathers, and how mail is retried."""

    hourly_seconds: int = 3600
    daily_seconds: int = 24 * 3600
    retry_seconds: float = 30.0
    give_up_seconds: int = 3 * 24 * 3600

    @classmethod
    def from_settings(cls, settings: Settings) -> NoticeTiming:
        return cls(
            hourly_seconds=settings.email_hourly_seconds,
            daily_seconds=settings.email_daily_seconds,
            retry_seconds=settings.email_retry_seconds,
            give_up_seconds=settings.email_give_up_seconds,
        )

    def due(self, mode: str, at: int) -> int:
        """When a notice made at ``at`` is to be mailed: now, or at its period's end."""
        if mode == "immediately":
            return at
        period = (self.hourly_seconds if mode == "hourly" else self.daily_seconds) * _US
        return (at // period + 1) * period


# --- tokens -----------------------------------------------------------------------------


def _mac(secret_key: str, purpose: str, *parts: str) -> str:
    digest = hmac.new(
        secret_key.encode(), "\x00".join((purpose, *parts)).encode(), hashlib.sha256
    ).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def unsubscribe_token(secret_key: str, user_id: str) -> str:
    return f"{user_id}.{_mac(secret_key, 'email-notices-unsubscribe', user_id)}"


def confirmation_token(secret_key: str, user_id: str, address: str) -> str:
    return f"{user_id}.{_mac(secret_key, 'email-notices-confirm', user_id, address)}"


def token_user(token: str) -> str:
    """The user id a token names (not yet checked)."""
    return token.partition(".")[0]


def unsubscribe_token_valid(secret_key: str, token: str) -> bool:
    expected = unsubscribe_token(secret_key, token_user(token))
    return hmac.compare_digest(expected.encode(), token.encode())


def confirmation_token_valid(secret_key: str, token: str, address: str) -> bool:
    expected = confirmation_token(secret_key, token_user(token), address)
    return hmac.compare_digest(expected.encode(), token.encode())


def site_url(settings: Settings) -> str:
    return settings.public_url or DEVELOPMENT_URL


# --- the channel ------------------------------------------------------------------------


class EmailNoticeChannel:
    """Records a notice per new message of a creator who gets them, in the relay's
    transaction."""

    name = "email"

    def __init__(self, settings: Settings) -> None:
        self._timing = NoticeTiming.from_settings(settings)

    async def accept(self, conn: Connection, events: Sequence[Event]) -> None:
        created = [e for e in events if e.kind == Kind.MESSAGE_CREATED]
        if not created:
            return
        modes = await repository.subscribers(conn, [e.user_id for e in created])
        now = now_us()
        await repository.insert_notices(
            conn,
            [
                repository.notice_row(
                    notice_id=new_ulid(now),
                    user_id=event.user_id,
                    message_id=event.message_id,
                    at=now,
                    due=self._timing.due(modes[event.user_id], event.created_at),
                )
                for event in created
                if event.user_id in modes
            ],
        )


# --- the sender -------------------------------------------------------------------------


def notice_mail(settings: Settings, *, to: str, user_id: str, texts: Sequence[str]) -> EmailMessage:
    """The mail for these messages' texts: what the inbox shows, and how to stop."""
    base = site_url(settings)
    unsubscribe = (
        f"{base}{UNSUBSCRIBE_PAGE}?token={unsubscribe_token(settings.secret_key, user_id)}"
    )
    count = len(texts)
    # In the creator's language (``use_locale`` around the call).
    subject = (
        _("New anonymous message")
        if count == 1
        else ngettext("%(num)d new anonymous message", "%(num)d new anonymous messages", count)
    )
    # Plain text has no <bdi>: each line a sender wrote is isolated, so that an override
    # in it cannot turn the quote marks or our words around.
    shown = "\n\n".join(
        "\n".join(f"> {isolated(line)}" for line in text.split("\n")) for text in texts
    )
    message = compose(
        settings,
        to=to,
        subject=subject,
        text=(
            f"{subject}\n\n{shown}\n\n"
            + _("Read and answer in your inbox: %(url)s", url=f"{base}/dashboard")
            + "\n\n"
            + _("Change these mails: %(url)s", url=f"{base}{SETTINGS_PAGE}")
            + "\n"
            + _("Stop them: %(url)s", url=unsubscribe)
            + "\n"
        ),
    )
    message["List-Unsubscribe"] = f"<{unsubscribe}>"
    message["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    return message


@dataclass(frozen=True, slots=True)
class Claimed:
    """A creator's due notices, taken together for one mail."""

    user_id: str
    notices: Sequence[Row]


class EmailCourier:
    """Mails a creator's due notices as one mail (a digest when there are several)."""

    name = "email_notices"
    title = "E-mail notice"

    def __init__(self, db: Database, settings: Settings, mailer: Mailer) -> None:
        self._db = db
        self._settings = settings
        self._mailer = mailer
        self._timing = NoticeTiming.from_settings(settings)

    async def due(self, now: int, limit: int, busy: Sequence[str]) -> Sequence[Row]:
        return await repository.due_creators(self._db, now, limit, busy)

    async def claim(self, row: Row, until: int) -> Claimed | None:
        notices = await repository.claim_due_notices(
            self._db, user_id=row["user_id"], now=now_us(), until=until, limit=NOTICES_PER_MAIL
        )
        if not notices:
            return None
        return Claimed(str(row["user_id"]), sorted(notices, key=lambda notice: notice["id"]))

    async def attempt(self, job: Claimed) -> Outcome:
        found = await repository.recipient(self._db, job.user_id)
        texts = await message_texts(self._db, [row["message_id"] for row in job.notices], [])
        shown = [texts[row["message_id"]] for row in job.notices if row["message_id"] in texts]
        if found is None or not shown:  # turned off, address changed, or messages deleted
            await self._finish(job.notices, "dropped")
            return Outcome.GONE
        with use_locale(found["language"], found["time_zone"]):
            mail = notice_mail(self._settings, to=found["email"], user_id=job.user_id, texts=shown)
        try:
            await self._mailer.send(mail)
        except ServiceUnavailable:
            return await self._retry(job.notices)
        await self._finish(job.notices, "sent")
        return Outcome.DELIVERED

    async def purge(self) -> None:
        await repository.purge_finished(self._db, now_us() - KEEP_SECONDS * _US)

    async def _retry(self, claimed: Sequence[Row]) -> Outcome:
        now = now_us()
        why = "the mail server refused or did not answer"
        outcome = Outcome.RETRY
        for row in claimed:
            wait = backoff_seconds(
                self._timing.retry_seconds, row["attempts"] + 1, MAX_WAIT_SECONDS
            )
            retry_at = now + int(wait * _US)
            if retry_at - row["created_at"] > self._timing.give_up_seconds * _US:
                outcome = Outcome.FAILED
                await repository.finish_notice(
                    self._db,
                    notice_id=row["id"],
                    status="failed",
                    next_attempt_at=now,
                    error=why,
                    finished_at=now,
                )
                continue
            await repository.finish_notice(
                self._db,
                notice_id=row["id"],
                status="pending",
                next_attempt_at=retry_at,
                error=why,
                finished_at=None,
            )
        return outcome

    async def _finish(self, claimed: Sequence[Row], status: str) -> None:
        now = now_us()
        for row in claimed:
            await repository.finish_notice(
                self._db,
                notice_id=row["id"],
                status=status,
                next_attempt_at=now,
                error=None,
                finished_at=now,
            )
