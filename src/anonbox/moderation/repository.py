"""SQL for reports, the admin's reach over every message, the site's muted phrases and
the admins' audit log."""

from __future__ import annotations

from collections.abc import Sequence

from anonbox.core.database import Connection, Row, placeholders

EXCERPT_CHARACTERS = 200


async def insert_report(
    conn: Connection,
    *,
    report_id: str,
    link_id: str,
    message_id: str,
    reason: str,
    created_at: int,
) -> bool:
    """Report a message under ``link_id``, keeping an excerpt that outlives it.

    False when there is no such message under that link.
    """
    inserted = await conn.execute(
        "INSERT INTO reports (id, message_id, message_excerpt, reason, status, created_at)"
        " SELECT $1, id, substr(content, 1, $6), $4, 'open', $5"
        " FROM messages WHERE id = $2 AND link_id = $3",
        report_id,
        message_id,
        link_id,
        reason,
        created_at,
        EXCERPT_CHARACTERS,
    )
    return inserted == 1


async def insert_report_on_filtered(
    conn: Connection,
    *,
    report_id: str,
    link_id: str,
    message_id: str,
    reason: str,
    created_at: int,
) -> bool:
    """Report a message waiting in its link's filtered folder: kept with its excerpt, not
    tied to the message (``reports.message_id`` refers to inbox messages only). False when
    it is not there."""
    inserted = await conn.execute(
        "INSERT INTO reports (id, message_id, message_excerpt, reason, status, created_at)"
        " SELECT $1, NULL, substr(content, 1, $6), $4, 'open', $5"
        " FROM filtered_messages WHERE id = $2 AND link_id = $3",
        report_id,
        message_id,
        link_id,
        reason,
        created_at,
        EXCERPT_CHARACTERS,
    )
    return inserted == 1


async def reportable(conn: Connection, *, link_id: str, message_id: str) -> str | None:
    """ "stored", "filtered" or "dropped" for a message of this link anyone may report;
    else None."""
    row = await conn.fetchrow(
        "SELECT 'stored' AS kind FROM messages WHERE id = $1 AND link_id = $2"
        " UNION ALL SELECT 'filtered' FROM filtered_messages WHERE id = $1 AND link_id = $2"
        " UNION ALL SELECT 'dropped' FROM dropped_messages WHERE id = $1 AND link_id = $2",
        message_id,
        link_id,
    )
    return None if row is None else str(row["kind"])


async def count_report_on_dropped(conn: Connection, *, link_id: str, message_id: str) -> bool:
    """Count a report on a message its link dropped; False when no such message was
    dropped. A write, as a stored report is: the answer takes as long."""
    counted = await conn.execute(
        "UPDATE dropped_messages SET reports = reports + 1 WHERE id = $1 AND link_id = $2",
        message_id,
        link_id,
    )
    return counted == 1


# The link comes from the message while it exists: reports do not keep it, so a
# deleted message leaves nothing behind that ties the report to a creator.
_REPORTS = (
    "SELECT r.id, r.message_id, m.link_id, r.message_excerpt, r.reason, r.status,"
    " r.resolution, r.created_at, r.resolved_at"
    " FROM reports r LEFT JOIN messages m ON m.id = r.message_id"
)


async def report(conn: Connection, report_id: str) -> Row | None:
    return await conn.fetchrow(_REPORTS + " WHERE r.id = $1", report_id)


async def reports_page(
    conn: Connection, *, status: str, before: str | None, limit: int
) -> Sequence[Row]:
    """Newest first, from just before the cursor id; walks (status, id), never OFFSET."""
    if before is None:
        return await conn.fetch(
            _REPORTS + " WHERE r.status = $1 ORDER BY r.id DESC LIMIT $2", status, limit
        )
    return await conn.fetch(
        _REPORTS + " WHERE r.status = $1 AND r.id < $3 ORDER BY r.id DESC LIMIT $2",
        status,
        limit,
        before,
    )


async def resolve(
    conn: Connection, *, report_id: str, resolution: str, resolved_by: str, resolved_at: int
) -> Row | None:
    """Close an open report in one statement, so two admins cannot both resolve it.

    Returns the message it is about (its id may be None); None when it was not open.
    """
    return await conn.fetchrow(
        "UPDATE reports SET status = 'resolved', resolution = $2, resolved_by = $3,"
        " resolved_at = $4 WHERE id = $1 AND status = 'open' RETURNING message_id",
        report_id,
        resolution,
        resolved_by,
        resolved_at,
    )


async def resolve_all_about(
    conn: Connection, *, message_id: str, resolution: str, resolved_by: str, resolved_at: int
) -> int:
    """Close every open report about a message that is being deleted."""
    return await conn.execute(
        "UPDATE reports SET status = 'resolved', resolution = $2, resolved_by = $3,"
        " resolved_at = $4 WHERE message_id = $1 AND status = 'open'",
        message_id,
        resolution,
        resolved_by,
        resolved_at,
    )


async def delete_message(conn: Connection, message_id: str) -> str | None:
    """Delete a message wherever it is, in an inbox or a filtered folder; its replies go
    with it (ON DELETE CASCADE).

    Returns the link it was under; None when there was no such message.
    """
    row = await conn.fetchrow("DELETE FROM messages WHERE id = $1 RETURNING link_id", message_id)
    if row is None:
        row = await conn.fetchrow(
            "DELETE FROM filtered_messages WHERE id = $1 RETURNING link_id", message_id
        )
    return None if row is None else str(row["link_id"])


async def latest_replies(
    conn: Connection, message_ids: Sequence[str], *, per_message: int
) -> Sequence[Row]:
    """The newest ``per_message`` replies of each message, by message then newest first."""
    if not message_ids:
        return []
    return await conn.fetch(
        "SELECT message_id, id, content, created_at FROM ("  # noqa: S608 - placeholders only
        " SELECT message_id, id, content, created_at,"
        " row_number() OVER (PARTITION BY message_id ORDER BY id DESC) AS place"
        f" FROM replies WHERE message_id IN ({placeholders(2, len(message_ids))})"
        ") newest WHERE place <= $1 ORDER BY message_id, id DESC",
        per_message,
        *message_ids,
    )


# --- the site's muted phrases ------------------------------------------------------------


async def insert_muted_phrase(
    conn: Connection,
    *,
    phrase_id: str,
    phrase: str,
    normalized: str,
    created_at: int,
    most: int,
) -> bool:
    """Add a phrase unless it is there already or the list holds ``most``."""
    inserted = await conn.execute(
        "INSERT INTO muted_phrases (id, phrase, normalized, created_at)"
        " SELECT $1, $2, $3, $4 WHERE (SELECT count(*) FROM muted_phrases) < $5"
        " ON CONFLICT (normalized) DO NOTHING",
        phrase_id,
        phrase,
        normalized,
        created_at,
        most,
    )
    return inserted == 1


async def muted_phrase_exists(conn: Connection, normalized: str) -> bool:
    row = await conn.fetchrow("SELECT 1 FROM muted_phrases WHERE normalized = $1", normalized)
    return row is not None


async def muted_phrases(conn: Connection) -> Sequence[Row]:
    return await conn.fetch("SELECT id, phrase, created_at FROM muted_phrases ORDER BY id DESC")


async def delete_muted_phrase(conn: Connection, phrase_id: str) -> str | None:
    """Remove a phrase; the phrase it was, or None when there was none with this id."""
    row = await conn.fetchrow("DELETE FROM muted_phrases WHERE id = $1 RETURNING phrase", phrase_id)
    return None if row is None else str(row["phrase"])


# --- the audit log -------------------------------------------------------------------------


async def insert_audit(
    conn: Connection,
    *,
    audit_id: str,
    admin_id: str,
    action: str,
    target_id: str,
    detail: str,
    created_at: int,
) -> None:
    await conn.execute(
        "INSERT INTO admin_audit (id, admin_id, action, target_id, detail, created_at)"
        " VALUES ($1, $2, $3, $4, $5, $6)",
        audit_id,
        admin_id,
        action,
        target_id,
        detail,
        created_at,
    )


_AUDIT = "SELECT id, admin_id, action, target_id, detail, created_at FROM admin_audit"


async def audit_page(conn: Connection, *, before: str | None, limit: int) -> Sequence[Row]:
    """Newest first, from just before the cursor id."""
    if before is None:
        return await conn.fetch(_AUDIT + " ORDER BY id DESC LIMIT $1", limit)
    return await conn.fetch(_AUDIT + " WHERE id < $2 ORDER BY id DESC LIMIT $1", limit, before)
