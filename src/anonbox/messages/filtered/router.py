"""HTTP endpoints of a link's filtered folder (the creator's): list it, restore a message
from it, empty it."""

from __future__ import annotations

from litestar import delete, get, post

from anonbox.core.dependencies import DB
from anonbox.core.envelope import OK, AnyRequest, Envelope, envelope, error_responses
from anonbox.core.paths import Cursor, Limit, RowId
from anonbox.links.dependencies import OwnedLink
from anonbox.messages.filtered import service as filtered
from anonbox.messages.schemas import Deleted, InboxPage

_CREATOR_ERRORS = error_responses(400, 401, 403, 404, 503)


@get(
    "/message/{link_id:str}/filtered",
    summary="List a link's filtered folder, newest first (creator)",
    description="Messages caught by muted words (yours or the site's); a block moves "
    "nothing here. Items and paging are the "
    f"inbox's. Kept {filtered.FOLDER_DAYS} days after they were filtered.",
    responses=_CREATOR_ERRORS,
    tags=["messages"],
)
async def list_filtered(
    request: AnyRequest, owned: OwnedLink, db: DB, cursor: Cursor = None, limit: Limit = 20
) -> Envelope[OK, InboxPage]:
    page = await filtered.folder(db, link_id=owned.link_id, cursor=cursor, limit=limit)
    return envelope(request, 200, "Filtered messages", page)


@post(
    "/message/{link_id:str}/{message_id:str}/restore",
    status_code=200,
    summary="Move a message from the filtered folder back to the inbox (creator)",
    description="It keeps its id and date; webhooks, push and e-mail hear of it now "
    "(`message.created`), as of a new message.",
    responses=_CREATOR_ERRORS,
    tags=["messages"],
)
async def restore_filtered(
    request: AnyRequest, owned: OwnedLink, message_id: RowId, db: DB
) -> Envelope[OK, None]:
    await filtered.restore(db, link_id=owned.link_id, message_id=message_id)
    return envelope(request, 200, "Message restored to the inbox", None)


@delete(
    "/message/{link_id:str}/filtered",
    status_code=200,
    summary="Empty a link's filtered folder (creator)",
    responses=_CREATOR_ERRORS,
    tags=["messages"],
)
async def empty_filtered(request: AnyRequest, owned: OwnedLink, db: DB) -> Envelope[OK, Deleted]:
    count = await filtered.empty(db, link_id=owned.link_id)
    return envelope(request, 200, f"Deleted {count} messages", Deleted(deleted=count))


ROUTES = [list_filtered, restore_filtered, empty_filtered]
