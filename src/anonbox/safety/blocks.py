"""Blocking "whoever sent this message", by a creator or site-wide by an admin.

A block holds the sender's keyed hash under the period the message was sent in, and
the message's id and excerpt so its owner knows what they blocked; it never shows the
hash. Each block is about its own message: blocking a second message of a sender who is
already blocked makes a second block, so no answer tells that the two share a sender.
When a blocked sender posts again, their blocks are re-keyed to the current period, so
a sender who keeps trying stays blocked across key rotation.

A block may also cover the sender's whole network (``network``: the IPv4 /24 or IPv6 /48
around them, ``senders.network_of_block``), for a sender who rotates addresses; it is
kept as that network's keyed hash, and is a block of its own beside the sender's.

A block applies to the messages already waiting too: in the block's transaction, the
sender's (or network's) unanswered messages of the same key period move to their links'
filtered folders, on the creator's links or, for a site-wide block, on every link
(found by index; a sender's messages of one period are few, their rate being limited).
Answered messages stay; across periods a sender cannot be recognised, by design.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Connection, Database, Row
from anonbox.core.envelope import Timestamp
from anonbox.core.errors import Conflict, NotFound
from anonbox.core.ids import new_ulid
from anonbox.messages.filtered import repository as filtered_repository
from anonbox.safety.senders import IPAddress, SenderId, SenderKeys

_EXCERPT_CHARACTERS = 120
_BLOCK_COLUMNS = "SELECT id, message_excerpt, created_at, network FROM blocks"


class BlockOut(msgspec.Struct):
    id: str
    message_excerpt: str
    created_at: Timestamp
    site_wide: bool
    network: bool = False  # the sender's whole network, not only the sender


class BlockList(msgspec.Struct):
    items: list[BlockOut]


@dataclass(frozen=True, slots=True)
class MessageSender:
    message_id: str
    excerpt: str
    sender: SenderId

    @property
    def sender_key(self) -> tuple[int, str]:
        return self.sender.epoch, self.sender.hash


async def sender_of(conn: Connection, *, message_id: str, link_id: str | None) -> MessageSender:
    """The sender of a message (under ``link_id`` when given), as far as it is still known."""
    # In the inbox, or in the filtered folder (where a block moves a sender's waiting
    # messages): a message there can be blocked as well.
    columns = "content, sender_epoch, sender_hash, sender_network_hash"
    where = "id = $1" if link_id is None else "id = $1 AND link_id = $2"
    sql = (
        f"SELECT {columns} FROM messages WHERE {where}"  # noqa: S608 - constant clauses
        f" UNION ALL SELECT {columns} FROM filtered_messages WHERE {where}"
    )
    row = await (
        conn.fetchrow(sql, message_id, link_id)
        if link_id is not None
        else conn.fetchrow(sql, message_id)
    )
    if row is None:
        raise NotFound("No message with this id under this link")
    if row["sender_hash"] is None:
        raise Conflict("This message is too old: its sender can no longer be recognised")
    return MessageSender(
        message_id=message_id,
        excerpt=row["content"][:_EXCERPT_CHARACTERS],
        sender=SenderId(
            epoch=row["sender_epoch"], hash=row["sender_hash"], network=row["sender_network_hash"]
        ),
    )


async def block(
    db: Connection,
    *,
    dialect: str,
    owner_id: str | None,
    target: MessageSender,
    network: bool = False,
) -> BlockOut:
    """Block the sender of this message (or with ``network``, their whole network) for
    ``owner_id``'s links, or everywhere when ``owner_id`` is None, and move their waiting
    messages to the filtered folders (run it in a transaction). Blocking one message
    twice the same way answers with the same block."""
    sender_hash = target.sender.network if network else target.sender.hash
    if sender_hash is None:
        raise Conflict("This message is too old: its sender's network can no longer be recognised")
    await filtered_repository.move_from_sender(
        db,
        dialect,
        owner_id=owner_id,
        sender_epoch=target.sender.epoch,
        sender_hash=sender_hash,
        network=network,
        now=now_us(),
    )
    scope = "user_id IS NULL" if owner_id is None else "user_id = $3"
    existing = await db.fetchrow(
        f"{_BLOCK_COLUMNS} WHERE {scope} AND message_id = $1 AND network = $2",
        target.message_id,
        network,
        *([] if owner_id is None else [owner_id]),
    )
    if existing is not None:
        return _block_out(existing, site_wide=owner_id is None)
    now = now_us()
    block_id = new_ulid(now)
    await db.execute(
        "INSERT INTO blocks (id, user_id, message_id, sender_epoch, sender_hash,"
        " message_excerpt, created_at, network) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        block_id,
        owner_id,
        target.message_id,
        target.sender.epoch,
        sender_hash,
        target.excerpt,
        now,
        network,
    )
    return BlockOut(
        id=block_id,
        message_excerpt=target.excerpt,
        created_at=isoformat_us(now),
        site_wide=owner_id is None,
        network=network,
    )


def _block_out(row: Row, *, site_wide: bool) -> BlockOut:
    return BlockOut(
        id=row["id"],
        message_excerpt=row["message_excerpt"],
        created_at=isoformat_us(row["created_at"]),
        site_wide=site_wide,
        network=bool(row["network"]),
    )


async def blocks_of(db: Database, *, owner_id: str) -> BlockList:
    rows = await db.fetch(_BLOCK_COLUMNS + " WHERE user_id = $1 ORDER BY id DESC", owner_id)
    return BlockList(items=[_block_out(row, site_wide=False) for row in rows])


async def unblock(db: Database, *, owner_id: str, block_id: str) -> None:
    if not await db.execute(
        "DELETE FROM blocks WHERE id = $1 AND user_id = $2", block_id, owner_id
    ):
        raise NotFound("No block with this id among yours")


async def is_blocked(
    db: Database, keys: SenderKeys, *, owner_id: str, address: IPAddress, current: SenderId
) -> bool:
    """Whether this sender, or their network, is blocked by the link's owner or site-wide."""
    rows = await db.fetch(
        "SELECT id, sender_epoch, sender_hash, network FROM blocks"
        " WHERE user_id = $1 OR user_id IS NULL",
        owner_id,
    )
    # Per period: the sender's hash and their network's, as each block of that period has it.
    hashes: dict[int, tuple[str, str | None] | None] = {
        current.epoch: (current.hash, current.network)
    }
    blocked = False
    for row in rows:
        epoch = row["sender_epoch"]
        if epoch not in hashes:
            key = await keys.key(db, epoch)
            hashes[epoch] = (
                None
                if key is None
                else (keys.hash_with(key, address), keys.network_hash_with(key, address))
            )
        known = hashes[epoch]
        is_network = bool(row["network"])
        if known is not None and known[is_network] == row["sender_hash"]:
            blocked = True
            if epoch != current.epoch:  # every block of this sender follows them
                await db.execute(
                    "UPDATE blocks SET sender_epoch = $2, sender_hash = $3 WHERE id = $1",
                    row["id"],
                    current.epoch,
                    current.network if is_network else current.hash,
                )
    return blocked
