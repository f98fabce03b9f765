"""Receipts: issued with a post when the sender asks, read with the token alone, and
spent by one follow-up.

A receipt must not tell a dropped message from a stored one (``safety.gate``): both get
one, written the same way before the post; both read "not answered yet" until the
creator answers, which for a dropped message is never; a follow-up through either goes
the same way, and through a dropped one (or one whose sender the creator blocked) it is
dropped too; through one in the creator's filtered folder it is filtered too. A
filtered message reads "not answered yet" as any unanswered one; restored and answered,
it shows the answer. The token is the only credential: nothing about the sender is kept with it,
and nothing about the creator is shown but their public replies.

The posts themselves, the one with a receipt and the follow-up, are the messages'
(``messages.service``): it calls here to issue a receipt, and to seal and spend a
follow-up; nothing here writes a message.
"""

from __future__ import annotations

import hmac
import secrets

from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Connection, Database, Row
from anonbox.core.errors import Conflict, NotFound
from anonbox.links import repository as links_repository
from anonbox.links.availability import LinkGone
from anonbox.receipts import repository
from anonbox.receipts.schemas import (
    RECEIPT_DAYS,
    ReceiptLink,
    ReceiptOut,
    ThreadMessage,
    ThreadReply,
)
from anonbox.receipts.sealing import Sealed, seal, token_hash, unseal

TOKEN_BYTES = 32  # 256 random bits: the token is a bearer credential
REPLIES_SHOWN = 100  # newest replies to the message and its follow-up, together
PURGE_EVERY_SECONDS = 3600
RECEIPT_PATH = "/r/"  # the receipt page, web.pages.receipt

_US_PER_DAY = 86_400 * 1_000_000
_MESSAGE, _FOLLOW_UP = "message", "follow-up"
_NO_RECEIPT = "No receipt with this token: it is wrong, or it expired"


class FollowUpsOff(Conflict):
    code = "follow_ups_off"


class FollowUpSent(Conflict):
    code = "follow_up_sent"


def receipt_url(site: str, token: str) -> str:
    return f"{site}{RECEIPT_PATH}{token}"


async def issue(
    db: Database, *, site: str, link_id: str, message_id: str, text: str, created_at: str
) -> ReceiptLink | None:
    """Write a new receipt of the message (its text sealed under a new token), as
    ``messages.service.create_message`` asks when the sender wants one; the receipt link
    for the answer, or None when none was written (no such link, or the message has a
    receipt already: one is never replaced)."""
    token = secrets.token_urlsafe(TOKEN_BYTES)
    now = now_us()
    expires_at = now + RECEIPT_DAYS * _US_PER_DAY
    written = await repository.issue(
        db,
        token_hash=token_hash(token),
        link_id=link_id,
        message_id=message_id,
        content=seal(token, _MESSAGE, Sealed(text, created_at)),
        created_at=now,
        expires_at=expires_at,
    )
    if not written:
        return None
    return ReceiptLink(
        token=token, url=receipt_url(site, token), expires_at=isoformat_us(expires_at)
    )


async def live(db: Database, token: str) -> tuple[Row, Row]:
    """The receipt of this token, and its link as a post sees it (owner, paused). Unknown
    and expired tokens are the same 404, after the same one lookup; the link of an account
    being deleted is gone (404 ``link_gone``), as it is for a post."""
    hashed = token_hash(token)
    row = await repository.receipt(db, hashed)
    if (
        row is None
        or not hmac.compare_digest(str(row["token_hash"]), hashed)
        or row["expires_at"] <= now_us()
    ):
        raise NotFound(_NO_RECEIPT)
    link = await links_repository.posting_target(db, row["link_id"])
    if link is None:
        raise NotFound(_NO_RECEIPT)  # the link went a moment ago, and its receipts with it
    if link["disabled"]:
        raise LinkGone()
    return row, link


def _thread(
    sealed: Sealed, replies: list[ThreadReply], answer_id: str | None = None
) -> ThreadMessage:
    thread = ThreadMessage(
        message_content=sealed.text,
        created_at=sealed.created_at,
        answered=bool(replies),
        replies=replies,
    )
    if replies and answer_id is not None:  # its public page, once answered
        thread.answer_id = answer_id
    return thread


async def receipt(db: Database, *, token: str) -> ReceiptOut:
    """What the token's holder may see: their own text, the creator's public replies
    (oldest first), and whether a follow-up may be sent now."""
    return (await receipt_of_link(db, token=token))[1]


async def receipt_of_link(db: Database, *, token: str) -> tuple[str, ReceiptOut]:
    """The receipt, and the id of the link it was sent to (for the receipt page)."""
    row, link = await live(db, token)
    rows = await repository.replies(
        db,
        link_id=row["link_id"],
        message_id=row["message_id"],
        follow_up_id=row["follow_up_id"],
        limit=REPLIES_SHOWN,
    )
    replies: dict[str, list[ThreadReply]] = {}
    answers: dict[str, str] = {}
    for reply in reversed(rows):
        replies.setdefault(reply["message_id"], []).append(
            ThreadReply(
                message_content=reply["content"], created_at=isoformat_us(reply["created_at"])
            )
        )
        if reply["answer_id"] is not None:
            answers[reply["message_id"]] = str(reply["answer_id"])
    message = _thread(
        unseal(token, _MESSAGE, row["content"]),
        replies.get(row["message_id"], []),
        answers.get(row["message_id"]),
    )
    follow_up = None
    if row["follow_up_content"] is not None:
        sealed = unseal(token, _FOLLOW_UP, row["follow_up_content"])
        follow_up = _thread(
            sealed, replies.get(row["follow_up_id"], []), answers.get(row["follow_up_id"])
        )
    return row["link_id"], ReceiptOut(
        message=message,
        follow_up=follow_up,
        can_follow_up=_can_follow_up(row, link),
        expires_at=isoformat_us(row["expires_at"]),
    )


def _can_follow_up(row: Row, link: Row) -> bool:
    return row["follow_up_id"] is None and bool(row["follow_ups"]) and not bool(link["paused"])


def require_follow_up(row: Row) -> None:
    """Refuse a follow-up through this receipt (``live``'s row) when the creator does not
    take them on its link, or when it was sent already."""
    if not row["follow_ups"]:
        raise FollowUpsOff("The creator does not take follow-ups on this link")
    if row["follow_up_id"] is not None:
        raise FollowUpSent("This receipt's follow-up was already sent")


def seal_follow_up(token: str, text: str, created_at: str) -> str:
    """The follow-up's copy of its text, as its receipt keeps it."""
    return seal(token, _FOLLOW_UP, Sealed(text, created_at))


async def spend_follow_up(
    conn: Connection, *, token_hash: str, follow_up_id: str, sealed: str, now: int
) -> None:
    """Spend the receipt's one follow-up on ``follow_up_id`` (in the caller's transaction,
    the follow-up's own); ``FollowUpSent`` when it is spent (or expired) already."""
    if not await repository.claim_follow_up(
        conn, token_hash=token_hash, follow_up_id=follow_up_id, content=sealed, now=now
    ):
        raise FollowUpSent("This receipt's follow-up was already sent")


async def purge_expired(db: Database) -> int:
    """Delete expired receipts; how many. A chore of every instance, every
    ``PURGE_EVERY_SECONDS`` (``core.chores``): the delete is idempotent. An expired receipt
    already answers 404; this only frees the rows."""
    return await repository.purge(db, expired_before=now_us())
