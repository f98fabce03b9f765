"""Share cards: an answered message's (``/{link_id}/{message_id}/card.png``) and a link's
own (``/{link_id}/card.png``, "Send me anonymous messages"), PNGs for phone stories; and
the landscape previews of a link (``/{link_id}/preview.png``) and of an answer
(``/{link_id}/a/{answer_id}/preview.png``) for ``og:image``. All in the link's theme and
language, drawn once per version and limited per client. See ``docs/pages.md``."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from litestar import Response, get
from litestar.exceptions import NotFoundException
from litestar.types import ControllerRouterHandler

from anonbox.account import avatar as avatars
from anonbox.account import service as account
from anonbox.core.database import Database
from anonbox.core.dependencies import DB, AppSettings, ClientAddress, PublicDB
from anonbox.core.envelope import AnyRequest
from anonbox.core.errors import Gone, NotFound
from anonbox.core.exception_handlers import handle_anonbox_error, handle_http_exception
from anonbox.core.i18n import _, gettext, use_locale
from anonbox.core.ids import ULID_PATTERN
from anonbox.core.requests import prefers_html
from anonbox.core.settings import Settings
from anonbox.links import service as links
from anonbox.links.schemas import PublicLink
from anonbox.messages.answers import service as answers
from anonbox.messages.inbox import service as inbox
from anonbox.safety.dependencies import GateDep
from anonbox.web.cards.cache import CardCache, CardsDep
from anonbox.web.cards.draw import CardLabels, render_card, render_link_card
from anonbox.web.cards.preview import render_preview
from anonbox.web.cards.themes import theme
from anonbox.web.infra.routing import error_page, site_url
from anonbox.web.pages.public import not_found, public_link

_CARD_VERSION = "4"  # part of the card's ETag: bump when the drawing changes


async def _picture(db: DB, link: PublicLink) -> tuple[str, functools.partial[Any]]:
    """The creator's picture for a card: what names it in the card's version (an upload's
    address is new with every upload), and how the drawing thread gets the image."""
    found = avatars.uploaded_id(link.creator_avatar_url.rsplit("/", 1)[1])
    if found is not None:
        stored = await account.avatar_image(db, avatar_id=found)
        ref = avatars.AvatarRef("uploaded", found) if stored else avatars.AvatarRef("neutral")
        return ref.url, functools.partial(avatars.picture, ref, stored)
    key = avatars.generated_of(link.creator_avatar_url.rsplit("/", 1)[1])
    ref = avatars.AvatarRef("generated", key) if key else avatars.AvatarRef("neutral")
    return ref.url, functools.partial(avatars.picture, ref)


async def card_words(db: DB, link: PublicLink) -> tuple[CardLabels, str]:
    """The words a card draws besides the creator's texts, and the name it shows, in the
    link's language (``PublicLink.language``: its setting, else its creator's): a card
    stands for its creator wherever it is shared, so it reads the same for every visitor.
    The labels are part of the ETag: a card in another language is another version."""
    with use_locale(link.language):
        labels = CardLabels(
            anonymous_message=gettext("Anonymous message"),
            replied=gettext("%(name)s replied"),
            invitation=gettext("Send me anonymous messages"),
        )
        return labels, link.creator_name if link.creator_named else gettext("The creator")


@get(
    "/{link_id:str}/{message_id:str}/card.png",
    name="public:card",
)
async def share_card(
    request: AnyRequest,
    link_id: str,
    message_id: str,
    public_db: PublicDB,
    settings: AppSettings,
    gate: GateDep,
    cards: CardsDep,
    client_address: ClientAddress,
) -> Response[Any]:
    """An answered message and its latest reply as a PNG for phone stories, drawn once per
    version (``web.cards.cache``) and limited per client."""
    db = public_db  # anyone's reads: a replica's when there is one (core.replicas)
    await gate.throttle_client(db, address=client_address, limit=settings.limit_card)
    link = await public_link(db, link_id)
    if isinstance(link, NotFound):
        return not_found(request, link)
    if not ULID_PATTERN.match(message_id):
        return not_found(request)
    message = await inbox.answered_message(db, link_id=link.id, message_id=message_id)
    if message is None:
        return not_found(request)
    try:
        replies = await inbox.replies(
            db, link_id=link.id, message_id=message_id, cursor=None, limit=1, is_creator=False
        )
    except NotFound:
        return not_found(request)
    if not replies.items:
        return not_found(request)
    reply = replies.items[0]
    return await _answer_card(
        request, db, settings, cards, link, message.message_content, reply.message_content,
        filename=f"anonbox-{message_id}.png",
    )  # fmt: skip


@get(
    "/{link_id:str}/a/{answer_id:str}/card.png",
    name="public:answer-card",
)
async def answer_card(
    request: AnyRequest,
    link_id: str,
    answer_id: str,
    public_db: PublicDB,
    settings: AppSettings,
    gate: GateDep,
    cards: CardsDep,
    client_address: ClientAddress,
) -> Response[Any]:
    """A published answer's story card by its answer id (its page's, ``web.pages.answer``):
    the same picture as by its message id, which an answer page must not show (a message
    id tells its send time). 404 for an answer never published, 410 for one removed."""
    db = public_db  # anyone's reads: a replica's when there is one (core.replicas)
    await gate.throttle_client(db, address=client_address, limit=settings.limit_card)
    link = await public_link(db, link_id)
    if isinstance(link, NotFound):
        return not_found(request, link)
    answer = await answers.published_answer(db, link_id=link.id, answer_id=answer_id)
    return await _answer_card(
        request, db, settings, cards, link, answer.message.message_content,
        answer.replies[0].message_content, filename=f"anonbox-{link.id}-{answer_id}.png",
    )  # fmt: skip


async def _answer_card(
    request: AnyRequest,
    db: DB,
    settings: Settings,
    cards: CardCache,
    link: PublicLink,
    question: str,
    reply: str,
    *,
    filename: str,
) -> Response[Any]:
    """An answer's story card: the question and its latest reply."""
    labels, name = await card_words(db, link)
    url = link_address(site_url(request, settings), link.id)  # where to ask, for a story
    picture, load = await _picture(db, link)
    return await _card(
        request,
        cards,
        version=(link.prompt, name, picture, question, reply, url, link.card_theme),
        labels=labels,
        draw=lambda: render_card(
            prompt=link.prompt,
            message=question,
            reply=reply,
            name=name,
            url=url,
            avatar=load(),
            labels=labels,
            look=theme(link.card_theme),
        ),
        disposition=f'attachment; filename="{filename}"',
    )


def answer_cards(
    db: Database, cards: CardCache, settings: Settings
) -> Callable[[str, str], Awaitable[bytes | None]]:
    """Draws an answer's share card outside a request, for the answers posted to a
    creator's fediverse account (``notifications.crosspost``): the same picture as
    ``/{link_id}/{message_id}/card.png``, None when the message has no answer (any more)."""

    async def card(link_id: str, message_id: str) -> bytes | None:
        try:
            link = await links.public_link(db, link_id=link_id)
        except NotFound:
            return None
        message = await inbox.answered_message(db, link_id=link.id, message_id=message_id)
        if message is None:
            return None
        replies = await inbox.replies(
            db, link_id=link.id, message_id=message_id, cursor=None, limit=1, is_creator=False
        )
        if not replies.items:
            return None
        reply = replies.items[0]
        labels, name = await card_words(db, link)
        url = link_address(settings.public_url or "http://localhost", link.id)
        picture, load = await _picture(db, link)
        version = (
            link.prompt, name, picture, message.message_content, reply.message_content, url,
            link.card_theme,
        )  # fmt: skip
        digest = hashlib.sha256(
            "\0".join((_CARD_VERSION, repr(labels), *version)).encode()
        ).hexdigest()[:32]
        return await cards.png(
            digest,
            lambda: render_card(
                prompt=link.prompt,
                message=message.message_content,
                reply=reply.message_content,
                name=name,
                url=url,
                avatar=load(),
                labels=labels,
                look=theme(link.card_theme),
            ),
        )

    return card


async def _card(
    request: AnyRequest,
    cards: CardCache,
    *,
    version: tuple[str, ...],
    labels: CardLabels,
    draw: Callable[[], bytes],
    disposition: str,
) -> Response[Any]:
    """A card's answer: its ETag from what it draws (304 when the browser has it), else
    the PNG, drawn once per version (``web.cards.cache``). Kept briefly by browsers: a card
    changes when the creator replies again, edits the prompt or deletes the message."""
    digest = hashlib.sha256(
        "\0".join((_CARD_VERSION, repr(labels), *version)).encode()
    ).hexdigest()[:32]
    etag = f'"{digest}"'
    headers = {"Cache-Control": "public, max-age=300", "ETag": etag}
    if request.headers.get("if-none-match") == etag:
        return Response(content=b"", status_code=304, headers=headers)
    png = await cards.png(digest, draw)
    headers["Content-Disposition"] = disposition
    return Response(content=png, media_type="image/png", headers=headers)


def link_address(site: str, link_id: str) -> str:
    """The link as a person types it: host and path, no scheme."""
    parts = urlsplit(site)
    return f"{parts.netloc}{parts.path.rstrip('/')}/{link_id}"


@get(
    "/{link_id:str}/card.png",
    name="public:link-card",
)
async def link_card(
    request: AnyRequest,
    link_id: str,
    public_db: PublicDB,
    settings: AppSettings,
    gate: GateDep,
    cards: CardsDep,
    client_address: ClientAddress,
) -> Response[Any]:
    """The link itself as a PNG for phone stories ("Send me anonymous messages", the
    creator's picture and name, the prompt, the QR code and the address), drawn and
    limited like an answer's."""
    db = public_db  # anyone's reads: a replica's when there is one (core.replicas)
    await gate.throttle_client(db, address=client_address, limit=settings.limit_card)
    link = await public_link(db, link_id)
    if isinstance(link, NotFound):
        return not_found(request, link)
    labels, name = await card_words(db, link)
    site = site_url(request, settings)
    url = link_address(site, link.id)
    scanned = f"{site.rstrip('/')}/{link.id}"  # the QR code: with its scheme, so it opens
    picture, load = await _picture(db, link)
    return await _card(
        request,
        cards,
        version=("link", link.prompt, name, picture, url, scanned, link.card_theme),
        labels=labels,
        draw=lambda: render_link_card(
            name=name,
            prompt=link.prompt,
            url=url,
            qr=scanned,
            avatar=load(),
            labels=labels,
            look=theme(link.card_theme),
        ),
        disposition=f'inline; filename="anonbox-{link.id}.png"',
    )


@get(
    "/{link_id:str}/preview.png",
    name="public:link-preview",
)
async def link_preview(
    request: AnyRequest,
    link_id: str,
    public_db: PublicDB,
    settings: AppSettings,
    gate: GateDep,
    cards: CardsDep,
    client_address: ClientAddress,
) -> Response[Any]:
    """The link as a landscape picture (1200 by 630) for a post's preview (``og:image``):
    the invitation, the creator and the prompt, in the link's theme and language."""
    db = public_db  # anyone's reads: a replica's when there is one (core.replicas)
    await gate.throttle_client(db, address=client_address, limit=settings.limit_card)
    link = await public_link(db, link_id)
    if isinstance(link, NotFound):
        return not_found(request, link)
    labels, name = await card_words(db, link)
    url = link_address(site_url(request, settings), link.id)
    picture, load = await _picture(db, link)
    return await _card(
        request,
        cards,
        version=("link-preview", link.prompt, name, picture, url, link.card_theme),
        labels=labels,
        draw=lambda: render_preview(
            name=name,
            prompt=link.prompt,
            url=url,
            avatar=load(),
            labels=labels,
            look=theme(link.card_theme),
        ),
        disposition=f'inline; filename="anonbox-{link.id}-preview.png"',
    )


def _no_answer(request: AnyRequest, missing: NotFound) -> Response[Any]:
    """As the answer's page answers (``web.pages.answer``): 404 for an answer never
    published, 410 for one removed since; an API client gets the envelope."""
    if isinstance(missing, Gone):
        if prefers_html(request):
            return error_page(410, _("This answer was removed."))
        return handle_anonbox_error(request, missing)
    if prefers_html(request):
        return error_page(404, _("There is no answer here. Check the address you were given."))
    return handle_http_exception(request, NotFoundException())


@get(
    "/{link_id:str}/a/{answer_id:str}/preview.png",
    name="public:answer-preview",
)
async def answer_preview(
    request: AnyRequest,
    link_id: str,
    answer_id: str,
    public_db: PublicDB,
    settings: AppSettings,
    gate: GateDep,
    cards: CardsDep,
    client_address: ClientAddress,
) -> Response[Any]:
    """A published answer as a landscape picture (1200 by 630) for its page's preview:
    the creator, the question and the latest reply. 404 for an answer never published,
    410 for one removed since (``published_answer`` tells which)."""
    db = public_db  # anyone's reads: a replica's when there is one (core.replicas)
    await gate.throttle_client(db, address=client_address, limit=settings.limit_card)
    link = await public_link(db, link_id)
    if isinstance(link, NotFound):
        return not_found(request, link)
    try:
        answer = await answers.published_answer(db, link_id=link.id, answer_id=answer_id)
    except NotFound as missing:
        return _no_answer(request, missing)
    question, reply = answer.message.message_content, answer.replies[0].message_content
    labels, name = await card_words(db, link)
    url = link_address(site_url(request, settings), link.id)
    picture, load = await _picture(db, link)
    return await _card(
        request,
        cards,
        version=("answer-preview", name, picture, question, reply, url, link.card_theme),
        labels=labels,
        draw=lambda: render_preview(
            name=name,
            message=question,
            reply=reply,
            url=url,
            avatar=load(),
            labels=labels,
            look=theme(link.card_theme),
        ),
        disposition=f'inline; filename="anonbox-{link.id}-{answer_id}.png"',
    )


ROUTES: list[ControllerRouterHandler] = [
    share_card,
    answer_card,
    link_card,
    link_preview,
    answer_preview,
]
