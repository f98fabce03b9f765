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
"""

from __future__ import annotations

import hmac
import secrets

import msgspec

from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Database, Row
from anonbox.core.errors import Conflict, NotFound
from anonbox.core.ids import new_ulid
from anonbox.links.availability import NO_LINK, LinkGone
from anonbox.messages import repository as messages_repository
from anonbox.messages import service as messages
from anonbox.messages.content import normalised_content
from anonbox.messages.schemas import MessageOut
from anonbox.receipts import repository
from anonbox.receipts.schemas import ReceiptLink, ReceiptOut, ThreadMessage, ThreadReply
from anonbox.receipts.sealing import Sealed, seal, token_hash, unseal
from anonbox.safety.schemas import IPAddress

RECEIPT_DAYS = 30
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


async def _issue(db: Database, token: str, link_id: str, message: MessageOut) -> int | None:
    """Write the receipt of ``message``; its expiry, or None when none was written."""
    now = now_us()
    expires_at = now + RECEIPT_DAYS * _US_PER_DAY
    written = await repository.issue(
        db,
        token_hash=token_hash(token),
        link_id=link_id,
        message_id=message.id,
        content=seal(token, _MESSAGE, Sealed(message.message_content, message.created_at)),
        created_at=now,
        expires_at=expires_at,
    )
    return expires_at if written else None


async def post_with_receipt(
    posting: messages.Posting,
    *,
    site: str,
    link_id: str,
    content: str,
    address: IPAddress | None,
    idempotency_key: str | None = None,
    proof: str | None = None,
) -> MessageOut:
    """Post as ``messages.service.create_message`` does, with a receipt in the answer.

    The receipt is written once the post is admitted and before it is: if that fails,
    nothing is stored; if the post fails after, a receipt no one was given is left, to
    expire. Dropped or stored, the post takes the same steps.
    """
    token = secrets.token_urlsafe(TOKEN_BYTES)
    issued: dict[str, int] = {}

    async def before_write(message: MessageOut) -> None:
        expires_at = await _issue(posting.db, token, link_id, message)
        if expires_at is None:
            raise NotFound(NO_LINK)  # the link was deleted a moment ago
        issued[message.id] = expires_at

    message = await messages.create_message(
        posting,
        link_id=link_id,
        content=content,
        address=address,
        idempotency_key=idempotency_key,
        proof=proof,
        before_write=before_write,
    )
    if message.id not in issued:
        # The first answer to this Idempotency-Key, replayed: its receipt gets a new token
        # (the first one was presumably lost with that answer), unless it was used.
        token = secrets.token_urlsafe(TOKEN_BYTES)
        expires_at = await _issue(posting.db, token, link_id, message)
        if expires_at is None:
            return message
        issued[message.id] = expires_at
    receipt = ReceiptLink(
        token=token,
        url=receipt_url(site, token),
        expires_at=isoformat_us(issued[message.id]),
    )
    return msgspec.structs.replace(message, receipt=receipt)


async def _live(db: Database, token: str) -> tuple[Row, Row]:
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
    link = await messages_repository.posting_target(db, row["link_id"])
    if link is None:
        raise NotFound(_NO_RECEIPT)  # the link went a moment ago, and its receipts with it
    if link["disabled"]:
        raise LinkGone()
    return row, link


def _thread(sealed: Sealed, replies: list[ThreadReply]) -> ThreadMessage:
    return ThreadMessage(
        message_content=sealed.text,
        created_at=sealed.created_at,
        answered=bool(replies),
        replies=replies,
    )


async def receipt(db: Database, *, token: str) -> ReceiptOut:
    """What the token's holder may see: their own text, the creator's public replies
    (oldest first), and whether a follow-up may be sent now."""
    return (await receipt_of_link(db, token=token))[1]


async def receipt_of_link(db: Database, *, token: str) -> tuple[str, ReceiptOut]:
    """The receipt, and the id of the link it was sent to (for the receipt page)."""
    row, link = await _live(db, token)
    rows = await repository.replies(
        db,
        link_id=row["link_id"],
        message_id=row["message_id"],
        follow_up_id=row["follow_up_id"],
        limit=REPLIES_SHOWN,
    )
    replies: dict[str, list[ThreadReply]] = {}
    for reply in reversed(rows):
        replies.setdefault(reply["message_id"], []).append(
            ThreadReply(
                message_content=reply["content"], created_at=isoformat_us(reply["created_at"])
            )
        )
    message = _thread(unseal(token, _MESSAGE, row["content"]), replies.get(row["message_id"], []))
    follow_up = None
    if row["follow_up_content"] is not None:
        sealed = unseal(token, _FOLLOW_UP, row["follow_up_content"])
        follow_up = _thread(sealed, replies.get(row["follow_up_id"], []))
    return row["link_id"], ReceiptOut(
        message=message,
        follow_up=follow_up,
        can_follow_up=_can_follow_up(row, link),
        expires_at=isoformat_us(row["expires_at"]),
    )


def _can_follow_up(row: Row, link: Row) -> bool:
    return row["follow_up_id"] is None and bool(row["follow_ups"]) and not bool(link["paused"])


async def follow_up(
    posting: messages.Posting,
    *,
    token: str,
    content: str,
    address: IPAddress | None,
    proof: str | None = None,
) -> MessageOut:
    """Send the receipt's one follow-up: a new message in the creator's inbox, marked as
    following the original, through the same gate as any post (limits, flood, blocks,
    muted words, pause)."""
    db, gate = posting.db, posting.gate
    text = normalised_content(content)
    row, link = await _live(db, token)
    if link["paused"]:
        raise messages.LinkPaused("This link is not accepting messages right now")
    if not row["follow_ups"]:
        raise FollowUpsOff("The creator does not take follow-ups on this link")
    if row["follow_up_id"] is not None:
        raise FollowUpSent("This receipt's follow-up was already sent")
    link_id, original_id, owner_id = row["link_id"], row["message_id"], str(link["user_id"])
    admission = await gate.admit(
        db, owner_id=owner_id, link_id=link_id, address=address, text=text, proof=proof
    )
    # Asked every time, so that a follow-up takes the same steps whatever the answer.
    withheld, original_filtered = await repository.withheld(
        db, message_id=original_id, owner_id=owner_id
    )
    now = now_us()
    message = MessageOut(id=new_ulid(now), message_content=text, created_at=isoformat_us(now))
    # A follow-up to a message in the filtered folder joins it there (the creator may
    # restore both); to a dropped one, or one whose sender is blocked, it is dropped too.
    post = messages.post_row(
        admission,
        muted_mode=str(link["muted"]),
        message_id=message.id,
        link_id=link_id,
        text=text,
        now=now,
        withheld=withheld,
        filter_as_well=original_filtered,
    )
    sealed = seal(token, _FOLLOW_UP, Sealed(text, message.created_at))

    async def write() -> None:
        async with db.transaction() as tx:
            if not await repository.claim_follow_up(
                tx, token_hash=row["token_hash"], follow_up_id=message.id, content=sealed, now=now
            ):
                raise FollowUpSent("This receipt's follow-up was already sent")
            if not await messages_repository.insert_message(tx, db.dialect, post):
                raise NotFound(NO_LINK)  # the link was deleted a moment ago
            await repository.mark_follow_up(tx, message_id=message.id, original_id=original_id)

    # Dropped, filtered or stored, it answers when a stored one would have (``safety.pace``).
    inbox = isinstance(post, messages_repository.NewMessage)
    await posting.pace.write("follow-up", write(), inbox=inbox)
    return message


async def purge_expired(db: Database) -> int:
    """Delete expired receipts; how many. A chore of every instance, every
    ``PURGE_EVERY_SECONDS`` (``core.chores``): the delete is idempotent. An expired receipt
    already answers 404; this only frees the rows."""
    return await repository.purge(db, expired_before=now_us())
