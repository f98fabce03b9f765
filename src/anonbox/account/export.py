"""Everything a creator owns, as one JSON document written while it is read.

An account may hold a million messages: the document is never built in memory. Rows are
read in keyset pages of ``PAGE_ROWS`` (each page its own short query, so no transaction
or lock is held for the length of a download), encoded one by one and handed on in
chunks of about ``CHUNK_BYTES``; the server's memory stays flat however large the
account. A row written while the download runs may or may not be in it.

What is left out on purpose: every sender hash and network hash, the ids of dropped
messages, API key hashes, webhook secrets and push endpoints (a device is a count and
dates).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import msgspec

from anonbox.account import avatar, repository
from anonbox.account.schemas import (
    EXPORT_FORMAT,
    ExportApiKey,
    ExportBlock,
    ExportEmailNotices,
    ExportFilteredMessage,
    ExportMessage,
    ExportMutedWord,
    ExportProfile,
    ExportPushDevices,
    ExportReply,
    ExportWebhook,
)
from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Database, Row
from anonbox.core.errors import Unauthorized

PAGE_ROWS = 1000
EXPORT_MESSAGE = "Your data"
CHUNK_BYTES = 64 * 1024
# Before every id: the keyset pages start after it.
_FIRST = ""

_encode = msgspec.json.Encoder().encode


def export_filename() -> str:
    """``anonbox-export-<date>.json``, the date of the download (UTC)."""
    return f"anonbox-export-{datetime.now(UTC).date().isoformat()}.json"


def _when(value: int | None) -> str | None:
    return None if value is None else isoformat_us(value)


def _link(row: Row, flags: set[str]) -> dict[str, Any]:
    """Every column of a link but its owner: settings added later are exported too."""
    link: dict[str, Any] = {}
    for name in row.keys():  # noqa: SIM118 - sqlite3.Row iterates values, not names
        value = row[name]
        if name == "user_id":
            continue
        if name in flags and value is not None:
            value = bool(value)
        elif name.endswith(("_at", "_until")) and isinstance(value, int):
            value = isoformat_us(value)
        link[name] = value
    return link


async def open_export(db: Database, *, user_id: str) -> AsyncIterator[bytes]:
    """The export of the account, as chunks of JSON; the account is checked now, so that
    one deleted in between is a 401 rather than a broken download."""
    row = await repository.profile(db, user_id)
    if row is None:
        raise Unauthorized("This account no longer exists")
    profile = ExportProfile(
        user_id=row["id"],
        email=row["email"],
        name=row["name"],
        picture_url=row["picture_url"],
        google_subject=row["google_sub"],
        is_admin=bool(row["is_admin"]),
        created_at=isoformat_us(row["created_at"]),
        language=row["language"],
        time_zone=row["time_zone"],
        display_name=row["display_name"],
        bio=row["bio"],
        avatar_url=avatar.AvatarRef("uploaded", row["avatar_id"]).url if row["avatar_id"] else None,
    )
    return _chunked(_document(db, profile))


async def _chunked(pieces: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    buffer = bytearray()
    async for piece in pieces:
        buffer += piece
        if len(buffer) >= CHUNK_BYTES:
            yield bytes(buffer)
            buffer.clear()
    if buffer:
        yield bytes(buffer)


async def _items(items: AsyncIterator[Any]) -> AsyncIterator[bytes]:
    """A JSON array, one encoded item at a time."""
    yield b"["
    first = True
    async for item in items:
        yield _encode(item) if first else b"," + _encode(item)
        first = False
    yield b"]"


async def _document(db: Database, profile: ExportProfile) -> AsyncIterator[bytes]:
    user_id = profile.user_id
    notices = await repository.email_notice_choice(db, user_id)
    links = await repository.links(db, user_id)
    yield b'{"format":' + _encode(EXPORT_FORMAT)
    yield b',"exported_at":' + _encode(isoformat_us(now_us()))
    yield b',"profile":' + _encode(profile)
    yield b',"email_notices":' + _encode(
        None
        if notices is None
        else ExportEmailNotices(
            mode=notices["mode"],
            confirmed_address=notices["confirmed_address"],
            updated_at=isoformat_us(notices["updated_at"]),
        )
    )
    flags = await repository.boolean_columns(db, "links")
    yield b',"links":' + _encode([_link(link, flags) for link in links])
    yield b',"messages":'
    async for piece in _items(_messages(db, [str(link["id"]) for link in links])):
        yield piece
    yield b',"filtered_messages":'
    async for piece in _items(_filtered(db, [str(link["id"]) for link in links])):
        yield piece
    yield b',"blocks":'
    async for piece in _items(_blocks(db, user_id)):
        yield piece
    yield b',"muted_words":' + _encode(
        [
            ExportMutedWord(id=w["id"], word=w["word"], created_at=isoformat_us(w["created_at"]))
            for w in await repository.muted_words(db, user_id)
        ]
    )
    yield b',"api_keys":'
    async for piece in _items(_api_keys(db, user_id)):
        yield piece
    yield b',"webhooks":' + _encode(
        [
            ExportWebhook(
                id=w["id"],
                url=w["url"],
                events=[kind for kind in str(w["events"]).split(",") if kind],
                disabled_reason=w["disabled_reason"],
                created_at=isoformat_us(w["created_at"]),
            )
            for w in await repository.webhooks(db, user_id)
        ]
    )
    devices = [isoformat_us(d["created_at"]) for d in await repository.push_devices(db, user_id)]
    yield b',"push_devices":' + _encode(ExportPushDevices(count=len(devices), created_at=devices))
    yield b"}"


async def _messages(db: Database, link_ids: list[str]) -> AsyncIterator[ExportMessage]:
    """Each link's messages, oldest first, each with its replies."""
    for link_id in link_ids:
        after = _FIRST
        while True:
            page = await repository.messages_page(db, link_id=link_id, after=after, limit=PAGE_ROWS)
            if not page:
                break
            last = str(page[-1]["id"])
            replies: dict[str, list[ExportReply]] = {}
            if any(row["reply_count"] for row in page):
                for reply in await repository.replies_between(
                    db, link_id=link_id, after=after, through=last
                ):
                    replies.setdefault(reply["message_id"], []).append(
                        ExportReply(
                            id=reply["id"],
                            message_content=reply["content"],
                            created_at=isoformat_us(reply["created_at"]),
                        )
                    )
            for row in page:
                yield ExportMessage(
                    id=row["id"],
                    link_id=link_id,
                    message_content=row["content"],
                    like_by_creator=bool(row["like_by_creator"]),
                    created_at=isoformat_us(row["created_at"]),
                    replies=replies.get(row["id"], []),
                )
            if len(page) < PAGE_ROWS:
                break
            after = last


async def _filtered(db: Database, link_ids: list[str]) -> AsyncIterator[ExportFilteredMessage]:
    """Each link's filtered folder, oldest first (marked ``filtered``)."""
    for link_id in link_ids:
        after = _FIRST
        while page := await repository.filtered_page(
            db, link_id=link_id, after=after, limit=PAGE_ROWS
        ):
            for row in page:
                yield ExportFilteredMessage(
                    id=row["id"],
                    link_id=link_id,
                    message_content=row["content"],
                    created_at=isoformat_us(row["created_at"]),
                    filtered_at=isoformat_us(row["filtered_at"]),
                )
            after = str(page[-1]["id"])


async def _blocks(db: Database, user_id: str) -> AsyncIterator[ExportBlock]:
    after = _FIRST
    while page := await repository.blocks_page(db, user_id=user_id, after=after, limit=PAGE_ROWS):
        for row in page:
            yield ExportBlock(
                id=row["id"],
                message_excerpt=row["message_excerpt"],
                network=bool(row["network"]),
                created_at=isoformat_us(row["created_at"]),
            )
        after = str(page[-1]["id"])


async def _api_keys(db: Database, user_id: str) -> AsyncIterator[ExportApiKey]:
    after = _FIRST
    while page := await repository.api_keys_page(db, user_id=user_id, after=after, limit=PAGE_ROWS):
        for row in page:
            yield ExportApiKey(
                id=row["id"],
                name=row["name"],
                last_chars=row["last_chars"],
                created_at=isoformat_us(row["created_at"]),
                last_used_at=_when(row["last_used_at"]),
                revoked_at=_when(row["revoked_at"]),
            )
        after = str(page[-1]["id"])
