"""HTTP endpoints for messages: parse, call the service, wrap in the envelope."""

from __future__ import annotations

from typing import Annotated

from litestar import delete, post, put
from litestar.params import HeaderParameter, QueryParameter

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
from anonbox.core.errors import NotFound
from anonbox.core.paths import LinkId, RowId
from anonbox.identity.dependencies import Creator, account_asked
from anonbox.links.dependencies import ClaimedLink, OwnedLink
from anonbox.messages import service
from anonbox.messages.dependencies import LikeWriterDep, PostingDep, ReplyWriterDep
from anonbox.messages.filtered.router import ROUTES as FILTERED_ROUTES
from anonbox.messages.inbox.router import ROUTES as INBOX_ROUTES
from anonbox.messages.schemas import (
    Deleted,
    LikeState,
    MessageIn,
    MessageOut,
    ReplyOut,
)
from anonbox.messages.search.router import ROUTES as SEARCH_ROUTES
from anonbox.receipts.dependencies import site_of
from anonbox.receipts.schemas import RECEIPT_DAYS, ReceiptToken
from anonbox.safety.schemas import BlockOut

_CREATOR_ERRORS = error_responses(400, 401, 403, 404, 503)


IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(
        name="Idempotency-Key",
        min_length=1,
        max_length=200,
        pattern=r"^[\x21-\x7e]+$",
        description="Any unique string (a UUID): a retried post with the same key and "
        "text lands once and gets the first answer's message, without a receipt (a "
        "receipt is given once, with the first answer)",
    ),
]


ProofOfWork = Annotated[
    str | None,
    HeaderParameter(
        name="X-Altcha",
        max_length=2048,
        description="While the link is under a flood, the ALTCHA solution (base64) of "
        "the challenge a 429 `proof_of_work_required` answer carried",
    ),
]


WantsReceipt = Annotated[
    bool,
    QueryParameter(
        name="receipt",
        description="true: the answer's data also carries `receipt`, a private link (valid "
        f"{RECEIPT_DAYS} days) where the sender can see whether the creator answered "
        "and send one follow-up (see /receipts/{token}). Given for every post alike, "
        "once: a replay with the same Idempotency-Key gets none.",
    ),
]


@post(
    "/message/{link_id:str}",
    status_code=201,
    summary="Send an anonymous message to a link",
    description="Anyone may send, unless the link takes messages from signed-in senders "
    "only (its `senders` is `signed_in`): then send a sign-in access token "
    "(`Authorization: Bearer`) or an API key (`X-API-Key`) of any anonbox account, or get "
    "401 `sign_in_required`. The sender stays anonymous to the creator: their account is "
    "never stored with the message nor shown to anyone. On a link for anyone a credential "
    "is not read.",
    responses=error_responses(400, 401, 403, 404, 409, *BODY_ERRORS, 429, 503),
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
        address=posting.clients.of(request.scope),
        idempotency_key=idempotency_key,
        proof=proof,
        receipt_site=site_of(request) if receipt else None,
        account=account_asked(request, posting.db),
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
    request: AnyRequest,
    claimed: ClaimedLink,
    message_id: RowId,
    data: MessageIn,
    db: DB,
    replies: ReplyWriterDep,
) -> Envelope[Created, ReplyOut]:
    reply = await service.reply(
        db,
        replies,
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
)
async def toggle_like(
    request: AnyRequest, claimed: ClaimedLink, message_id: RowId, db: DB, likes: LikeWriterDep
) -> Envelope[OK, LikeState]:
    state = await service.toggle_like(
        db, likes, link_id=claimed.link_id, owner_id=claimed.owner_id, message_id=message_id
    )
    return envelope(request, 200, "Liked" if state.like_by_creator else "Like removed", state)


@post(
    "/receipts/{token:str}/follow-up",
    status_code=201,
    summary="Send the one follow-up of a receipt into the same thread",
    description="A new anonymous message in the creator's inbox, marked as following the "
    "original (`follow_up_of`), under every rule of a post: rate limits, proof of work "
    "under a flood (`X-Altcha`), blocks, muted words, pause. One per receipt "
    "(409 `follow_up_sent`); refused where the creator turned follow-ups off "
    "(409 `follow_ups_off`). On a link for signed-in senders only, a credential of any "
    "anonbox account is needed as for a post there (401 `sign_in_required`); it is never "
    "stored with the follow-up.",
    responses=error_responses(400, 401, 403, 404, 409, *BODY_ERRORS, 429, 503),
    tags=["receipts"],
)
async def send_follow_up(
    request: AnyRequest,
    token: ReceiptToken,
    data: MessageIn,
    posting: PostingDep,
    proof: Annotated[
        str | None,
        HeaderParameter(
            name="X-Altcha",
            max_length=2048,
            description="While the link is under a flood, the ALTCHA solution of the "
            "challenge a 429 `proof_of_work_required` answer carried",
        ),
    ] = None,
) -> Envelope[Created, MessageOut]:
    sent = await service.follow_up(
        posting,
        token=token,
        content=data.message_content,
        address=posting.clients.of(request.scope),
        proof=proof,
        account=account_asked(request, posting.db),
    )
    return envelope(request, 201, "Follow-up sent", sent)


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
    "silently. Nothing already sent moves, this message included: moving the sender's "
    "other waiting messages would tell you which ones share a sender. The block list "
    "shows this message, never the sender. With `network=true`, "
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
    blocked = await service.block_sender(
        db, owner_id=creator.user_id, link_id=owned.link_id, message_id=message_id, network=network
    )
    return envelope(request, 201, "Network blocked" if network else "Sender blocked", blocked)


@delete("/message/{link_id:str}/{message_id:str}/sender", status_code=200, include_in_schema=False)
async def delete_from_sender() -> None:
    """Withdrawn (issue 32, ``docs/decisions.md``): deleting every message of one sender
    told the creator which messages shared a sender. Its old address answers 404, as no
    route would, rather than the 400 of ``DELETE …/{reply_id}`` for a reply id "sender"."""
    raise NotFound(
        "Nothing here: deleting every message from one sender was withdrawn (its answer "
        "would tell which messages share a sender)"
    )


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


# The sub-packages' routes from their own lists, in the order the OpenAPI document has
# always listed their paths (it lists a path where its first route is registered).
ROUTES = [
    create_message,
    send_follow_up,
    *FILTERED_ROUTES,
    *SEARCH_ROUTES,
    *INBOX_ROUTES,
    reply_to_message,
    toggle_like,
    delete_reply,
    delete_message,
    block_sender,
    delete_from_sender,
    delete_unanswered,
]
