"""HTTP endpoints for a creator's links and their settings: parse, call the service, wrap."""

from __future__ import annotations

from typing import Annotated

from litestar import delete, get, patch, post
from litestar.params import Body

from anonbox.core.dependencies import DB, AppSettings, PublicDB
from anonbox.core.envelope import (
    BODY_ERRORS,
    OK,
    AnyRequest,
    Created,
    Envelope,
    envelope,
    error_responses,
)
from anonbox.core.i18n import negotiate
from anonbox.core.ids import LINK_ALPHABET, LINK_ID_LENGTH
from anonbox.core.paths import LinkId
from anonbox.identity.dependencies import Creator
from anonbox.links import service
from anonbox.links.dependencies import OwnedLink
from anonbox.links.schemas import (
    LINK_PATCH_RULES,
    LinkIn,
    LinkList,
    LinkOut,
    LinkPatch,
    PublicLink,
)

_TAGS = ["links"]


def asked_language(request: AnyRequest) -> str | None:
    """The language of the client that makes a link (its ``Accept-Language``; None
    without one)."""
    header = request.headers.get("accept-language")
    return negotiate(header) if header else None


_CREATOR_ERRORS = (400, 401, 403, 404, 503)


@post(
    "/links",
    status_code=201,
    summary="Create another link, with its own prompt",
    description=f"A creator may own up to {service.MAX_LINKS_PER_CREATOR} links; "
    "send {} for the default prompt, in the language of your account. A new link's id is "
    f"{LINK_ID_LENGTH} random characters of `{LINK_ALPHABET}` (lower-case letters and "
    "digits without the look-alikes 0, o, 1, l and i); links made earlier keep their ids. "
    "The link speaks the language of the request's Accept-Language to the world (its "
    "previews and cards; without the header, your account's): change it with PATCH.",
    responses=error_responses(400, 401, 403, 409, *BODY_ERRORS, 503),
    tags=_TAGS,
)
async def create_link(
    request: AnyRequest, data: LinkIn, db: DB, creator: Creator
) -> Envelope[Created, LinkOut]:
    prompt = data.prompt if isinstance(data.prompt, str) else None
    made = await service.create_link(
        db, user_id=creator.user_id, prompt=prompt, language=asked_language(request)
    )
    return envelope(request, 201, "Link created", made)


@get(
    "/links",
    summary="Your links, oldest first",
    description="The oldest is your default link: the one GET /user names.",
    responses=error_responses(401, 403, 503),
    tags=_TAGS,
)
async def list_links(request: AnyRequest, db: DB, creator: Creator) -> Envelope[OK, LinkList]:
    return envelope(request, 200, "Links", await service.links_of(db, user_id=creator.user_id))


@get(
    "/links/{link_id:str}",
    summary="One of your links, with its settings (creator)",
    responses=error_responses(*_CREATOR_ERRORS),
    tags=_TAGS,
)
async def get_link(
    request: AnyRequest, owned: OwnedLink, db: DB, creator: Creator
) -> Envelope[OK, LinkOut]:
    found = await service.link(db, link_id=owned.link_id, user_id=creator.user_id)
    return envelope(request, 200, "Link", found)


@get(
    "/links/{link_id:str}/public",
    summary="What anyone sees of a link: its prompt, whether it is paused, and who owns it",
    description="The creator's display name and picture only; never an e-mail or account id.",
    responses=error_responses(400, 404, 503),
    tags=_TAGS,
)
async def get_public_link(
    request: AnyRequest, link_id: LinkId, public_db: PublicDB
) -> Envelope[OK, PublicLink]:
    found = await service.public_link(public_db, link_id=link_id)
    return envelope(request, 200, "Link", found)


@patch(
    "/links/{link_id:str}",
    summary="Change a link's prompt or pause it (creator)",
    description="Send at least one of prompt, paused, pause_for_hours, follow_ups, "
    "hide_dates, muted, crosspost, crosspost_cw, senders, language, card_theme, "
    "federation_visibility, fediverse_discoverable; fields left "
    "out keep their value. "
    "A paused link refuses new messages until "
    "it is resumed (paused: false), or for pause_for_hours. With follow_ups false, senders' "
    "receipts of this link offer no follow-up. With hide_dates, the public page leaves out "
    "when messages came. muted says what happens to a new message with a muted word: "
    "'filter' (the default) keeps it in the link's filtered folder, 'drop' drops it "
    "silently. crosspost posts each answer you publish to your connected Mastodon or "
    "Misskey account with that visibility, with crosspost_cw as its content warning. "
    "With fediverse true, the link is an ActivityPub actor people can follow "
    "(docs/fediverse.md); 409 federation_unavailable where the site does not federate. "
    "fediverse_discoverable lets its profile there be suggested and searched for. "
    "federation_visibility addresses its answers there to everyone ('public'), to everyone "
    "off public timelines ('unlisted'), or to its followers only ('followers'). "
    "senders 'signed_in' takes messages only from people signed in to an anonbox account, "
    "who stay anonymous to you. language is what the link's previews and cards speak to "
    "everyone who sees them (one of 'en', 'ja', 'ko', 'id', 'es'); card_theme their look.",
    responses=error_responses(*_CREATOR_ERRORS, 409, *BODY_ERRORS),
    tags=_TAGS,
)
async def update_link(
    request: AnyRequest,
    owned: OwnedLink,
    data: Annotated[LinkPatch, Body(schema_extra=LINK_PATCH_RULES)],
    db: DB,
    creator: Creator,
    settings: AppSettings,
) -> Envelope[OK, LinkOut]:
    updated = await service.update_link(
        db,
        link_id=owned.link_id,
        user_id=creator.user_id,
        prompt=data.prompt if isinstance(data.prompt, str) else None,
        paused=data.paused if isinstance(data.paused, bool) else None,
        follow_ups=data.follow_ups if isinstance(data.follow_ups, bool) else None,
        pause_for_hours=data.pause_for_hours if isinstance(data.pause_for_hours, int) else None,
        hide_dates=data.hide_dates if isinstance(data.hide_dates, bool) else None,
        muted=data.muted if isinstance(data.muted, str) else None,
        crosspost=data.crosspost if isinstance(data.crosspost, str) else None,
        crosspost_cw=data.crosspost_cw if isinstance(data.crosspost_cw, str) else None,
        senders=data.senders if isinstance(data.senders, str) else None,
        fediverse=data.fediverse if isinstance(data.fediverse, bool) else None,
        settings=settings,
        language=data.language if isinstance(data.language, str) else None,
        card_theme=data.card_theme if isinstance(data.card_theme, str) else None,
        federation_visibility=(
            data.federation_visibility if isinstance(data.federation_visibility, str) else None
        ),
        fediverse_discoverable=(
            data.fediverse_discoverable if isinstance(data.fediverse_discoverable, bool) else None
        ),
    )
    return envelope(request, 200, "Link updated", updated)


@delete(
    "/links/{link_id:str}",
    status_code=200,
    summary="Delete a link with all its messages and replies (creator)",
    description="Your oldest remaining link becomes your default link.",
    responses=error_responses(*_CREATOR_ERRORS),
    tags=_TAGS,
)
async def delete_link(
    request: AnyRequest, owned: OwnedLink, db: DB, creator: Creator
) -> Envelope[OK, None]:
    await service.delete_link(db, link_id=owned.link_id, user_id=creator.user_id)
    return envelope(request, 200, "Link deleted", None)


ROUTES = [create_link, list_links, get_link, get_public_link, update_link, delete_link]
