"""SQL of a followable link's answers as its Notes: each reply to one of its messages
(every reply is published on its answer page), with what the Note carries of its link:
the content warning (``crosspost_cw``, the one a link has), the language (the link's,
else its creator's) and how it is addressed (``federation_visibility``, NULL: public).
Newest first by reply id (a ULID: its time first). Both dialects read every statement."""

from __future__ import annotations

from collections.abc import Sequence

from anonbox.core.database import Connection, Row, placeholders

_ANSWER = (
    "SELECT r.id AS reply_id, r.content AS answer, r.created_at AS answered_at,"
    " m.id AS message_id, m.content AS question, l.id AS link_id, l.prompt,"
    " l.crosspost_cw AS warning, l.language, u.language AS creator_language,"
    " l.federation_visibility AS visibility, a.id AS answer_id"
    " FROM replies r JOIN messages m ON m.id = r.message_id JOIN links l ON l.id = m.link_id"
    " JOIN users u ON u.id = l.user_id"
    " LEFT JOIN answers a ON a.message_id = m.id"
)


async def answers(conn: Connection, reply_ids: Sequence[str]) -> Sequence[Row]:
    if not reply_ids:
        return []
    return await conn.fetch(
        _ANSWER + f" WHERE r.id IN ({placeholders(1, len(reply_ids))})",
        *reply_ids,
    )


async def answer(conn: Connection, *, link_id: str, reply_id: str) -> Row | None:
    """One answer of the link, while it exists (sent to followers or not)."""
    return await conn.fetchrow(_ANSWER + " WHERE m.link_id = $1 AND r.id = $2", link_id, reply_id)


async def newest(
    conn: Connection, link_id: str, *, before: str | None, limit: int
) -> Sequence[Row]:
    """The link's answers, newest first, older than the reply ``before`` if given."""
    if before is None:
        return await conn.fetch(
            _ANSWER + " WHERE m.link_id = $1 ORDER BY r.id DESC LIMIT $2", link_id, limit
        )
    return await conn.fetch(
        _ANSWER + " WHERE m.link_id = $1 AND r.id < $2 ORDER BY r.id DESC LIMIT $3",
        link_id,
        before,
        limit,
    )


async def count(conn: Connection, link_id: str) -> int:
    row = await conn.fetchrow(
        "SELECT COUNT(*) AS n FROM replies r JOIN messages m ON m.id = r.message_id"
        " WHERE m.link_id = $1",
        link_id,
    )
    return 0 if row is None else int(row["n"])


async def link_visibility(conn: Connection, link_id: str) -> str | None:
    row = await conn.fetchrow("SELECT federation_visibility FROM links WHERE id = $1", link_id)
    return None if row is None else row["federation_visibility"]
