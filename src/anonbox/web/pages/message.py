"""Page routes: one message of the inbox on its own page, where the creator answers it,
and the actions on it.

The inbox is a compact list (``web.pages.inbox``); a tap opens the message here. Every
action is a plain form post carrying the CSRF field, answered with a redirect back that
names what it did (``?done=``, ``web.infra.forms.Done``), so it works without JavaScript;
``static/inplace.js`` sends the same forms with fetch and puts the page it gets back in
place, without a reload. Deleting asks first (a confirmation page) without scripts, and
can be undone for a few seconds with them. Actions call the same services as the JSON API.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get, post
from litestar.datastructures import FormMultiDict
from litestar.response import Redirect, Template
from litestar.types import ControllerRouterHandler

from anonbox.account import service as account
from anonbox.core.database import Database
from anonbox.core.dependencies import DB, AppSettings
from anonbox.core.i18n import _
from anonbox.core.paths import RowId
from anonbox.core.settings import Settings
from anonbox.messages import service as messages
from anonbox.messages.dependencies import LikeWriterDep, ReplyWriterDep
from anonbox.messages.inbox import service as inbox
from anonbox.safety import service as blocks
from anonbox.web.infra.dependencies import (
    OwnedPageLink,
    SignedInBrowser,
    SignedInForm,
    signed_in_pages,
)
from anonbox.web.infra.forms import (
    Done,
    back_path,
    confirm_page,
    dashboard_page,
    redirect_to,
    text_field,
)
from anonbox.web.infra.routing import site_url
from anonbox.web.infra.session import Browser

AnyRequest = Request[Any, Any, Any]

_MESSAGE = "/dashboard/links/{link_id:str}/messages/{message_id:str}"


def _inbox_of(link_id: str) -> str:
    return f"/dashboard/links/{link_id}"


def _page_of(link_id: str, message_id: str) -> str:
    return f"{_inbox_of(link_id)}/messages/{message_id}"


@get(_MESSAGE)
async def message_page(
    request: AnyRequest,
    browser: SignedInBrowser,
    link: OwnedPageLink,
    message_id: RowId,
    db: DB,
    settings: AppSettings,
) -> Template:
    """The message, its replies, the answer form, Share once answered, and its actions."""
    # Opened, so read (issue 41): the inbox's unread count drops by one.
    message = await inbox.open_message(db, link_id=link.link_id, message_id=message_id)
    owned = await inbox.links_with_unread(db, browser.principal.user_id)
    prompt = next(str(row["prompt"]) for row in owned if row["id"] == link.link_id)
    share_url = f"{site_url(request, settings)}/{link.link_id}"
    # The blocks made from this message only (never another message's of the same sender:
    # that would tell which messages share one), each shown with its undo.
    made = await blocks.blocks_from(db, owner_id=browser.principal.user_id, message_id=message_id)
    return dashboard_page(
        request,
        browser,
        settings,
        "dashboard_message.html",
        {
            "profile": await account.signed_in_as(db, user_id=browser.principal.user_id),
            "link": {"id": link.link_id, "prompt": prompt},
            "m": message,
            "base": _inbox_of(link.link_id),
            "url": _page_of(link.link_id, message_id),
            "here": _page_of(link.link_id, message_id),
            "share_url": share_url,
            # The answer's own page and card, by its answer id (issue 41).
            "answer_url": f"{share_url}/a/{message.answer_id}" if message.answer_id else share_url,
            "card_url": f"/{link.link_id}/a/{message.answer_id}/card.png"
            if message.answer_id
            else f"/{link.link_id}/{message_id}/card.png",
            "blocked": {
                "sender": next((b for b in made if not b.network), None),
                "network": next((b for b in made if b.network), None),
            },
        },
    )


def _back(
    browser: Browser, settings: Settings, form: FormMultiDict, default: str, done: Done
) -> Redirect:
    return redirect_to(browser, settings, back_path(form, default), done)


@post(_MESSAGE + "/reply", status_code=303)
async def reply(
    browser: SignedInBrowser,
    link: OwnedPageLink,
    message_id: RowId,
    form: SignedInForm,
    db: DB,
    replies: ReplyWriterDep,
    settings: AppSettings,
) -> Redirect:
    """Answer the message; the page it returns to offers Share at once (``#share``)."""
    content = text_field(form, "message_content")
    await messages.reply(
        db,
        replies,
        link_id=link.link_id,
        owner_id=browser.principal.user_id,
        message_id=message_id,
        content=content,
    )
    back = back_path(form, _inbox_of(link.link_id))
    if back.split("?")[0] == _page_of(link.link_id, message_id):
        back = back.split("#")[0] + "#share"
    return redirect_to(browser, settings, back, Done.REPLIED)


@post(_MESSAGE + "/like", status_code=303)
async def like(
    browser: SignedInBrowser,
    link: OwnedPageLink,
    message_id: RowId,
    form: SignedInForm,
    db: DB,
    likes: LikeWriterDep,
    settings: AppSettings,
) -> Redirect:
    state = await messages.toggle_like(
        db,
        likes,
        link_id=link.link_id,
        owner_id=browser.principal.user_id,
        message_id=message_id,
    )
    done = Done.LIKED if state.like_by_creator else Done.UNLIKED
    return _back(browser, settings, form, _page_of(link.link_id, message_id), done)


@get(_MESSAGE + "/delete")
async def confirm_delete_message(
    request: AnyRequest,
    browser: SignedInBrowser,
    link: OwnedPageLink,
    message_id: RowId,
    db: DB,
    settings: AppSettings,
) -> Template:
    """Without scripts, "Delete message…" asks first (with them it can be undone)."""
    message = await inbox.one(db, link_id=link.link_id, message_id=message_id)
    return await confirm_page(
        request,
        browser,
        db,
        settings,
        title=_("Delete this message?"),
        text=_("“%(text)s” and its replies are deleted for good.", text=_excerpt(message.content)),
        action=_page_of(link.link_id, message_id) + "/delete",
        button=_("Delete message"),
        cancel=_page_of(link.link_id, message_id),
        back=_inbox_of(link.link_id),
    )


@post(_MESSAGE + "/delete", status_code=303)
async def delete_message(
    browser: SignedInBrowser,
    link: OwnedPageLink,
    message_id: RowId,
    form: SignedInForm,
    db: DB,
    settings: AppSettings,
) -> Redirect:
    await messages.delete_message(db, link_id=link.link_id, message_id=message_id)
    back = back_path(form, _inbox_of(link.link_id))
    if back.split("?")[0].split("#")[0] == _page_of(link.link_id, message_id):
        back = _inbox_of(link.link_id)  # its own page is gone
    return redirect_to(browser, settings, back, Done.DELETED)


_REPLY = _MESSAGE + "/replies/{reply_id:str}/delete"


@get(_REPLY)
async def confirm_delete_reply(
    request: AnyRequest,
    browser: SignedInBrowser,
    link: OwnedPageLink,
    message_id: RowId,
    reply_id: RowId,
    db: DB,
    settings: AppSettings,
) -> Template:
    message = await inbox.one(db, link_id=link.link_id, message_id=message_id)
    found = next((r for r in message.replies if r.id == reply_id), None)
    page = _page_of(link.link_id, message_id)
    return await confirm_page(
        request,
        browser,
        db,
        settings,
        title=_("Delete this reply?"),
        text=_(
            "Your reply “%(text)s” is deleted for good; the message stays.",
            text=_excerpt(found.content if found else ""),
        ),
        action=f"{page}/replies/{reply_id}/delete",
        button=_("Delete reply"),
        cancel=page,
        back=page,
    )


@post(_REPLY, status_code=303)
async def delete_reply(
    browser: SignedInBrowser,
    link: OwnedPageLink,
    message_id: RowId,
    reply_id: RowId,
    form: SignedInForm,
    db: DB,
    settings: AppSettings,
) -> Redirect:
    await messages.delete_reply(
        db,
        link_id=link.link_id,
        owner_id=browser.principal.user_id,
        message_id=message_id,
        reply_id=reply_id,
    )
    page = _page_of(link.link_id, message_id)
    return _back(browser, settings, form, page, Done.REPLY_DELETED)


@get(_MESSAGE + "/block")
async def confirm_block_sender(
    request: AnyRequest,
    browser: SignedInBrowser,
    link: OwnedPageLink,
    message_id: RowId,
    db: DB,
    settings: AppSettings,
) -> Template:
    """ "Block sender…" asks first: a tap too many is cheap, a block made by mistake is not."""
    return await _confirm_block(
        request, browser, link.link_id, message_id, db, settings, network=False
    )


@get(_MESSAGE + "/block-network")
async def confirm_block_network(
    request: AnyRequest,
    browser: SignedInBrowser,
    link: OwnedPageLink,
    message_id: RowId,
    db: DB,
    settings: AppSettings,
) -> Template:
    return await _confirm_block(
        request, browser, link.link_id, message_id, db, settings, network=True
    )


async def _confirm_block(
    request: AnyRequest,
    browser: Browser,
    link_id: str,
    message_id: str,
    db: Database,
    settings: Settings,
    *,
    network: bool,
) -> Template:
    message = await inbox.one(db, link_id=link_id, message_id=message_id)
    page = _page_of(link_id, message_id)
    excerpt = _excerpt(message.content)
    if network:
        title = _("Block the sender's whole network?")
        text = _(
            "Nothing sent from the network that “%(text)s” came from reaches your inbox from"
            " now on: the sender's address and the ones around it, which may be other"
            " people's too (a school, an office, a mobile provider). Messages already here"
            " stay, and nobody is told. You can undo it on this message's page.",
            text=excerpt,
        )
        button = _("Block their network")
    else:
        title = _("Block this message's sender?")
        text = _(
            "What the sender of “%(text)s” sends from now on does not reach your inbox."
            " Messages already here stay, and they are not told. You can undo it on this"
            " message's page.",
            text=excerpt,
        )
        button = _("Block sender")
    return await confirm_page(
        request,
        browser,
        db,
        settings,
        title=title,
        text=text,
        action=page + ("/block-network" if network else "/block"),
        button=button,
        cancel=page,
        back=page,
    )


async def _block(
    browser: Browser,
    link_id: str,
    message_id: str,
    form: FormMultiDict,
    db: Database,
    settings: Settings,
    *,
    network: bool,
) -> Redirect:
    async with db.transaction() as tx:  # the sender as the message names them, and the block
        target = await blocks.sender_of(tx, message_id=message_id, link_id=link_id)
        await blocks.block(
            tx,
            owner_id=browser.principal.user_id,
            target=target,
            network=network,
        )
    done = Done.NETWORK_BLOCKED if network else Done.BLOCKED
    return _back(browser, settings, form, _page_of(link_id, message_id), done)


@post(_MESSAGE + "/block", status_code=303)
async def block_sender(
    browser: SignedInBrowser,
    link: OwnedPageLink,
    message_id: RowId,
    form: SignedInForm,
    db: DB,
    settings: AppSettings,
) -> Redirect:
    return await _block(browser, link.link_id, message_id, form, db, settings, network=False)


@post(_MESSAGE + "/block-network", status_code=303)
async def block_network(
    browser: SignedInBrowser,
    link: OwnedPageLink,
    message_id: RowId,
    form: SignedInForm,
    db: DB,
    settings: AppSettings,
) -> Redirect:
    """Block the sender's whole network (IPv4 /24, IPv6 /48): for one who rotates addresses."""
    return await _block(browser, link.link_id, message_id, form, db, settings, network=True)


@post(_MESSAGE + "/blocks/{block_id:str}/delete", status_code=303)
async def unblock(
    browser: SignedInBrowser,
    link: OwnedPageLink,
    message_id: RowId,
    block_id: RowId,
    form: SignedInForm,
    db: DB,
    settings: AppSettings,
) -> Redirect:
    """Undo a block from the message it was made from (only a block made from it)."""
    await blocks.unblock(
        db, owner_id=browser.principal.user_id, block_id=block_id, message_id=message_id
    )
    page = _page_of(link.link_id, message_id)
    return _back(browser, settings, form, page, Done.UNBLOCKED)


_EXCERPT = 80


def _excerpt(text: str) -> str:
    return text if len(text) <= _EXCERPT else text[: _EXCERPT - 1].rstrip() + "…"


ROUTES: list[ControllerRouterHandler] = [
    signed_in_pages(
        message_page,
        reply,
        like,
        confirm_delete_message,
        delete_message,
        confirm_delete_reply,
        delete_reply,
        confirm_block_sender,
        confirm_block_network,
        block_sender,
        block_network,
        unblock,
    )
]
