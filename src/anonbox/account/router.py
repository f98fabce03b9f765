"""HTTP endpoints for the account as a whole: export it, delete it, cancel the deletion."""

from __future__ import annotations

from litestar import delete, get, post
from litestar.openapi.datastructures import ResponseSpec
from litestar.response import Stream

from anonbox.account import service
from anonbox.account.dependencies import (
    AccountHolder,
    SignedInHolder,
)
from anonbox.account.export import EXPORT_MESSAGE, export_filename, open_export
from anonbox.account.schemas import AccountExport, DeletionState
from anonbox.auth.dependencies import Creator
from anonbox.core.dependencies import DB, AppSettings
from anonbox.core.envelope import (
    OK,
    AnyRequest,
    Created,
    Envelope,
    envelope,
    error_responses,
    streamed_envelope,
)
from anonbox.core.routing import OptionsRouter

_TAGS = ["account"]


@get(
    "/account/export",
    summary="Download everything your account holds, as one JSON document",
    description="Profile, links and their settings, messages with their replies and likes, "
    "blocks (by excerpt), muted words, API keys (name, last characters, dates), webhooks "
    "(URL, events, dates), the e-mail notice choice and push devices (a count and dates). "
    "Nothing about any sender. The envelope is streamed as it is read, so it is sent as an "
    "attachment and its size has no limit; a download cut short is not valid JSON.",
    responses={
        200: ResponseSpec(
            data_container=Envelope[OK, AccountExport],
            description="The export, in the envelope",
            generate_examples=False,
        ),
        **error_responses(401, 403, 503),
    },
    tags=_TAGS,
)
async def export_account(request: AnyRequest, db: DB, creator: Creator) -> Stream:
    data = await open_export(db, user_id=creator.user_id)
    return Stream(
        streamed_envelope(request, 200, EXPORT_MESSAGE, data),
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="{export_filename()}"'},
    )


@get(
    "/account/deletion",
    summary="Whether your account is scheduled for erasure, and when",
    description="Answers with any valid credential, also while the account is scheduled "
    "for erasure (when only a sign-in can be used: the API keys were revoked).",
    responses=error_responses(401, 503),
    tags=_TAGS,
)
async def deletion_state(
    request: AnyRequest, db: DB, holder: AccountHolder
) -> Envelope[OK, DeletionState]:
    state = await service.deletion_state(db, user_id=holder.user_id)
    return envelope(request, 200, "Account deletion", state)


@post(
    "/account/deletion",
    status_code=201,
    summary="Delete your account: disabled now, erased for good after a grace period",
    description="At once your links answer 404 link_gone to everyone, and every API key and "
    "session (this one too) is revoked. Sign in again before `erase_at` and cancel with "
    "DELETE /account/deletion to get everything back but the keys; after it, every row the "
    "account owns is erased and its link ids are never given out again. Needs a sign-in "
    "access token (403 for an API key). Asked again, the first date stands.",
    responses=error_responses(401, 403, 503),
    tags=_TAGS,
)
async def request_deletion(
    request: AnyRequest, db: DB, settings: AppSettings, signed_in_holder: SignedInHolder
) -> Envelope[Created, DeletionState]:
    state = await service.request_deletion(db, user_id=signed_in_holder.user_id, settings=settings)
    return envelope(request, 201, f"Your account will be erased on {state.erase_at}", state)


@delete(
    "/account/deletion",
    status_code=200,
    summary="Cancel the deletion of your account",
    description="Your links work again; the API keys revoked by the deletion stay revoked. "
    "Fine when nothing is scheduled; 409 once the erasure has begun. Needs a sign-in "
    "access token (403 for an API key).",
    responses=error_responses(401, 403, 409, 503),
    tags=_TAGS,
)
async def cancel_deletion(
    request: AnyRequest, db: DB, signed_in_holder: SignedInHolder
) -> Envelope[OK, DeletionState]:
    state = await service.cancel_deletion(db, user_id=signed_in_holder.user_id)
    return envelope(request, 200, "Your account is not scheduled for deletion", state)


ROUTES = [
    OptionsRouter(
        path="/",
        route_handlers=[export_account, deletion_state, request_deletion, cancel_deletion],
    )
]
