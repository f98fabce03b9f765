"""The floor of the public pages (issue 43): the send page, an answer page and a link's two
pictures, served by bare Starlette routes that the floor app (``bench/floor.py``) mounts.

On every request a page runs anonbox's statements (through anonbox's own services and
repositories, which hold the SQL text and turn rows into the structs the templates read:
nothing is copied) over the floor's raw driver (``floor_db``), and renders anonbox's
template with anonbox's Jinja environment (``web.infra.routing.TEMPLATES``) in the
visitor's language, gzipped as anonbox gzips pages (level 6, from 1 KiB). Nothing is kept
between requests: this is what one render costs, the line anonbox's page cache is
measured against.

What the floor's pages do not do, on purpose: no session or sign-in lookup, no per-visitor
token or cookie (the anonymous send form as issue 43 wants it: the same for everyone), no
rate limit, no security headers beyond the caching ones. Each page carries a strong ETag,
the digest of what it rendered, and answers 304 when ``If-None-Match`` names it, after
rendering (the plain way: nothing remembered). The pictures are drawn once per version,
as anonbox's card cache does (drawing one costs ~0.15 s); each request still runs the
statements and computes the version.

The statements, per page (federation is off in the bench, so no actor or Note lookup):

``GET /{link_id}`` — ``links.service.public_link``; the answered messages
    (``messages.inbox.service.inbox``, answered only, 10 + 1) and each one's replies
    (``inbox.replies``: its reply count, then up to 10 + 1 replies); the creator's time zone.
``GET /{link_id}/a/{answer_id}`` — ``public_link``; ``answers.service.published_answer``;
    the creator's time zone.
``GET /{link_id}/card.png``, ``/{link_id}/preview.png`` — ``public_link`` (and the
    uploaded picture, where the creator has one).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
from collections.abc import Callable
from typing import Any

from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, request_response

from anonbox.account import avatar as avatars
from anonbox.account import service as account
from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.errors import NotFound
from anonbox.core.i18n import (
    DEFAULT_TIME_ZONE,
    current_language,
    gettext,
    negotiate,
    set_locale,
    use_locale,
)
from anonbox.links import service as links
from anonbox.links.schemas import PublicLink
from anonbox.messages.answers import service as answers
from anonbox.messages.content import MAX_CHARACTERS
from anonbox.messages.inbox import service as inbox
from anonbox.receipts.schemas import RECEIPT_DAYS
from anonbox.web.cards.draw import CardLabels, render_link_card
from anonbox.web.cards.preview import render_preview
from anonbox.web.cards.themes import theme
from anonbox.web.infra.routing import TEMPLATES
from anonbox.web.pages import previews

ENV = TEMPLATES.instance.engine  # anonbox's Jinja environment, its globals and filters
ANSWERS_PER_PAGE = 10  # as web.pages.public
REPLIES_PER_ANSWER = 10
CARD_VERSION = "4"  # as web.pages.share_card

DB: Any = None  # the floor's database (bench/floor.py's lifespan opens it)
_pngs: dict[str, bytes] = {}


def _site(request: Request) -> str:
    return str(request.base_url).rstrip("/")


def _name(link: PublicLink) -> str:
    return link.creator_name if link.creator_named else str(gettext("The creator"))


async def _link(request: Request) -> PublicLink | Response:
    set_locale(negotiate(request.headers.get("accept-language")), DEFAULT_TIME_ZONE)
    try:
        return await links.public_link(DB, link_id=request.path_params["link_id"])
    except NotFound:
        return Response(b"no link", status_code=404)


async def _creator_zone(link_id: str) -> None:
    zone = await links.creator_time_zone(DB, link_id=link_id)
    set_locale(current_language(), zone or DEFAULT_TIME_ZONE)


def _page(request: Request, template: str, context: dict[str, Any], cache: str) -> Response:
    body = ENV.get_template(template).render(**context, request=request).encode()
    etag = f'"{hashlib.sha256(body).hexdigest()[:32]}"'
    headers = {
        "Cache-Control": cache,
        "ETag": etag,
        "Vary": "Accept, Accept-Language",
        "Content-Language": current_language(),
    }
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    return Response(body, media_type="text/html; charset=utf-8", headers=headers)


async def send_page(request: Request) -> Response:
    link = await _link(request)
    if isinstance(link, Response):
        return link
    page = await inbox.inbox(
        DB, link_id=link.id, cursor=None, limit=ANSWERS_PER_PAGE, answered_only=True
    )
    shown = []
    for item in page.items:
        replies = await inbox.replies(
            DB,
            link_id=link.id,
            message_id=item.id,
            cursor=None,
            limit=REPLIES_PER_ANSWER,
            is_creator=False,
        )
        shown.append({"message": item, "replies": replies.items})
    until = await links.pause_end(DB, link_id=link.id) if link.paused else None
    await _creator_zone(link.id)
    site = _site(request)
    context = {
        "link": link,
        "name": _name(link),
        "csrf_field": "_csrf",
        "csrf_token": "",
        "max_characters": MAX_CHARACTERS,
        "text": "",
        "count": 0,
        "error": None,
        "sent": False,
        "receipt_url": None,
        "signin_url": None,
        "paused_until": isoformat_us(until) if until and until > now_us() else None,
        "receipt_days": RECEIPT_DAYS,
        "answers": shown,
        "cursor": None,
        "next_cursor": page.next_cursor,
        "site": site,
        "preview": previews.send_page(site, link),
        "activitypub_id": None,
    }
    return _page(request, "public.html", context, "public, max-age=60")


async def answer_page(request: Request) -> Response:
    link = await _link(request)
    if isinstance(link, Response):
        return link
    try:
        answer = await answers.published_answer(
            DB, link_id=link.id, answer_id=request.path_params["answer_id"]
        )
    except NotFound:
        return Response(b"no answer", status_code=404)
    await _creator_zone(link.id)
    site = _site(request)
    path = f"/{link.id}/a/{answer.answer_id}"
    context = {
        "link": link,
        "name": _name(link),
        "answer": answer,
        "replies": list(reversed(answer.replies)),
        "url": site + path,
        "card": path + "/card.png",
        "preview": previews.answer_page(
            site,
            link,
            answer.answer_id,
            answer.message.message_content,
            answer.replies[0].message_content,
        ),
        "activitypub_id": None,
    }
    return _page(request, "answer.html", context, "public, max-age=60")


async def _picture(link: PublicLink) -> tuple[str, Callable[[], Any]]:
    """As web.pages.share_card's: the picture's address and how to load it."""
    found = avatars.uploaded_id(link.creator_avatar_url.rsplit("/", 1)[1])
    if found is not None:
        stored = await account.avatar_image(DB, avatar_id=found)
        ref = avatars.AvatarRef("uploaded", found) if stored else avatars.AvatarRef("neutral")
        return ref.url, functools.partial(avatars.picture, ref, stored)
    key = avatars.generated_of(link.creator_avatar_url.rsplit("/", 1)[1])
    ref = avatars.AvatarRef("generated", key) if key else avatars.AvatarRef("neutral")
    return ref.url, functools.partial(avatars.picture, ref)


async def _picture_of(request: Request, kind: str) -> Response:
    link = await _link(request)
    if isinstance(link, Response):
        return link
    with use_locale(link.language):
        labels = CardLabels(
            anonymous_message=gettext("Anonymous message"),
            replied=gettext("%(name)s replied"),
            invitation=gettext("Send me anonymous messages"),
        )
        name = _name(link)
    site = _site(request)
    url = f"{site.split('://', 1)[-1]}/{link.id}"
    picture, load = await _picture(link)
    look = theme(link.card_theme)
    draw: Callable[[], bytes]
    if kind == "card":
        scanned = f"{site}/{link.id}"
        version: tuple[str, ...] = ("link", link.prompt, name, picture, url, scanned)
        draw = functools.partial(
            lambda: render_link_card(
                name=name, prompt=link.prompt, url=url, qr=scanned, avatar=load(),
                labels=labels, look=look,
            )
        )  # fmt: skip
    else:
        version = ("link-preview", link.prompt, name, picture, url)
        draw = functools.partial(
            lambda: render_preview(
                name=name, prompt=link.prompt, url=url, avatar=load(), labels=labels, look=look
            )
        )
    digest = hashlib.sha256(
        "\0".join((CARD_VERSION, repr(labels), *version, link.card_theme)).encode()
    ).hexdigest()[:32]
    headers = {"Cache-Control": "public, max-age=300", "ETag": f'"{digest}"'}
    if request.headers.get("if-none-match") == headers["ETag"]:
        return Response(status_code=304, headers=headers)
    png = _pngs.get(digest)
    if png is None:
        png = _pngs[digest] = await asyncio.to_thread(draw)
    return Response(png, media_type="image/png", headers=headers)


async def link_card(request: Request) -> Response:
    return await _picture_of(request, "card")


async def link_preview(request: Request) -> Response:
    return await _picture_of(request, "preview")


def _gzipped(endpoint: Callable[[Request], Any]) -> GZipMiddleware:
    return GZipMiddleware(request_response(endpoint), minimum_size=1024, compresslevel=6)


def routes() -> list[Route]:
    """The pages, gzipped for a client that takes it (not the PNGs: anonbox excludes them)."""
    return [
        Route("/{link_id}/card.png", link_card, methods=["GET"]),
        Route("/{link_id}/preview.png", link_preview, methods=["GET"]),
        Route("/{link_id}/a/{answer_id}", _gzipped(answer_page), methods=["GET"]),
        Route("/{link_id}", _gzipped(send_page), methods=["GET"]),
    ]
