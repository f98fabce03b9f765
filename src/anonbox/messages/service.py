"""What can be done with messages, and the rules for doing it.

Link ownership is settled before these run (``links.dependencies.owned_link``), or, for
the creator's reply, like and reply deletion, checked in their own statement, which then
asks why it found nothing (``links.availability.require_owner``); every statement also
names the link, so a message of another link is not found.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import msgspec

from anonbox.core.client import ClientAddresses
from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Database, Row
from anonbox.core.errors import Conflict, NotFound, Unauthorized
from anonbox.core.groupcommit import GroupCommit
from anonbox.core.ids import new_ulid
from anonbox.links import repository as links_repository
from anonbox.links.availability import NO_LINK, LinkGone, missing_link, require_owner
from anonbox.messages import repository
from anonbox.messages.answers.service import new_answer_id
from anonbox.messages.content import normalised_content
from anonbox.messages.filtered import repository as filtered_repository
from anonbox.messages.likes import repository as likes_repository
from anonbox.messages.schemas import LikeState, MessageOut, ReplyOut
from anonbox.outbox import repository as events
from anonbox.outbox.schemas import Kind
from anonbox.receipts import service as receipts
from anonbox.receipts.schemas import ReceiptLink
from anonbox.safety import service as safety
from anonbox.safety.gate import Admission, Gate
from anonbox.safety.pace import WritePace
from anonbox.safety.schemas import BlockOut, IPAddress

_NO_MESSAGE = "No message with this id under this link"


class LinkPaused(Conflict):
    code = "link_paused"


class SignInRequired(Unauthorized):
    code = "sign_in_required"


SIGN_IN_REQUIRED = (
    "This link takes messages only from people signed in to anonbox: send a sign-in "
    "access token or an API key (you stay anonymous to the creator)"
)


class IdempotencyKeyReused(Conflict):
    code = "idempotency_key_reused"


class _AlreadyPosted(Exception):
    """A concurrent post with the same Idempotency-Key committed first."""


def _request_hash(link_id: str, text: str) -> str:
    return hashlib.sha256(f"{link_id}\n{text}".encode()).hexdigest()


def _replayed(original: Row, request_hash: str, text: str) -> MessageOut:
    if original["request_hash"] != request_hash:
        raise IdempotencyKeyReused("This Idempotency-Key was already used for a different message")
    return MessageOut(
        id=original["message_id"],
        message_content=text,
        created_at=isoformat_us(original["created_at"]),
    )


MessageWriter = GroupCommit[repository.Post, bool]


def message_writer(db: Database) -> MessageWriter:
    """Anonymous messages are written in groups: concurrent posts share one commit, the
    dropped ones included."""

    async def write(rows: Sequence[repository.Post]) -> list[bool]:
        return await repository.insert_posts(db, rows)

    return GroupCommit(write)


@dataclass(frozen=True, slots=True)
class Posting:
    """Everything an anonymous post goes through, one per process."""

    db: Database
    gate: Gate
    writer: MessageWriter
    # Who is posting: the process's one reader of the trusted proxies, carried here so the
    # post handlers keep to their one dependency (``messages.dependencies``).
    clients: ClientAddresses
    pace: WritePace = field(default_factory=WritePace)  # a drop answers when a store would


async def create_message(
    posting: Posting,
    *,
    link_id: str,
    content: str,
    address: IPAddress | None,
    idempotency_key: str | None = None,
    proof: str | None = None,
    receipt_site: str | None = None,
    account: Callable[[], Awaitable[str | None]] | None = None,
) -> MessageOut:
    """Store an anonymous message, keep it in the link's filtered folder, or drop it
    silently, as the gate and the link's ``muted`` setting say (see
    ``repository.FilteredMessage`` and ``repository.DroppedMessage``). The one way in for
    every anonymous post: the API's and the send page's, with a receipt or without.

    With an ``idempotency_key``, a retried post lands once and gets the first answer, but
    never a receipt: the first answer's receipt was given once, and a replay is answered
    without one (whoever replays cannot be told from the sender; ``docs/decisions.md``).
    ``proof`` is the sender's proof of work, needed while the link is under a flood
    (``safety.flood``). With a ``receipt_site`` (where people reach this service: the
    sender asked for a receipt), the answer carries a receipt (``receipts.service``),
    written once the post is admitted and before it is, stored or dropped alike: if that
    fails, nothing is stored; if the post fails after, a receipt no one was given is left,
    to expire.

    ``account`` tells the signed-in sender's user id (None: not signed in), asked only on
    a link for signed-in senders: there a post without one is refused (401
    ``sign_in_required``) before anything is counted or written, and the sender is known
    to the gate by their account's keyed hash (``safety.senders.identity_of``), never
    stored as such. On a link for anyone it is not asked: every sender is their network.
    """
    db, gate = posting.db, posting.gate
    text = normalised_content(content)
    target = await links_repository.posting_target(db, link_id)
    if target is None:
        raise await missing_link(db, link_id)
    if target["disabled"]:  # its account is being deleted: nothing is stored, not even a drop
        raise LinkGone()
    if target["paused"]:
        raise LinkPaused("This link is not accepting messages right now")
    sender_account = None
    if target["senders"] == "signed_in":
        sender_account = None if account is None else await account()
        if sender_account is None:
            raise SignInRequired(SIGN_IN_REQUIRED)
    request_hash = _request_hash(link_id, text)
    if idempotency_key is not None:
        original = await repository.idempotent_original(db, link_id=link_id, key=idempotency_key)
        if original is not None:
            return _replayed(original, request_hash, text)

    admission = await gate.admit(
        db,
        owner_id=target["user_id"],
        link_id=link_id,
        address=address,
        text=text,
        proof=proof,
        account=sender_account,
    )
    now = now_us()
    message = MessageOut(id=new_ulid(now), message_content=text, created_at=isoformat_us(now))
    receipt = None
    if receipt_site is not None:
        receipt = await _receipt_of(db, message, link_id, receipt_site)
        if receipt is None:
            raise NotFound(NO_LINK)  # the link was deleted a moment ago
    # A dropped message is written too, as a bare id under its link: the same path, the
    # same commit, so its id answers like a stored one's. A filtered one is a stored row in
    # the link's folder, without an event. Both cost less than a message in the inbox, so
    # both answer when such a message would have (``safety.pace``).
    row = post_row(
        admission,
        muted_mode=str(target["muted"]),
        message_id=message.id,
        link_id=link_id,
        text=text,
        now=now,
    )
    inbox = isinstance(row, repository.NewMessage)
    if idempotency_key is None:
        stored = await posting.pace.write("post", posting.writer.submit(row), inbox=inbox)
    else:
        try:
            stored = await posting.pace.write(
                "keyed post",
                _write_keyed(db, row, key=idempotency_key, request_hash=request_hash),
                inbox=inbox,
            )
        except _AlreadyPosted:
            # A replay that raced the first post: its answer, without a receipt (the one
            # issued above names a message never stored, and is left to expire unread).
            return await _first_answer(db, link_id, idempotency_key, request_hash, text)
    if not stored:
        raise NotFound(NO_LINK)  # the link was deleted a moment ago
    return message if receipt is None else msgspec.structs.replace(message, receipt=receipt)


async def _receipt_of(
    db: Database, message: MessageOut, link_id: str, site: str
) -> ReceiptLink | None:
    """A new receipt of ``message`` (``receipts.service.issue``)."""
    return await receipts.issue(
        db,
        site=site,
        link_id=link_id,
        message_id=message.id,
        text=message.message_content,
        created_at=message.created_at,
    )


async def _write_keyed(db: Database, row: repository.Post, *, key: str, request_hash: str) -> bool:
    """Remember the key's answer and write the post, in one transaction."""
    async with db.transaction() as tx:
        if not await repository.remember_idempotent(
            tx,
            link_id=row.link_id,
            key=key,
            request_hash=request_hash,
            message_id=row.id,
            created_at=row.created_at,
        ):
            raise _AlreadyPosted
        if not await repository.insert_message(tx, row):
            raise NotFound(NO_LINK)  # rolls the remembered key back too
    return True


def post_row(
    admission: Admission,
    *,
    muted_mode: str,
    message_id: str,
    link_id: str,
    text: str,
    now: int,
    withheld: bool = False,
    filter_as_well: bool = False,
) -> repository.Post:
    """What is written for an admitted post: dropped (a blocked sender, a muted word on a
    link set to drop, or ``withheld``), filtered (a muted word, or ``filter_as_well``), or
    stored."""
    if withheld or admission.dropped(muted_mode):
        return repository.DroppedMessage(id=message_id, link_id=link_id, created_at=now)
    sender = admission.sender
    fields = (
        message_id,
        link_id,
        text,
        now,
        sender.epoch if sender else None,
        sender.hash if sender else None,
        sender.network if sender else None,
    )
    if admission.filtered(muted_mode) or filter_as_well:
        return repository.FilteredMessage(*fields)
    return repository.NewMessage(*fields)


async def _first_answer(
    db: Database, link_id: str, key: str, request_hash: str, text: str
) -> MessageOut:
    original = await repository.idempotent_original(db, link_id=link_id, key=key)
    assert original is not None, "the conflicting record is committed"
    return _replayed(original, request_hash, text)


async def follow_up(
    posting: Posting,
    *,
    token: str,
    content: str,
    address: IPAddress | None,
    proof: str | None = None,
    account: Callable[[], Awaitable[str | None]] | None = None,
) -> MessageOut:
    """Send a receipt's one follow-up: a new message in the creator's inbox, marked as
    following the original, through the same gate as any post (limits, flood, blocks,
    muted words, pause). The receipt (``receipts.service``) is read, and spent in the
    follow-up's own transaction, by its token alone.

    On a link for signed-in senders a follow-up is a post like any other there: without a
    credential it is refused (401 ``sign_in_required``) before anything is counted, and
    its sender is known to the gate by their account, so that blocking it blocks the
    account and the account's blocks and limits hold for it (``create_message``)."""
    db, gate = posting.db, posting.gate
    text = normalised_content(content)
    row, link = await receipts.live(db, token)
    if link["paused"]:
        raise LinkPaused("This link is not accepting messages right now")
    receipts.require_follow_up(row)
    sender_account = None
    if link["senders"] == "signed_in":
        sender_account = None if account is None else await account()
        if sender_account is None:
            raise SignInRequired(SIGN_IN_REQUIRED)
    link_id, original_id, owner_id = row["link_id"], row["message_id"], str(link["user_id"])
    admission = await gate.admit(
        db,
        owner_id=owner_id,
        link_id=link_id,
        address=address,
        text=text,
        proof=proof,
        account=sender_account,
    )
    # Asked every time, so that a follow-up takes the same steps whatever the answer.
    withheld, original_filtered = await repository.withheld(
        db, message_id=original_id, owner_id=owner_id
    )
    now = now_us()
    message = MessageOut(id=new_ulid(now), message_content=text, created_at=isoformat_us(now))
    # A follow-up to a message in the filtered folder joins it there (the creator may
    # restore both); to a dropped one, or one whose sender is blocked, it is dropped too.
    post = post_row(
        admission,
        muted_mode=str(link["muted"]),
        message_id=message.id,
        link_id=link_id,
        text=text,
        now=now,
        withheld=withheld,
        filter_as_well=original_filtered,
    )
    sealed = receipts.seal_follow_up(token, text, message.created_at)

    async def write() -> None:
        async with db.transaction() as tx:
            await receipts.spend_follow_up(
                tx, token_hash=row["token_hash"], follow_up_id=message.id, sealed=sealed, now=now
            )
            if not await repository.insert_message(tx, post):
                raise NotFound(NO_LINK)  # the link was deleted a moment ago
            await repository.mark_follow_up(tx, message_id=message.id, original_id=original_id)

    # Dropped, filtered or stored, it answers when a stored one would have (``safety.pace``).
    inbox = isinstance(post, repository.NewMessage)
    await posting.pace.write("follow-up", write(), inbox=inbox)
    return message


ReplyWriter = GroupCommit[repository.NewReply, bool]


def reply_writer(db: Database) -> ReplyWriter:
    """The creator's replies are written in groups, as posts and likes are: replies that
    arrive while one batch commits go together in the next, one commit (one fsync) for
    all, and each answer still waits for the commit of its reply. One per process, built
    at start-up (``anonbox.wiring``)."""

    async def write(replies: Sequence[repository.NewReply]) -> list[bool]:
        return await repository.add_replies(db, replies)

    return GroupCommit(write)


async def reply(
    db: Database,
    replies: ReplyWriter,
    *,
    link_id: str,
    owner_id: str,
    message_id: str,
    content: str,
) -> ReplyOut:
    text = normalised_content(content)
    now = now_us()
    reply_id = new_ulid(now)
    if not await replies.submit(
        repository.NewReply(
            message_id=message_id,
            link_id=link_id,
            owner_id=owner_id,
            reply_id=reply_id,
            content=text,
            created_at=now,
            answer_id=new_answer_id(),
        )
    ):
        await require_owner(db, link_id, owner_id)
        raise NotFound(_NO_MESSAGE)
    return ReplyOut(
        message_id=message_id,
        reply_message_id=reply_id,
        message_content=text,
        created_at=isoformat_us(now),
    )


LikeWriter = GroupCommit[likes_repository.Toggle, bool | None]


def like_writer(db: Database) -> LikeWriter:
    """Likes are written in groups, as anonymous messages are: toggles that arrive while
    one commits go together in the next statement, so one commit (one fsync on SQLite)
    serves them all, and each answer still waits for the commit of its toggle. A like
    on a message many people watch is a hot row; one at a time, every toggle waited for
    the previous one's commit. One per process, built at start-up (``anonbox.wiring``)."""

    async def write(toggles: Sequence[likes_repository.Toggle]) -> list[bool | None]:
        return await likes_repository.toggle_likes(db, toggles)

    return GroupCommit(write)


async def toggle_like(
    db: Database, likes: LikeWriter, *, link_id: str, owner_id: str, message_id: str
) -> LikeState:
    liked = await likes.submit(likes_repository.Toggle(message_id, link_id, owner_id))
    if liked is None:
        await require_owner(db, link_id, owner_id)
        raise NotFound(_NO_MESSAGE)
    return LikeState(message_id=message_id, like_by_creator=liked)


async def delete_reply(
    db: Database, *, link_id: str, owner_id: str, message_id: str, reply_id: str
) -> None:
    if not await repository.remove_reply(
        db, link_id=link_id, owner_id=owner_id, message_id=message_id, reply_id=reply_id
    ):
        await require_owner(db, link_id, owner_id)
        raise NotFound("No reply with this id under this message")


async def delete_message(db: Database, *, link_id: str, message_id: str) -> None:
    async with db.transaction() as tx:
        if not await repository.delete_message(tx, link_id=link_id, message_id=message_id):
            raise NotFound(_NO_MESSAGE)
        await events.record(
            tx,
            kind=Kind.MESSAGE_DELETED,
            link_id=link_id,
            message_id=message_id,
            reply_id=None,
            created_at=now_us(),
        )


async def delete_unanswered(db: Database, *, link_id: str) -> int:
    """Delete every unanswered message of the link, the filtered folder's included (a
    message there cannot be answered); how many."""
    async with db.transaction() as tx:
        stored = await repository.delete_unanswered(tx, link_id=link_id, now=now_us())
        return stored + await filtered_repository.empty(tx, link_id=link_id)


async def block_sender(
    db: Database, *, owner_id: str, link_id: str, message_id: str, network: bool
) -> BlockOut:
    """Block whoever sent this message of ``link_id`` from all of ``owner_id``'s links: the
    sender as the message names them, and the block, in one transaction."""
    async with db.transaction() as tx:
        target = await safety.sender_of(tx, message_id=message_id, link_id=link_id)
        return await safety.block(tx, owner_id=owner_id, target=target, network=network)
