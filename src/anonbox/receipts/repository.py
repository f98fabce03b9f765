"""SQL for receipts. A receipt is found by its token's hash only; nothing here is ever
looked up from a message, so no creator-side query can tell which messages have one."""

from __future__ import annotations

from collections.abc import Sequence

from anonbox.core.database import Connection, Row

# A message has one receipt, never replaced: a second one for the same message would take
# the first one's place (a replayed post may come from anyone holding its key and text).
_ISSUE = (
    "INSERT INTO receipts (token_hash, link_id, message_id, content, created_at, expires_at)"
    " SELECT $1, id, $3, $4, $5, $6 FROM links WHERE id = $2"
    " ON CONFLICT (message_id) DO NOTHING"
)


async def issue(
    conn: Connection,
    *,
    token_hash: str,
    link_id: str,
    message_id: str,
    content: str,
    created_at: int,
    expires_at: int,
) -> bool:
    """False when there is no such link, or the message has a receipt already."""
    written = await conn.execute(
        _ISSUE, token_hash, link_id, message_id, content, created_at, expires_at
    )
    return written == 1


async def receipt(conn: Connection, token_hash: str) -> Row | None:
    """The receipt with this hash, and whether its link takes follow-ups."""
    return await conn.fetchrow(
        "SELECT r.token_hash, r.link_id, r.message_id, r.content, r.follow_up_id,"
        " r.follow_up_content, r.expires_at, l.follow_ups"
        " FROM receipts r JOIN links l ON l.id = r.link_id WHERE r.token_hash = $1",
        token_hash,
    )


async def replies(
    conn: Connection, *, link_id: str, message_id: str, follow_up_id: str | None, limit: int
) -> Sequence[Row]:
    """The newest replies to the message and its follow-up, each with its message's
    answer id (one statement whether or not there is a follow-up, or a message at all: a
    dropped one has none)."""
    return await conn.fetch(
        "SELECT r.message_id, r.content, r.created_at, p.id AS answer_id FROM replies r"
        " JOIN messages m ON m.id = r.message_id LEFT JOIN answers p ON p.message_id = m.id"
        " WHERE m.link_id = $1 AND r.message_id IN ($2, $3)"
        " ORDER BY r.id DESC LIMIT $4",
        link_id,
        message_id,
        follow_up_id,
        limit,
    )


async def claim_follow_up(
    conn: Connection, *, token_hash: str, follow_up_id: str, content: str, now: int
) -> bool:
    """Spend the receipt's one follow-up; False when it is spent (or expired) already."""
    claimed = await conn.execute(
        "UPDATE receipts SET follow_up_id = $2, follow_up_content = $3"
        " WHERE token_hash = $1 AND follow_up_id IS NULL AND expires_at > $4",
        token_hash,
        follow_up_id,
        content,
        now,
    )
    return claimed == 1


async def purge(conn: Connection, *, expired_before: int) -> int:
    return await conn.execute("DELETE FROM receipts WHERE expires_at <= $1", expired_before)
