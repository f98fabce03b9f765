"""HTTP endpoints for the account as a whole: export it, delete it, cancel the deletion."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import msgspec
from litestar import delete, get, patch, post, put
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import (
    OpenAPIFormat,
    OpenAPIMediaType,
    OpenAPIType,
    Operation,
    RequestBody,
    Schema,
)
from litestar.params import Body
from litestar.response import Stream

from anonbox.account import avatar, service
from anonbox.account.dependencies import (
    AccountHolder,
    SignedInHolder,
)
from anonbox.account.export import EXPORT_MESSAGE, export_filename, open_export
from anonbox.account.schemas import (
    PROFILE_PATCH_RULES,
    AccountExport,
    AvatarOut,
    DeletionState,
    ProfilePatch,
    PublicProfile,
)
from anonbox.core.dependencies import DB, AppSettings
from anonbox.core.envelope import (
    BODY_ERRORS,
    OK,
    AnyRequest,
    Created,
    Envelope,
    ErrorEnvelope,
    envelope,
    error_responses,
    streamed_envelope,
)
from anonbox.core.errors import UnsupportedMediaType, ValidationFailed
from anonbox.core.routing import OptionsRouter
from anonbox.identity.dependencies import Creator

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


@get(
    "/account/profile",
    summary="Your public name and bio",
    description="display_name is null until you choose one: public pages, cards and the "
    "public link show a neutral name meanwhile, never anything from your e-mail address.",
    responses=error_responses(401, 403, 503),
    tags=_TAGS,
)
async def public_profile(
    request: AnyRequest, db: DB, creator: Creator
) -> Envelope[OK, PublicProfile]:
    profile = await service.public_profile(db, user_id=creator.user_id)
    return envelope(request, 200, "Profile", profile)


@patch(
    "/account/profile",
    summary="Choose your public name and bio",
    description="Send display_name (1 to 80 characters), bio (up to 160; empty or null "
    "removes it), or both; a field left out keeps its value. Both are NFC-normalised and "
    "trimmed; control characters are refused. A bad value changes nothing (400).",
    responses=error_responses(400, 401, 403, 503, *BODY_ERRORS),
    tags=_TAGS,
)
async def update_public_profile(
    request: AnyRequest,
    data: Annotated[ProfilePatch, Body(schema_extra=PROFILE_PATCH_RULES)],
    db: DB,
    creator: Creator,
) -> Envelope[OK, PublicProfile]:
    if data.display_name is msgspec.UNSET and data.bio is msgspec.UNSET:
        raise ValidationFailed("Send display_name, bio or both")
    profile = await service.set_public_profile(
        db,
        user_id=creator.user_id,
        display_name=data.display_name if isinstance(data.display_name, str) else None,
        bio=data.bio if isinstance(data.bio, str) else None,
        set_bio=data.bio is not msgspec.UNSET,
    )
    return envelope(request, 200, "Profile updated", profile)


# --- the avatar ------------------------------------------------------------------------------

_AVATAR_TYPES = (*avatar.MEDIA_TYPES, "application/octet-stream")


@dataclass
class _AvatarUpload(Operation):
    """The picture is the request's body, not JSON: documented here, since the handler
    reads the body itself (with a limit of its own)."""

    def __post_init__(self) -> None:
        picture = Schema(
            type=OpenAPIType.STRING,
            format=OpenAPIFormat.BINARY,
            max_length=avatar.MAX_BYTES,
            description="The picture file itself, at most 2 MB",
        )
        self.request_body = RequestBody(
            content={kind: OpenAPIMediaType(schema=picture) for kind in avatar.MEDIA_TYPES},
            required=True,
            description="A PNG, JPEG or WebP file as the body (`curl -X PUT "
            "--data-binary @me.jpg -H 'Content-Type: image/jpeg'`).",
        )


async def _body(request: AnyRequest) -> bytes:
    """The body, read up to one byte past the limit: anything larger is refused before
    the rest of it arrives."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind and kind not in _AVATAR_TYPES:
        raise UnsupportedMediaType(
            "Send the picture itself as the body, with Content-Type image/png, image/jpeg "
            "or image/webp"
        )
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > avatar.MAX_BYTES:
            raise avatar.UnusableAvatar("A picture can be at most 2 MB", "too_large")
    return bytes(body)


@get(
    "/account/avatar",
    summary="The address of your picture",
    description="Your uploaded picture's address, or that of the one generated for you "
    "(a neutral silhouette until you choose a display name).",
    responses=error_responses(401, 403, 503),
    tags=_TAGS,
)
async def get_avatar(request: AnyRequest, db: DB, creator: Creator) -> Envelope[OK, AvatarOut]:
    return envelope(request, 200, "Avatar", await service.avatar_of(db, user_id=creator.user_id))


@put(
    "/account/avatar",
    summary="Upload your picture",
    description="The body is the picture itself: a PNG, JPEG or WebP file of at most 2 MB "
    "and at most 16 megapixels (a JPEG 64), recognised by its content. It is turned upright, "
    "cropped square from its centre, scaled to 256 x 256 and stored as a new WebP: nothing "
    "of the file but its pixels is kept (no EXIF, location, colour profile or other "
    "metadata). Its public address (`avatar_url`) changes with every upload. Anything "
    "else (another format, a damaged file, too many bytes or pixels) is a 400 that "
    "changes nothing.",
    status_code=200,
    request_max_body_size=None,  # read by _body, with the picture's own limit
    operation_class=_AvatarUpload,
    responses={
        **error_responses(400, 401, 403, 503),
        415: ResponseSpec(
            data_container=ErrorEnvelope,
            description="A Content-Type other than image/png, image/jpeg, image/webp or "
            "application/octet-stream",
            generate_examples=False,
        ),
    },
    tags=_TAGS,
)
async def upload_avatar(request: AnyRequest, db: DB, creator: Creator) -> Envelope[OK, AvatarOut]:
    data = await _body(request)
    uploaded = await service.set_avatar(db, user_id=creator.user_id, data=data)
    return envelope(request, 200, "Avatar uploaded", uploaded)


@delete(
    "/account/avatar",
    status_code=200,
    summary="Remove your picture",
    description="Back to the generated one; fine when there was none.",
    responses=error_responses(401, 403, 503),
    tags=_TAGS,
)
async def delete_avatar(request: AnyRequest, db: DB, creator: Creator) -> Envelope[OK, AvatarOut]:
    removed = await service.delete_avatar(db, user_id=creator.user_id)
    return envelope(request, 200, "Avatar removed", removed)


ROUTES = [
    OptionsRouter(
        path="/",
        route_handlers=[
            export_account,
            deletion_state,
            request_deletion,
            cancel_deletion,
            public_profile,
            update_public_profile,
            get_avatar,
            upload_avatar,
            delete_avatar,
        ],
    )
]
