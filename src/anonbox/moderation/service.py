"""Reports from anyone, and what an admin does about them.

A report keeps an excerpt of the message, so it still reads after the message is
deleted. Admin actions reach every message under every link: no ownership applies,
the ``admin`` dependency has already decided who may call them.

Every admin action (resolving a report, deleting a message, blocking a sender, adding or
removing a muted phrase) writes one row of the audit log in its own transaction: the
admin, the action, the row acted on, a short detail, the time. Nothing in it identifies
a sender: a block is named by its id and the message's, never by the sender's hash.
"""

from __future__ import annotations

import msgspec

from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Connection, Database, Row, one_at_a_time
from anonbox.core.errors import Conflict, NotFound
from anonbox.core.ids import new_ulid
from anonbox.core.ratelimit import Limit
from anonbox.links.availability import live_link_owner
from anonbox.messages.content import normalised_content
from anonbox.messages.filtered.service import move_muted
from anonbox.moderation import repository
from anonbox.moderation.schemas import (
    Action,
    AuditAction,
    AuditEntry,
    AuditPage,
    ContextReply,
    MutedPhraseList,
    MutedPhraseOut,
    QueuedReport,
    ReportOut,
    ReportPage,
    ReportQueue,
    ReportReceipt,
    ReportStatus,
)
from anonbox.outbox import repository as events
from anonbox.outbox.schemas import Kind
from anonbox.safety.gate import Gate
from anonbox.safety.matching import Matcher
from anonbox.safety.schemas import BlockOut, IPAddress, MessageSender
from anonbox.safety.service import (
    MAX_MUTED_WORDS,
    block,
    checked_word,
    muted_list_changed,
    sender_of,
)

# The site's list is held to the size of a creator's.
MAX_MUTED_PHRASES = MAX_MUTED_WORDS
CONTEXT_REPLIES = 5  # the newest replies shown with a report in the queue


class AlreadyResolved(Conflict):
    code = "already_resolved"


class TooManyMutedPhrases(Conflict):
    code = "too_many_muted_phrases"


async def _audit(
    conn: Connection,
    *,
    admin_id: str,
    action: AuditAction,
    target_id: str,
    detail: str,
    now: int,
) -> None:
    await repository.insert_audit(
        conn,
        audit_id=new_ulid(now),
        admin_id=admin_id,
        action=action,
        target_id=target_id,
        detail=detail,
        created_at=now,
    )


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
    # A deleted link, or one whose account is being deleted, takes no reports: gone, as
    # for a post (its messages are on their way out, and nobody is there to act on them).
    await live_link_owner(db, link_id)
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
    elif kind == "filtered":
        # Kept, as a stored one's is, for the admins; the creator is not told (they were
        # not told of the message either).
        counted = await repository.insert_report_on_filtered(
            db,
            report_id=report_id,
            link_id=link_id,
            message_id=message_id,
            reason=text,
            created_at=now,
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
                    kind=Kind.MESSAGE_REPORTED,
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
        message_id=row["message_id"] or msgspec.UNSET,
        link_id=row["link_id"] or msgspec.UNSET,
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


async def queue(db: Database, *, cursor: str | None, limit: int) -> ReportQueue:
    """Open reports, newest first, each with its message's newest replies."""
    page = await reports(db, status="open", cursor=cursor, limit=limit)
    message_ids = sorted({r.message_id for r in page.items if isinstance(r.message_id, str)})
    replies: dict[str, list[ContextReply]] = {}
    for row in await repository.latest_replies(db, message_ids, per_message=CONTEXT_REPLIES):
        replies.setdefault(row["message_id"], []).append(
            ContextReply(
                id=row["id"], content=row["content"], created_at=isoformat_us(row["created_at"])
            )
        )
    return ReportQueue(
        items=[
            QueuedReport(report=r, replies=replies.get(r.message_id or "", [])) for r in page.items
        ],
        next_cursor=page.next_cursor,
    )


async def _sender(conn: Connection, message_id: str) -> MessageSender:
    try:
        return await sender_of(conn, message_id=message_id, link_id=None)
    except NotFound:
        raise NotFound("No message with this id") from None


async def _reported_sender(conn: Connection, message_id: str | None) -> MessageSender:
    gone = Conflict("The reported message is gone: its sender can no longer be recognised")
    if message_id is None:
        raise gone
    try:
        return await sender_of(conn, message_id=message_id, link_id=None)
    except NotFound:
        raise gone from None


async def _delete_message(
    conn: Connection, *, message_id: str, resolution: Action, admin_id: str, now: int
) -> str | None:
    """Delete the message; the link it was under, or None when it was not there."""
    # Once the message is gone there is nothing left to decide on the other reports about it.
    await repository.resolve_all_about(
        conn, message_id=message_id, resolution=resolution, resolved_by=admin_id, resolved_at=now
    )
    return await repository.delete_message(conn, message_id)


async def resolve(db: Database, *, report_id: str, action: Action, admin_id: str) -> ReportOut:
    """Close an open report with ``action``; a report is resolved once (409 after that).

    Everything it does (the block, the deletion, the report's new state, the audit row)
    happens in one transaction, or nothing does.
    """
    current = await repository.report(db, report_id)
    if current is None:
        raise NotFound("No report with this id")
    if current["status"] != "open":
        raise AlreadyResolved("This report is already resolved")
    now = now_us()
    async with db.transaction() as tx:
        claimed = await repository.resolve(
            tx, report_id=report_id, resolution=action, resolved_by=admin_id, resolved_at=now
        )
        if claimed is None:
            raise AlreadyResolved("This report is already resolved")
        message_id = claimed["message_id"]
        detail: str = action
        if action == "block_sender":
            target = await _reported_sender(tx, message_id)
            # Before the message goes: its sender is known only through it. (The block
            # moves nothing: the deletion below closes the other reports about it.)
            blocked = await block(
                tx,
                owner_id=None,
                target=target,
            )
            detail += f"; site-wide block {blocked.id}"
        if action != "dismiss" and message_id is not None:
            await _delete_message(
                tx, message_id=message_id, resolution=action, admin_id=admin_id, now=now
            )
        if message_id is not None:
            detail += f"; message {message_id}"
        await _audit(
            tx,
            admin_id=admin_id,
            action="report.resolve",
            target_id=report_id,
            detail=detail,
            now=now,
        )
    resolved = await repository.report(db, report_id)
    assert resolved is not None, "reports are never deleted"
    return _report_out(resolved)


async def delete_message(db: Database, *, message_id: str, admin_id: str) -> None:
    """Delete any message, under any link, with its replies."""
    now = now_us()
    async with db.transaction() as tx:
        link_id = await _delete_message(
            tx, message_id=message_id, resolution="delete_message", admin_id=admin_id, now=now
        )
        if link_id is None:
            raise NotFound("No message with this id")
        await _audit(
            tx,
            admin_id=admin_id,
            action="message.delete",
            target_id=message_id,
            detail=f"under link {link_id}",
            now=now,
        )


async def block_sender(db: Database, *, message_id: str, admin_id: str) -> BlockOut:
    """Block the sender of any message on every link, from their next message on; the
    message itself and the sender's other waiting ones stay where they are."""
    now = now_us()
    async with db.transaction() as tx:
        blocked = await block(tx, owner_id=None, target=await _sender(tx, message_id))
        await _audit(
            tx,
            admin_id=admin_id,
            action="sender.block",
            target_id=message_id,
            detail=f"site-wide block {blocked.id}",
            now=now,
        )
    return blocked


# --- the site's muted phrases ------------------------------------------------------------


async def add_muted_phrase(db: Database, *, phrase: str, admin_id: str) -> MutedPhraseOut:
    """Mute a phrase on every link: checked, normalised and limited as a creator's muted word.
    The newest ``safety.service.MOVE_SCAN_LIMIT`` waiting messages of the whole site
    holding it move to their links' filtered folders in the same transaction (older ones
    stay put: a bound on the work of one admin action)."""
    shown, normalized = checked_word(phrase, field="phrase")
    now = now_us()
    phrase_id = new_ulid(now)
    async with db.transaction() as tx:
        await one_at_a_time(tx, "muted_phrases")  # the insert counts them first
        if not await repository.insert_muted_phrase(
            tx,
            phrase_id=phrase_id,
            phrase=shown,
            normalized=normalized,
            created_at=now,
            most=MAX_MUTED_PHRASES,
        ):
            if await repository.muted_phrase_exists(tx, normalized):
                raise Conflict(f"{shown!r} is already muted on every link")
            raise TooManyMutedPhrases(
                f"The site has {MAX_MUTED_PHRASES} muted phrases, the most there can be; "
                "remove some first"
            )
        await muted_list_changed(tx, None)
        await move_muted(tx, owner_id=None, words=Matcher.of([shown]), now=now)
        await _audit(
            tx,
            admin_id=admin_id,
            action="muted_phrase.add",
            target_id=phrase_id,
            detail=shown,
            now=now,
        )
    return MutedPhraseOut(id=phrase_id, phrase=shown, created_at=isoformat_us(now))


async def muted_phrases(db: Database) -> MutedPhraseList:
    return MutedPhraseList(
        items=[
            MutedPhraseOut(
                id=row["id"], phrase=row["phrase"], created_at=isoformat_us(row["created_at"])
            )
            for row in await repository.muted_phrases(db)
        ]
    )


async def remove_muted_phrase(db: Database, *, phrase_id: str, admin_id: str) -> None:
    now = now_us()
    async with db.transaction() as tx:
        phrase = await repository.delete_muted_phrase(tx, phrase_id)
        if phrase is None:
            raise NotFound("No muted phrase with this id")
        await muted_list_changed(tx, None)
        await _audit(
            tx,
            admin_id=admin_id,
            action="muted_phrase.remove",
            target_id=phrase_id,
            detail=phrase,
            now=now,
        )


# --- the audit log -------------------------------------------------------------------------


async def audit(db: Database, *, cursor: str | None, limit: int) -> AuditPage:
    """The admins' actions, newest first."""
    rows = await repository.audit_page(db, before=cursor, limit=limit + 1)
    return AuditPage(
        items=[
            AuditEntry(
                id=row["id"],
                admin_id=row["admin_id"],
                action=row["action"],
                target_id=row["target_id"],
                detail=row["detail"],
                created_at=isoformat_us(row["created_at"]),
            )
            for row in rows[:limit]
        ],
        next_cursor=str(rows[limit - 1]["id"]) if len(rows) > limit else None,
    )
