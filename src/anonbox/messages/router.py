"""HTTP endpoints for messages: parse, call the service, wrap in the envelope."""

from __future__ import annotations

from typing import Annotated

from litestar import delete, post, put
from litestar.di import Provide
from litestar.params import Parameter

from anonbox.auth.dependencies import Creator
from anonbox.core.client import client_address
from anonbox.core.dependencies import DB
from anonbox.core.envelope import (
    BODY_ERRORS,
    OK,
    AnyRequest,
    Created,
    Envelope,
    envelope,
    error_responses,
)
from anonbox.core.paths import LinkId, RowId
from anonbox.links.dependencies import ClaimedLink, OwnedLink
from anonbox.messages import service
from anonbox.messages.dependencies import LikeWriterDep, PostingDep, provide_likes, provide_posting
from anonbox.messages.filtered.router import empty_filtered, list_filtered, restore_filtered
from anonbox.messages.inbox.router import list_messages, list_replies
from anonbox.messages.schemas import (
    Deleted,
    LikeState,
    MessageIn,
    MessageOut,
    ReplyOut,
)
from anonbox.messages.search.router import search_messages
from anonbox.receipts import service as receipts
from anonbox.receipts.dependencies import site_of
from anonbox.safety.schemas import BlockOut
from anonbox.safety.service import block, sender_of

_CREATOR_ERRORS = error_responses(400, 401, 403, 404, 503)


IdempotencyKey = Annotated[
    str | None,
    Parameter(
        header="Idempotency-Key",
        min_length=1,
        max_length=200,
        pattern=r"^[\x21-\x7e]+$",
        description="Any unique string (a UUID): a retried post with the same key and "
        "text lands once and gets the first answer",
    ),
]


ProofOfWork = Annotated[
    str | None,
    Parameter(
        header="X-Altcha",
        max_length=2048,
        description="While the link is under a flood, the ALTCHA solution (base64) of "
        "the challenge a 429 `proof_of_work_required` answer carried",
    ),
]


WantsReceipt = Annotated[
    bool,
    Parameter(
        query="receipt",
        description="true: the answer's data also carries `receipt`, a private link (valid "
        f"{receipts.RECEIPT_DAYS} days) where the sender can see whether the creator answered "
        "and send one follow-up (see /receipts/{token}). Given for every post alike.",
    ),
]


@post(
    "/message/{link_id:str}",
    status_code=201,
    dependencies={"posting": Provide(provide_posting, sync_to_thread=False)},
    summary="Send an anonymous message to a link",
    responses=error_responses(400, 404, 409, *BODY_ERRORS, 429, 503),
    tags=["messages"],
)
async def create_message(
    request: AnyRequest,
    link_id: LinkId,
    data: MessageIn,
    posting: PostingDep,
    idempotency_key: IdempotencyKey = None,
    proof: ProofOfWork = None,
    receipt: WantsReceipt = False,
) -> Envelope[Created, MessageOut]:
    message = await service.create_message(
        posting,
        link_id=link_id,
        content=data.message_content,
        address=client_address(request.scope, posting.trusted_proxies),
        idempotency_key=idempotency_key,
        proof=proof,
        receipt_site=site_of(request) if receipt else None,
    )
    return envelope(request, 201, "Message sent", message)


@post(
    "/message/{link_id:str}/{message_id:str}",
    status_code=201,
    summary="Reply to a message (creator)",
    responses={**_CREATOR_ERRORS, **error_responses(*BODY_ERRORS)},
    tags=["messages"],
)
async def reply_to_message(
    request: AnyRequest, claimed: ClaimedLink, message_id: RowId, data: MessageIn, db: DB
) -> Envelope[Created, ReplyOut]:
    reply = await service.reply(
        db,
        link_id=claimed.link_id,
        owner_id=claimed.owner_id,
        message_id=message_id,
        content=data.message_content,
    )
    return envelope(request, 201, "Reply posted", reply)


@put(
    "/message/{link_id:str}/{message_id:str}/like",
    summary="Toggle the creator's like on a message (creator)",
    responses=_CREATOR_ERRORS,
    tags=["messages"],
    dependencies={"likes": Provide(provide_likes, sync_to_thread=False)},
)
async def toggle_like(
    request: AnyRequest, claimed: ClaimedLink, message_id: RowId, db: DB, likes: LikeWriterDep
) -> Envelope[OK, LikeState]:
    state = await service.toggle_like(
        db, likes, link_id=claimed.link_id, owner_id=claimed.owner_id, message_id=message_id
    )
    return envelope(request, 200, "Liked" if state.like_by_creator else "Like removed", state)


@delete(
    "/message/{link_id:str}/{message_id:str}/{reply_id:str}",
    status_code=200,
    summary="Delete a reply (creator)",
    responses=_CREATOR_ERRORS,
    tags=["messages"],
)
async def delete_reply(
    request: AnyRequest, claimed: ClaimedLink, message_id: RowId, reply_id: RowId, db: DB
) -> Envelope[OK, None]:
    await service.delete_reply(
        db,
        link_id=claimed.link_id,
        owner_id=claimed.owner_id,
        message_id=message_id,
        reply_id=reply_id,
    )
    return envelope(request, 200, "Reply deleted", None)


@delete(
    "/message/{link_id:str}/{message_id:str}",
    status_code=200,
    summary="Delete a message and its replies (creator)",
    responses=_CREATOR_ERRORS,
    tags=["messages"],
)
async def delete_message(
    request: AnyRequest, owned: OwnedLink, message_id: RowId, db: DB
) -> Envelope[OK, None]:
    await service.delete_message(db, link_id=owned.link_id, message_id=message_id)
    return envelope(request, 200, "Message deleted", None)


@post(
    "/message/{link_id:str}/{message_id:str}/block",
    status_code=201,
    summary="Block whoever sent this message from all your links (creator)",
    description="You never learn who it is; later messages from that sender are dropped "
    "silently, and their unanswered messages waiting in your inboxes (this one included) "
    "move to the links' filtered folders. The block list shows this message, never the "
    "sender. With `network=true`, "
    "the sender's whole network (the IPv4 /24 or IPv6 /48 around them) is blocked: for a "
    "sender who keeps changing addresses.",
    responses={**_CREATOR_ERRORS, **error_responses(409)},
    tags=["safety"],
)
async def block_sender(
    request: AnyRequest,
    owned: OwnedLink,
    message_id: RowId,
    db: DB,
    creator: Creator,
    network: bool = False,
) -> Envelope[Created, BlockOut]:
    async with db.transaction() as tx:  # the block, and the sender's waiting messages moved
        target = await sender_of(tx, message_id=message_id, link_id=owned.link_id)
        blocked = await block(
            tx, dialect=db.dialect, owner_id=creator.user_id, target=target, network=network
        )
    return envelope(request, 201, "Network blocked" if network else "Sender blocked", blocked)


@delete(
    "/message/{link_id:str}/{message_id:str}/sender",
    status_code=200,
    summary="Delete every message to this link from the sender of this one (creator)",
    description="Those waiting in the link's filtered folder too; the message named may be "
    "in the inbox or in the folder. `deleted` counts both.",
    responses={**_CREATOR_ERRORS, **error_responses(409)},
    tags=["safety"],
)
async def delete_from_sender(
    request: AnyRequest, owned: OwnedLink, message_id: RowId, db: DB
) -> Envelope[OK, Deleted]:
    count = await service.delete_from_sender_of(db, link_id=owned.link_id, message_id=message_id)
    return envelope(request, 200, f"Deleted {count} messages", Deleted(deleted=count))


@delete(
    "/message/{link_id:str}/unanswered",
    status_code=200,
    summary="Delete every unanswered message of this link (creator)",
    description="The link's filtered folder is emptied too (a message there cannot be "
    "answered). `deleted` counts both.",
    responses=_CREATOR_ERRORS,
    tags=["safety"],
)
async def delete_unanswered(request: AnyRequest, owned: OwnedLink, db: DB) -> Envelope[OK, Deleted]:
    count = await service.delete_unanswered(db, link_id=owned.link_id)
    return envelope(request, 200, f"Deleted {count} messages", Deleted(deleted=count))


ROUTES = [
    create_message,
    list_filtered,
    restore_filtered,
    empty_filtered,
    list_messages,
    search_messages,
    reply_to_message,
    list_replies,
    toggle_like,
    delete_reply,
    delete_message,
    block_sender,
    delete_from_sender,
    delete_unanswered,
]
