"""HTTP endpoints of a sender's receipt: the token in the path is the only credential.

Reading it is here; its one follow-up is a post, and posts are ``messages.router``'s
(``send_follow_up``)."""

from __future__ import annotations

from litestar import get

from anonbox.core.dependencies import PublicDB
from anonbox.core.envelope import (
    OK,
    AnyRequest,
    Envelope,
    envelope,
    error_responses,
)
from anonbox.receipts import service
from anonbox.receipts.schemas import ReceiptOut, ReceiptToken

_TAGS = ["receipts"]


@get(
    "/receipts/{token:str}",
    summary="A sender's receipt: their message, whether it was answered, the answers",
    description="No credential but the token. Shows the sender's own text, the creator's "
    "public replies (oldest first) to it and to its follow-up, and whether one follow-up "
    "may be sent now. A wrong or expired token is a 404.",
    responses=error_responses(404, 503),
    tags=_TAGS,
)
async def get_receipt(
    request: AnyRequest, token: ReceiptToken, public_db: PublicDB
) -> Envelope[OK, ReceiptOut]:
    found = await service.receipt(public_db, token=token)
    return envelope(request, 200, "Receipt", found)


ROUTES = [get_receipt]
