"""HTTP endpoints that list a link's messages and a message's replies: everything to the
creator, the answered ones to anyone else."""

from __future__ import annotations

from litestar import get

from anonbox.core.dependencies import DB
from anonbox.core.envelope import OK, AnyRequest, Envelope, envelope, error_responses
from anonbox.core.paths import Cursor, Limit, RowId
from anonbox.links.dependencies import ViewedLink
from anonbox.messages.inbox import service as inbox
from anonbox.messages.schemas import InboxPage, ReplyPage


@get(
    "/message/{link_id:str}",
    summary="List a link's messages, newest first",
    description="The creator (with a credential) sees the whole inbox; anyone else only "
    "the messages that have at least one reply.",
    responses=error_responses(400, 401, 403, 404, 503),
    tags=["messages"],
)
async def list_messages(
    request: AnyRequest, viewed: ViewedLink, db: DB, cursor: Cursor = None, limit: Limit = 20
) -> Envelope[OK, InboxPage]:
    page = await inbox.inbox(
        db, link_id=viewed.link_id, cursor=cursor, limit=limit, answered_only=not viewed.is_creator
    )
    return envelope(request, 200, "Messages", page)


@get(
    "/message/{link_id:str}/{message_id:str}",
    summary="List the replies to a message, newest first",
    description="Anyone may read the replies of an answered message; an unanswered one "
    "is visible to its creator only.",
    responses=error_responses(400, 401, 403, 404, 503),
    tags=["messages"],
)
async def list_replies(
    request: AnyRequest,
    viewed: ViewedLink,
    message_id: RowId,
    db: DB,
    cursor: Cursor = None,
    limit: Limit = 20,
) -> Envelope[OK, ReplyPage]:
    page = await inbox.replies(
        db,
        link_id=viewed.link_id,
        message_id=message_id,
        cursor=cursor,
        limit=limit,
        is_creator=viewed.is_creator,
    )
    return envelope(request, 200, "Replies", page)


ROUTES = [list_messages, list_replies]
