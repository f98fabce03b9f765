"""Reports from anyone, and what an admin does about them.

A report keeps an excerpt of the message, so it still reads after the message is
deleted. Admin actions reach every message under every link: no ownership applies,
the ``admin`` dependency has already decided who may call them.
"""

from __future__ import annotations

from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Connection, Database, Row
from anonbox.core.errors import Conflict, NotFound
from anonbox.core.ids import new_ulid
from anonbox.core.ratelimit import Limit
from anonbox.messages.content import normalised_content
from anonbox.moderation import repository
from anonbox.moderation.schemas import (
    Action,
    ReportOut,
    ReportPage,
    ReportReceipt,
    ReportStatus,
)
from anonbox.notifications import repository as events
from anonbox.safety.blocks import BlockOut, MessageSender, block, sender_of
from anonbox.safety.gate import Gate
from anonbox.safety.senders import IPAddress


class AlreadyResolved(Conflict):
    code = "already_resolved"


async def report_message(
    db: Database,
    gate: Gate,
    *,
    link_id: str,
    message_id: str,
    reason: str,
    address: IPAddress | None,
    limit: Limit,
) -> ReportReceipt:
    """Report a message. Only a report on a message that is there counts against the
    reporter's own limit: reports on made-up ids cost nobody anything, and reports never
    count against the link's limit on messages."""
    text = normalised_content(reason, field="reason")
    kind = await repository.reportable(db, link_id=link_id, message_id=message_id)
    if kind is None:
        raise NotFound("No message with this id under this link")
    await gate.throttle_client(db, address=address, limit=limit)
    now = now_us()
    report_id = new_ulid(now)
    # A dropped message is reported as if it were stored, but only counted: its sender
    # must not learn from the answer that it was dropped, and nobody has it to act on.
    if kind == "dropped":
        counted = await repository.count_report_on_dropped(
            db, link_id=link_id, message_id=message_id
        )
    else:
        async with db.transaction() as tx:  # the report and its event, or neither
            counted = await repository.insert_report(
                tx,
                report_id=report_id,
                link_id=link_id,
                message_id=message_id,
                reason=text,
                created_at=now,
            )
            if counted:  # the creator hears that it was reported, never by whom or why
                await events.record(
                    tx,
                    db.dialect,
                    kind=events.MESSAGE_REPORTED,
                    link_id=link_id,
                    message_id=message_id,
                    reply_id=None,
                    created_at=now,
                )
    if not counted:  # deleted a moment ago
        raise NotFound("No message with this id under this link")
    return ReportReceipt(id=report_id, status="open")


def _report_out(row: Row) -> ReportOut:
    resolved_at = row["resolved_at"]
    return ReportOut(
        id=row["id"],
        message_id=row["message_id"],
        link_id=row["link_id"],
        message_excerpt=row["message_excerpt"],
        reason=row["reason"],
        status=row["status"],
        resolution=row["resolution"],
        created_at=isoformat_us(row["created_at"]),
        resolved_at=None if resolved_at is None else isoformat_us(resolved_at),
    )


async def reports(
    db: Database, *, status: ReportStatus, cursor: str | None, limit: int
) -> ReportPage:
    rows = await repository.reports_page(db, status=status, before=cursor, limit=limit + 1)
    next_cursor = str(rows[limit - 1]["id"]) if len(rows) > limit else None
    return ReportPage(items=[_report_out(row) for row in rows[:limit]], next_cursor=next_cursor)


async def _sender(db: Database, message_id: str) -> MessageSender:
    try:
        return await sender_of(db, message_id=message_id, link_id=None)
    except NotFound:
        raise NotFound("No message with this id") from None


async def _reported_sender(db: Database, message_id: str | None) -> MessageSender:
    gone = Conflict("The reported message is gone: its sender can no longer be recognised")
    if message_id is None:
        raise gone
    try:
        return await sender_of(db, message_id=message_id, link_id=None)
    except NotFound:
        raise gone from None


async def _delete_message(
    conn: Connection, *, message_id: str, resolution: Action, admin_id: str, now: int
) -> bool:
    # Once the message is gone there is nothing left to decide on the other reports about it.
    await repository.resolve_all_about(
        conn, message_id=message_id, resolution=resolution, resolved_by=admin_id, resolved_at=now
    )
    return await repository.delete_message(conn, message_id)


async def resolve(db: Database, *, report_id: str, action: Action, admin_id: str) -> ReportOut:
    """Close an open report with ``action``; a report is resolved once (409 after that)."""
    current = await repository.report(db, report_id)
    if current is None:
        raise NotFound("No report with this id")
    if current["status"] != "open":
        raise AlreadyResolved("This report is already resolved")
    if action == "block_sender":
        # Before the message goes: its sender is known only through it. If another admin
        # resolves the report meanwhile, the block stands (it was asked for) and this is a 409.
        await block(db, owner_id=None, target=await _reported_sender(db, current["message_id"]))
    now = now_us()
    async with db.transaction() as tx:
        claimed = await repository.resolve(
            tx, report_id=report_id, resolution=action, resolved_by=admin_id, resolved_at=now
        )
        if claimed is None:
            raise AlreadyResolved("This report is already resolved")
        if action != "dismiss" and claimed["message_id"] is not None:
            await _delete_message(
                tx, message_id=claimed["message_id"], resolution=action, admin_id=admin_id, now=now
            )
    resolved = await repository.report(db, report_id)
    assert resolved is not None, "reports are never deleted"
    return _report_out(resolved)


async def delete_message(db: Database, *, message_id: str, admin_id: str) -> None:
    """Delete any message, under any link, with its replies."""
    async with db.transaction() as tx:
        if not await _delete_message(
            tx, message_id=message_id, resolution="delete_message", admin_id=admin_id, now=now_us()
        ):
            raise NotFound("No message with this id")


async def block_sender(db: Database, *, message_id: str) -> BlockOut:
    """Block the sender of any message on every link; the message itself stays."""
    return await block(db, owner_id=None, target=await _sender(db, message_id))
