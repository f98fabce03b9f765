"""Inbox search: the creator's messages whose text, or one of whose replies, contains what
they typed, newest first, with the inbox's filters and cursor paging.

Ownership is settled before these run. The query is normalised as message text is (NFC,
no control characters), trimmed, and is 1 to ``MAX_QUERY_CHARACTERS`` characters; it is
only ever bound as a value, and for SQLite's FTS5 quoted as one literal phrase, so no
character of it is syntax. How a page is found: ``search.repository``.
"""

from __future__ import annotations

from anonbox.core.database import Database, Row
from anonbox.core.text import normalised_text
from anonbox.messages.inbox import service as inbox
from anonbox.messages.inbox.schemas import InboxFilter
from anonbox.messages.schemas import InboxPage
from anonbox.messages.search import repository

MAX_QUERY_CHARACTERS = 100


def normalised_query(value: str) -> str:
    """The query as searched for; a ``ValidationFailed`` (400) when it cannot be one."""
    return normalised_text(value, field="q", max_characters=MAX_QUERY_CHARACTERS, trim=True)


async def _matches(
    db: Database,
    *,
    link_id: str,
    q: str,
    which: InboxFilter,
    cursor: str | None,
    limit: int,
    with_seen: bool = False,
) -> tuple[list[Row], str | None, str]:
    """One page of matching rows, the next cursor, and the seen mark (read only when the
    filter or the caller needs it)."""
    text = normalised_query(q)
    seen = ""
    if with_seen or which is InboxFilter.UNREAD:
        seen = await inbox.seen_mark(db, link_id)
    rows = await repository.matching_messages(
        db, link_id=link_id, text=text, which=which, seen=seen, before=cursor, limit=limit + 1
    )
    next_cursor = str(rows[limit - 1]["id"]) if len(rows) > limit else None
    return rows[:limit], next_cursor, seen


async def search(
    db: Database, *, link_id: str, q: str, which: InboxFilter, cursor: str | None, limit: int
) -> InboxPage:
    """The API's answer: the inbox's items, matching ``q``."""
    rows, next_cursor, _ = await _matches(
        db, link_id=link_id, q=q, which=which, cursor=cursor, limit=limit
    )
    items = [inbox.item_of(row, thread=True, answers=False) for row in rows]
    return InboxPage(items=items, next_cursor=next_cursor)


async def search_cards(
    db: Database, *, link_id: str, q: str, which: InboxFilter, cursor: str | None, limit: int
) -> inbox.Page:
    """The dashboard's answer: the inbox's cards (with their replies), matching ``q``.
    Searching does not move the seen mark."""
    rows, next_cursor, seen = await _matches(
        db, link_id=link_id, q=q, which=which, cursor=cursor, limit=limit, with_seen=True
    )
    messages = await inbox.cards(db, rows, seen)
    return inbox.Page(messages=messages, next_cursor=next_cursor, seen_before=seen)
