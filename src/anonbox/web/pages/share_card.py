"""Share cards: an answered message's (``/{link_id}/{message_id}/card.png``) and a link's
own (``/{link_id}/card.png``, "Send me anonymous messages"), PNGs for phone stories, drawn
once per version and limited per client. See ``docs/pages.md``."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from typing import Annotated, Any
from urllib.parse import urlsplit

from litestar import Response, get
from litestar.datastructures import State
from litestar.di import Provide
from litestar.params import Dependency
from litestar.types import ControllerRouterHandler

from anonbox.core.client import client_address
from anonbox.core.dependencies import DB, AppSettings
from anonbox.core.envelope import AnyRequest
from anonbox.core.errors import NotFound
from anonbox.core.i18n import gettext, use_locale
from anonbox.core.ids import ULID_PATTERN
from anonbox.links import service as links
from anonbox.messages.inbox import service as inbox
from anonbox.safety.dependencies import GateDep
from anonbox.web.cards.cache import CardCache
from anonbox.web.cards.draw import CardLabels, render_card, render_link_card
from anonbox.web.infra.routing import site_url
from anonbox.web.pages.public import not_found, public_link

_CARD_VERSION = "2"  # part of the card's ETag: bump when the drawing changes


async def card_words(db: DB, link_id: str, creator_name: str) -> tuple[CardLabels, str]:
    """The words a card draws besides the creator's texts, and the name it shows, in the
    creator's language: a card stands for its creator wherever it is shared, so it reads
    the same for every visitor. The labels are part of the ETag: a card in another
    language is another version."""
    with use_locale(await links.creator_language(db, link_id=link_id)):
        labels = CardLabels(
            anonymous_message=gettext("Anonymous message"),
            replied=gettext("%(name)s replied"),
            invitation=gettext("Send me anonymous messages"),
        )
        return labels, creator_name.strip() or gettext("The creator")


def provide_cards(state: State) -> CardCache:
    cards: CardCache = state.cards
    return cards


@get(
    "/{link_id:str}/{message_id:str}/card.png",
    name="public:card",
    dependencies={"cards": Provide(provide_cards, sync_to_thread=False)},
)
async def share_card(
    request: AnyRequest,
    link_id: str,
    message_id: str,
    db: DB,
    settings: AppSettings,
    gate: GateDep,
    cards: Annotated[CardCache, Dependency(skip_validation=True)],
) -> Response[Any]:
    """An answered message and its latest reply as a PNG for phone stories, drawn once per
    version (``web.cards.cache``) and limited per client."""
    address = client_address(request.scope, request.app.state.trusted_proxies)
    await gate.throttle_client(db, address=address, limit=settings.limit_card)
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
    labels, name = await card_words(db, link.id, link.creator_name)
    return await _card(
        request,
        cards,
        version=(link.prompt, name, message.message_content, reply.message_content),
        labels=labels,
        draw=functools.partial(
            render_card,
            prompt=link.prompt,
            message=message.message_content,
            reply=reply.message_content,
            name=name,
            labels=labels,
        ),
        disposition=f'attachment; filename="anonbox-{message_id}.png"',
    )


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
    dependencies={"cards": Provide(provide_cards, sync_to_thread=False)},
)
async def link_card(
    request: AnyRequest,
    link_id: str,
    db: DB,
    settings: AppSettings,
    gate: GateDep,
    cards: Annotated[CardCache, Dependency(skip_validation=True)],
) -> Response[Any]:
    """The link itself as a PNG for phone stories ("Send me anonymous messages", the
    creator's name, the prompt and the address), drawn and limited like an answer's."""
    address = client_address(request.scope, request.app.state.trusted_proxies)
    await gate.throttle_client(db, address=address, limit=settings.limit_card)
    link = await public_link(db, link_id)
    if isinstance(link, NotFound):
        return not_found(request, link)
    labels, name = await card_words(db, link.id, link.creator_name)
    url = link_address(site_url(request, settings), link.id)
    return await _card(
        request,
        cards,
        version=("link", link.prompt, name, url),
        labels=labels,
        draw=functools.partial(
            render_link_card, name=name, prompt=link.prompt, url=url, labels=labels
        ),
        disposition=f'inline; filename="anonbox-{link.id}.png"',
    )


ROUTES: list[ControllerRouterHandler] = [share_card, link_card]
