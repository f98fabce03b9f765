"""An answer's own page, ``/{link_id}/a/{answer_id}``: the question, the creator's
replies, who they are, the ways to pass it on, and the way to ask them one's own question.
See ``docs/pages.md``; the ids and the 404/410 rules are ``messages.answers``'s.

The page is the same for every visitor but for its language: no session, no form, no
cookie (asking one's own question is the send page's work, one tap away).
"""

from __future__ import annotations

from typing import Any

from litestar import Response, get
from litestar.exceptions import NotFoundException
from litestar.response import Template
from litestar.types import ControllerRouterHandler

from anonbox.core.dependencies import AppSettings, PublicDB
from anonbox.core.envelope import AnyRequest
from anonbox.core.errors import Gone, NotFound
from anonbox.core.exception_handlers import handle_anonbox_error, handle_http_exception
from anonbox.core.i18n import _, current_language
from anonbox.core.requests import prefers_html
from anonbox.federation import negotiation
from anonbox.federation.dependencies import FederationDep
from anonbox.links import service as links
from anonbox.messages.answers import service as answers
from anonbox.web.infra import page_cache
from anonbox.web.infra.locale import in_creator_zone
from anonbox.web.infra.routing import error_page, site_url
from anonbox.web.pages import previews
from anonbox.web.pages.public import not_found, public_link, shown_name


def answer_path(link_id: str, answer_id: str) -> str:
    return f"/{link_id}/a/{answer_id}"


def _missing(request: AnyRequest, missing: NotFound) -> Response[Any]:
    """Never published (or no such id): the page any unknown address under the link gets.
    Published, then removed: 410. An API client gets the envelope, as on the send page."""
    if isinstance(missing, Gone):
        if prefers_html(request):
            return error_page(410, _("This answer was removed."))
        return handle_anonbox_error(request, missing)
    if prefers_html(request):
        return error_page(404, _("There is no answer here. Check the address you were given."))
    return handle_http_exception(request, NotFoundException())


@get("/{link_id:str}/a/{answer_id:str}", name="public:answer")
async def answer_page(
    request: AnyRequest,
    link_id: str,
    answer_id: str,
    public_db: PublicDB,
    settings: AppSettings,
    federation: FederationDep,
) -> Response[Any]:
    db = public_db  # anyone's reads: a replica's when there is one (core.replicas)
    activitypub = negotiation.activitypub_type(request.headers.get("accept"), page=True)
    # The page as everyone gets it (but for its language): kept per content version,
    # conditional, public for shared caches (web.infra.page_cache). A fediverse server's
    # request is answered below (the Note while the link is followable).
    # A signed-in browser (the creator, say, who just removed an answer) gets it fresh and
    # private: its browser keeps no copy to show them after a change.
    shared = not activitypub and not page_cache.has_session(request)
    version = await links.content_version(db, link_id=link_id) if shared else None
    if version is not None:
        site = site_url(request, settings)
        key = ("answer", link_id, answer_id, version[0], current_language(), site)

        async def render() -> bytes | Response[Any]:
            shown = await _answer(request, db, settings, federation, link_id, answer_id, None)
            if isinstance(shown, Response):
                return shown
            return page_cache.render_template(request, "answer.html", shown)

        return await page_cache.public_page(request, key, render, vary="Accept")
    shown = await _answer(request, db, settings, federation, link_id, answer_id, activitypub)
    if isinstance(shown, Response):
        return shown
    return Template(
        template_name="answer.html",
        context=shown,
        headers={"Cache-Control": page_cache.PRIVATE, "Vary": "Accept"},
    )


async def _answer(
    request: AnyRequest,
    db: PublicDB,
    settings: AppSettings,
    federation: FederationDep,
    link_id: str,
    answer_id: str,
    activitypub: str | None,
) -> Response[Any] | dict[str, Any]:
    """The page's context; or what to answer instead: a 404 or 410 page, or the answer's
    Note for a fediverse server (``activitypub``: the type it asked for)."""
    link = await public_link(db, link_id)
    if isinstance(link, NotFound):
        return not_found(request, link)
    try:
        answer = await answers.published_answer(db, link_id=link.id, answer_id=answer_id)
    except NotFound as missing:
        return _missing(request, missing)
    # A fediverse server asking for the address a person pasted: the answer's Note (its
    # first reply's: the replies come newest first).
    oldest_first = [reply.reply_message_id for reply in reversed(answer.replies)]
    note = await negotiation.note_of(db, federation, link.id, oldest_first)
    if note is not None and activitypub:
        return negotiation.document(note, activitypub)
    await in_creator_zone(db, link.id)  # times as the creator reads them
    site = site_url(request, settings)
    path = answer_path(link.id, answer.answer_id)
    question = answer.message.message_content
    return {
        "link": link,
        "name": shown_name(link),
        "answer": answer,
        # Oldest first, as a conversation reads (the service gives the newest first).
        "replies": list(reversed(answer.replies)),
        "url": site + path,
        "card": path + "/card.png",
        "preview": previews.answer_page(
            site, link, answer.answer_id, question, answer.replies[0].message_content
        ),
        # Its ActivityPub face (<link rel="alternate">), while the link is followable.
        "activitypub_id": None if note is None else note["id"],
    }


ROUTES: list[ControllerRouterHandler] = [answer_page]
