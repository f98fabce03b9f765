"""A followable link's answers as its Notes, and its outbox of them (issue 42, item 3).

Every published answer is a Note, whether or not anyone followed the link when it was
given; its address answers while the answer exists. How it is addressed is the link's
``federation_visibility`` as it is now: ``public`` and ``unlisted`` Notes are served to
anyone and listed in the outbox; ``followers`` Notes reach followers' inboxes only: their
addresses answer 404 to a fetch (as Mastodon answers one of a non-public status without
authorized fetch) and the outbox leaves them out. The callers have checked that the link
is followable (``federation.service.followable``).

The outbox is paged as Mastodon's is: the collection says how many and where the newest
page is (``?page=true``); each page holds at most ``PAGE_ITEMS`` Create activities,
newest first, and names the next (``?before={reply_id}``: older than that answer).
"""

from __future__ import annotations

from typing import Any

from anonbox.core.database import Connection, Row
from anonbox.core.errors import NotFound
from anonbox.core.i18n import DEFAULT_LANGUAGE, LANGUAGES
from anonbox.federation import activities
from anonbox.federation.activities import Answer, Site
from anonbox.federation.notes import repository

# Create activities on one outbox page.
PAGE_ITEMS = activities.OUTBOX_ITEMS
NO_ANSWER = "No such answer"
# Visibilities whose Notes anyone may fetch and the outbox lists.
LISTED = ("public", "unlisted")


def spoken(link_language: str | None, creator_language: str | None) -> str:
    """The link's language, else its creator's, else English (as ``links`` resolves it)."""
    for language in (link_language, creator_language):
        if language in LANGUAGES:
            return str(language)
    return DEFAULT_LANGUAGE


def visibility(stored: str | None) -> str:
    return stored if stored in ("public", "unlisted", "followers") else "public"


def answer_of(row: Row) -> Answer:
    return Answer(
        link_id=str(row["link_id"]),
        message_id=str(row["message_id"]),
        reply_id=str(row["reply_id"]),
        question=str(row["question"]),
        answer=str(row["answer"]),
        prompt=str(row["prompt"]),
        answered_at=int(row["answered_at"]),
        answer_id=None if row["answer_id"] is None else str(row["answer_id"]),
        language=spoken(row["language"], row["creator_language"]),
        warning=row["warning"] or None,
        visibility=visibility(row["visibility"]),
    )


async def answers(conn: Connection, reply_ids: list[str]) -> list[Answer]:
    return [answer_of(row) for row in await repository.answers(conn, reply_ids)]


async def note(conn: Connection, site: Site, link_id: str, reply_id: str) -> dict[str, Any]:
    """The answer's Note, to anyone, unless the link's answers are for followers only."""
    row = await repository.answer(conn, link_id=link_id, reply_id=reply_id)
    if row is None or visibility(row["visibility"]) not in LISTED:
        raise NotFound(NO_ANSWER)
    return {"@context": activities.CONTEXT, **activities.note(site, answer_of(row))}


async def _listed(conn: Connection, link_id: str) -> bool:
    row = await repository.link_visibility(conn, link_id)
    return visibility(row) in LISTED


async def outbox(
    conn: Connection, site: Site, link_id: str, *, page: bool, before: str | None
) -> dict[str, Any]:
    """The collection (neither ``page`` nor ``before``), or one page of it."""
    outbox_id = f"{site.actor(link_id)}/outbox"
    listed = await _listed(conn, link_id)
    if not page and before is None:
        total = await repository.count(conn, link_id) if listed else 0
        return activities.outbox(outbox_id, total)
    rows = (
        await repository.newest(conn, link_id, before=before, limit=PAGE_ITEMS + 1)
        if listed
        else []
    )
    items = []
    for row in rows[:PAGE_ITEMS]:
        create = activities.create(site, answer_of(row))
        create.pop("@context")
        items.append(create)
    older = str(rows[PAGE_ITEMS - 1]["reply_id"]) if len(rows) > PAGE_ITEMS else None
    page_id = f"{outbox_id}?before={before}" if before is not None else f"{outbox_id}?page=true"
    return activities.outbox_page(outbox_id, page_id, items, older)
