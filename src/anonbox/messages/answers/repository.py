"""SQL of the published answers (``answers``, migration 0031). The row itself is written
with the message's first reply, in the reply's own statement (``messages.repository``)."""

from __future__ import annotations

from anonbox.core.database import Connection, Row


async def published(conn: Connection, *, link_id: str, answer_id: str) -> Row | None:
    """The answer ``answer_id`` of the link with its message as it is now (the message's
    columns NULL when it was deleted), or None for an id that was never one of the link's."""
    return await conn.fetchrow(
        "SELECT a.id AS answer_id, m.id, m.content, m.like_by_creator, m.created_at,"
        " m.reply_count FROM answers a"
        " LEFT JOIN messages m ON m.id = a.message_id AND m.link_id = a.link_id"
        " WHERE a.id = $1 AND a.link_id = $2",
        answer_id,
        link_id,
    )
