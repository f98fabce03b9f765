"""What a creator can do with their links, and the rules for doing it.

Ownership is settled before the per-link operations run (``links.dependencies.owned_link``);
their statements still name the creator, so a link that changed hands is not found.
"""

from __future__ import annotations

from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Database, Row
from anonbox.core.errors import Conflict, FieldProblem, NotFound, ValidationFailed
from anonbox.core.text import normalised_text
from anonbox.links import repository
from anonbox.links.availability import NO_LINK, LinkGone, missing_link
from anonbox.links.schemas import (
    MAX_PAUSE_HOURS,
    MAX_PROMPT_CHARACTERS,
    LinkList,
    LinkOut,
    PublicLink,
)

# A creator's links are listed in one response, unpaginated: the cap keeps it small.
MAX_LINKS_PER_CREATOR = 100

_US = 1_000_000
RESUME_SECONDS = 5.0  # how often ended pauses are looked for


class TooManyLinks(Conflict):
    code = "too_many_links"


def normalised_prompt(value: str) -> str:
    """The prompt as stored: NFC, trimmed, 1 to 300 code points, no controls."""
    return normalised_text(value, field="prompt", max_characters=MAX_PROMPT_CHARACTERS, trim=True)


def _link_out(row: Row) -> LinkOut:
    until = row["paused_until"]
    return LinkOut(
        id=row["id"],
        prompt=row["prompt"],
        paused=bool(row["paused"]),
        created_at=isoformat_us(row["created_at"]),
        follow_ups=bool(row["follow_ups"]),
        paused_until=None if until is None else isoformat_us(until),
        hide_dates=bool(row["hide_dates"]),
        muted="drop" if row["muted"] == "drop" else "filter",
    )


async def create_link(db: Database, *, user_id: str, prompt: str) -> LinkOut:
    text = normalised_prompt(prompt)
    now = now_us()
    # On PostgreSQL two concurrent creations may both pass the count: the cap can be
    # overshot by a link or two, which is harmless; it only bounds the listing.
    async with db.transaction() as tx:
        if await repository.count_links(tx, user_id) >= MAX_LINKS_PER_CREATOR:
            raise TooManyLinks(
                f"A creator can have at most {MAX_LINKS_PER_CREATOR} links; delete one first"
            )
        link_id = await repository.insert_link(tx, user_id=user_id, prompt=text, created_at=now)
    return LinkOut(id=link_id, prompt=text, paused=False, created_at=isoformat_us(now))


async def links_of(db: Database, *, user_id: str) -> LinkList:
    return LinkList(items=[_link_out(row) for row in await repository.links_of(db, user_id)])


async def link(db: Database, *, link_id: str, user_id: str) -> LinkOut:
    row = await repository.link_of(db, link_id=link_id, user_id=user_id)
    if row is None:
        raise NotFound(NO_LINK)
    return _link_out(row)


async def public_link(db: Database, *, link_id: str) -> PublicLink:
    row = await repository.public_link(db, link_id)
    if row is None:
        raise await missing_link(db, link_id)
    if row["disabled"]:
        raise LinkGone()
    return PublicLink(
        id=row["id"],
        prompt=row["prompt"],
        paused=bool(row["paused"]),
        creator_name=row["name"],
        creator_picture_url=row["picture_url"],
        hide_dates=bool(row["hide_dates"]),
    )


async def creator_language(db: Database, *, link_id: str) -> str | None:
    """The language the link's creator reads (None: not chosen yet, or no such link)."""
    return await repository.creator_language(db, link_id)


async def update_link(
    db: Database,
    *,
    link_id: str,
    user_id: str,
    prompt: str | None,
    paused: bool | None,
    follow_ups: bool | None = None,
    pause_for_hours: int | None = None,
    hide_dates: bool | None = None,
    muted: str | None = None,
) -> LinkOut:
    """Change the given settings; None leaves one as it is, and at least one must be given."""
    given = (prompt, paused, follow_ups, pause_for_hours, hide_dates, muted)
    if all(setting is None for setting in given):
        raise ValidationFailed(
            "Send at least one setting to change: prompt, paused, pause_for_hours, "
            "follow_ups, hide_dates, muted",
            [FieldProblem("body", "missing")],
        )
    if muted is not None and muted not in ("filter", "drop"):
        raise ValidationFailed(
            "muted must be 'filter' or 'drop'", [FieldProblem("muted", "invalid")]
        )
    if pause_for_hours is not None and not 1 <= pause_for_hours <= MAX_PAUSE_HOURS:
        raise ValidationFailed(
            f"pause_for_hours must be 1 to {MAX_PAUSE_HOURS}",
            [FieldProblem("pause_for_hours", "out_of_range")],
        )
    if paused is not None and pause_for_hours is not None:
        raise ValidationFailed(
            "Send paused or pause_for_hours, not both",
            [FieldProblem("pause_for_hours", "invalid")],
        )
    text = None if prompt is None else normalised_prompt(prompt)
    until = None if pause_for_hours is None else now_us() + pause_for_hours * 3600 * _US
    row = await repository.update_link(
        db,
        link_id=link_id,
        user_id=user_id,
        prompt=text,
        paused=paused,
        follow_ups=follow_ups,
        paused_until=until,
        hide_dates=hide_dates,
        muted=muted,
    )
    if row is None:
        raise NotFound(NO_LINK)
    return _link_out(row)


async def delete_link(db: Database, *, link_id: str, user_id: str) -> None:
    """Delete the link with every message and reply under it; its id is never reused, and
    from now on answers 404 ``link_gone`` (a 410 page) to senders and creator alike."""
    async with db.transaction() as tx:
        if not await repository.delete_link(tx, link_id=link_id, user_id=user_id, now=now_us()):
            raise NotFound(NO_LINK)


async def resume_ended(db: Database) -> int:
    """Resume links whose timed pause has ended; how many. A chore of every instance, every
    ``RESUME_SECONDS`` (``core.chores``): the update is the same whoever runs it."""
    return await repository.resume_ended_pauses(db, now_us())
