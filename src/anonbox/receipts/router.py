"""HTTP endpoints of a sender's receipt: the token in the path is the only credential."""

from __future__ import annotations

from typing import Annotated

from litestar import get, post
from litestar.di import Provide
from litestar.params import Parameter

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
from anonbox.messages import service as messages
from anonbox.messages.dependencies import PostingDep, provide_posting
from anonbox.messages.schemas import MessageIn, MessageOut
from anonbox.receipts import service
from anonbox.receipts.schemas import ReceiptOut

_TAGS = ["receipts"]

# Any string: a token of the wrong shape is as unknown as a wrong one (404), never a 400.
Token = Annotated[
    str,
    Parameter(
        description="The receipt token the post's answer gave (`receipt.token`): a bearer "
        "credential, 43 URL-safe characters"
    ),
]


@get(
    "/receipts/{token:str}",
    summary="A sender's receipt: their message, whether it was answered, the answers",
    description="No credential but the token. Shows the sender's own text, the creator's "
    "public replies (oldest first) to it and to its follow-up, and whether one follow-up "
    "may be sent now. A wrong or expired token is a 404.",
    responses=error_responses(404, 503),
    tags=_TAGS,
)
async def get_receipt(request: AnyRequest, token: Token, db: DB) -> Envelope[OK, ReceiptOut]:
    return envelope(request, 200, "Receipt", await service.receipt(db, token=token))


@post(
    "/receipts/{token:str}/follow-up",
    status_code=201,
    dependencies={"posting": Provide(provide_posting, sync_to_thread=False)},
    summary="Send the one follow-up of a receipt into the same thread",
    description="A new anonymous message in the creator's inbox, marked as following the "
    "original (`follow_up_of`), under every rule of a post: rate limits, proof of work "
    "under a flood (`X-Altcha`), blocks, muted words, pause. One per receipt "
    "(409 `follow_up_sent`); refused where the creator turned follow-ups off "
    "(409 `follow_ups_off`).",
    responses=error_responses(400, 404, 409, *BODY_ERRORS, 429, 503),
    tags=_TAGS,
)
async def send_follow_up(
    request: AnyRequest,
    token: Token,
    data: MessageIn,
    posting: PostingDep,
    proof: Annotated[
        str | None,
        Parameter(
            header="X-Altcha",
            max_length=2048,
            description="While the link is under a flood, the ALTCHA solution of the "
            "challenge a 429 `proof_of_work_required` answer carried",
        ),
    ] = None,
) -> Envelope[Created, MessageOut]:
    sent = await messages.follow_up(
        posting,
        token=token,
        content=data.message_content,
        address=client_address(request.scope, posting.trusted_proxies),
        proof=proof,
    )
    return envelope(request, 201, "Follow-up sent", sent)


ROUTES = [get_receipt, send_follow_up]
