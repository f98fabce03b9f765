"""The ActivityPub documents a followable link is made of, as plain JSON (no SQL, no HTTP).

Every id is an address under ``ANONBOX_PUBLIC_URL`` (``Site``): the actor
``/ap/links/{link_id}``, its inbox, outbox and followers under it, its key
``…#main-key``, an answer ``…/answers/{reply_id}``, and activities ``…/activities/{id}``.
What an actor shows: the creator's chosen name (else a neutral one), the link's prompt,
the picture the link's page shows. Never the creator's e-mail or account id, never
anything about a sender. What a person wrote (the name, the prompt, a question and its
answer) is ``core.text.isolated``: a ``name`` is plain text, and servers strip ``<bdi>``
from HTML, so an override in it is closed before anything a server shows next to it.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from anonbox.core.clock import isoformat_us
from anonbox.core.i18n import gettext, use_locale
from anonbox.core.text import isolated

AS = "https://www.w3.org/ns/activitystreams"
SECURITY = "https://w3id.org/security/v1"
PUBLIC = "https://www.w3.org/ns/activitystreams#Public"
# Mastodon's extension terms, as Mastodon publishes them in its own documents, so that a
# JSON-LD processor (Fedify among them) reads these properties at all: without a term a
# compacted key such as "discoverable" expands to nothing and is dropped.
EXTENSIONS: dict[str, Any] = {
    "manuallyApprovesFollowers": "as:manuallyApprovesFollowers",
    "sensitive": "as:sensitive",
    "toot": "http://joinmastodon.org/ns#",
    "featured": {"@id": "toot:featured", "@type": "@id"},
    "discoverable": "toot:discoverable",
    "indexable": "toot:indexable",
}
CONTEXT: list[Any] = [AS, SECURITY, EXTENSIONS]
ACTIVITY_JSON = "application/activity+json"
NEUTRAL_NAME = "anonbox"
ACTOR_TYPE = "Service"  # a link is not a person; also its Tombstone's formerType
# Outbox pages list this many of the newest answers.
OUTBOX_ITEMS = 20


@dataclass(frozen=True, slots=True)
class Site:
    """The public address everything federated is named under."""

    url: str  # ANONBOX_PUBLIC_URL, without a final slash

    @property
    def host(self) -> str:
        """The host (and port) acct: addresses are under."""
        return urlsplit(self.url).netloc.lower()

    def actor(self, link_id: str) -> str:
        return f"{self.url}/ap/links/{link_id}"

    def key(self, link_id: str) -> str:
        return f"{self.actor(link_id)}#main-key"

    def answer(self, link_id: str, reply_id: str) -> str:
        return f"{self.actor(link_id)}/answers/{reply_id}"

    def activity(self, link_id: str, activity_id: str) -> str:
        return f"{self.actor(link_id)}/activities/{activity_id}"

    def page(self, link_id: str) -> str:
        return f"{self.url}/{link_id}"

    @property
    def shared_inbox(self) -> str:
        """The one inbox of all the site's actors (``endpoints.sharedInbox``)."""
        return f"{self.url}/ap/inbox"


@dataclass(frozen=True, slots=True)
class Profile:
    link_id: str
    name: str | None  # the creator's chosen name
    prompt: str
    avatar_url: str  # a path on this site, of a raster picture (servers show no SVG)
    public_key: str
    avatar_type: str = "image/png"  # the picture's media type
    discoverable: bool = False  # the creator's opt-in (links.fediverse_discoverable)
    published: int | None = None  # µs: when the link was made


# What anonbox's followers are told whenever it changes: the ``Update`` watch
# (``service.sweep``) compares what the actor is made of, and this. Raise it when
# ``actor()`` says something new for the same link, so every follower is told once.
ACTOR_SHAPE = "2"


def actor(site: Site, p: Profile) -> dict[str, Any]:
    """The link as an actor. No header ``image``: anonbox has no header picture.
    ``manuallyApprovesFollowers`` is false because every Follow is accepted at once
    (``service._follow`` sends the Accept in the same transaction)."""
    base = site.actor(p.link_id)
    name = isolated(p.name) if p.name else NEUTRAL_NAME
    body: dict[str, Any] = {
        "@context": CONTEXT,
        "id": base,
        "type": ACTOR_TYPE,
        "preferredUsername": p.link_id,
        "name": name,
        "summary": f"<p>{html.escape(isolated(p.prompt))}</p>",
        "url": site.page(p.link_id),
        "inbox": f"{base}/inbox",
        "outbox": f"{base}/outbox",
        "followers": f"{base}/followers",
        "featured": f"{base}/featured",
        "endpoints": {"sharedInbox": site.shared_inbox},
        "manuallyApprovesFollowers": False,
        "discoverable": p.discoverable,
        "indexable": p.discoverable,
        "icon": {"type": "Image", "mediaType": p.avatar_type, "url": f"{site.url}{p.avatar_url}"},
        "publicKey": {"id": site.key(p.link_id), "owner": base, "publicKeyPem": p.public_key},
    }
    if p.published is not None:
        body["published"] = isoformat_us(p.published)
    return body


@dataclass(frozen=True, slots=True)
class Answer:
    link_id: str
    message_id: str
    reply_id: str
    question: str
    answer: str
    prompt: str
    answered_at: int  # µs
    answer_id: str | None = None  # its page's id (None only for a reply older than pages)
    language: str = "en"  # the link's (else its creator's, else English)
    warning: str | None = None  # the link's content warning (``crosspost_cw``)
    visibility: str = "public"  # the link's ``federation_visibility``


def addressing(site: Site, link_id: str, visibility: str) -> tuple[list[str], list[str]]:
    """``to`` and ``cc`` as Mastodon reads a status's visibility from them: public (to
    Public), unlisted (Public only in ``cc``: off public timelines), followers only (no
    Public at all)."""
    followers = f"{site.actor(link_id)}/followers"
    if visibility == "unlisted":
        return [followers], [PUBLIC]
    if visibility == "followers":
        return [followers], []
    return [PUBLIC], [followers]


def note(site: Site, a: Answer) -> dict[str, Any]:
    """An answer as a Note: its ``url`` the answer's own page (``/{link}/a/{answer_id}``),
    its text ending with the send page's address (where to ask), its card by the answer
    id (a message id tells its send time); its ``id`` the reply's, as it always was. Its
    labels and the card's description speak the link's language (``contentMap`` says
    which); the link's content warning is its ``summary`` (plain text, as Mastodon's
    ``spoiler_text``), with ``sensitive``; ``to``/``cc`` are the link's visibility."""
    page = site.page(a.link_id)
    shown = urlsplit(page).netloc + urlsplit(page).path
    own = page if a.answer_id is None else f"{page}/a/{a.answer_id}"
    card = f"{page}/{a.message_id}/card.png" if a.answer_id is None else f"{own}/card.png"
    question, answer = isolated(a.question), isolated(a.answer)
    with use_locale(a.language):  # the labels are escaped before what people wrote fills them
        asked = html.escape(gettext("Anonymous question: %(question)s"))
        said = html.escape(gettext("My answer: %(answer)s"))
        described = gettext(
            "A card with an anonymous question, “%(question)s”, and the answer, “%(answer)s”.",
            question=question,
            answer=answer,
        )
    content = (
        f"<p>{asked % {'question': html.escape(question)}}</p>"
        f"<p>{said % {'answer': html.escape(answer)}}</p>"
        f'<p><a href="{html.escape(page)}">{html.escape(shown)}</a></p>'
    )
    to, cc = addressing(site, a.link_id, a.visibility)
    body: dict[str, Any] = {
        "id": site.answer(a.link_id, a.reply_id),
        "type": "Note",
        "attributedTo": site.actor(a.link_id),
        "content": content,
        "contentMap": {a.language: content},
        "url": own,
        "published": isoformat_us(a.answered_at),
        "to": to,
        "cc": cc,
        "sensitive": bool(a.warning),
        "attachment": [
            {"type": "Document", "mediaType": "image/png", "url": card, "name": described}
        ],
    }
    if a.warning:
        body["summary"] = isolated(a.warning)
    return body


def create(site: Site, a: Answer) -> dict[str, Any]:
    body = note(site, a)
    return {
        "@context": CONTEXT,
        "id": site.activity(a.link_id, f"create-{a.reply_id}"),
        "type": "Create",
        "actor": site.actor(a.link_id),
        "published": body["published"],
        "to": body["to"],
        "cc": body["cc"],
        "object": body,
    }


def delete(site: Site, link_id: str, reply_id: str, visibility: str = "public") -> dict[str, Any]:
    to, cc = addressing(site, link_id, visibility)
    return {
        "@context": CONTEXT,
        "id": site.activity(link_id, f"delete-{reply_id}"),
        "type": "Delete",
        "actor": site.actor(link_id),
        "to": to,
        "cc": cc,
        "object": {"id": site.answer(link_id, reply_id), "type": "Tombstone"},
    }


def delete_actor(site: Site, link_id: str, activity_id: str) -> dict[str, Any]:
    """The actor's goodbye: its ``object`` the actor's id, as Mastodon sends it."""
    return {
        "@context": CONTEXT,
        "id": site.activity(link_id, f"goodbye-{activity_id}"),
        "type": "Delete",
        "actor": site.actor(link_id),
        "to": [PUBLIC, f"{site.actor(link_id)}/followers"],
        "object": site.actor(link_id),
    }


def tombstone(id_: str, former_type: str, deleted: int | None) -> dict[str, Any]:
    """What a gone actor's or Note's address answers, with its 410 (ActivityPub §7.4)."""
    body: dict[str, Any] = {
        "@context": CONTEXT,
        "id": id_,
        "type": "Tombstone",
        "formerType": former_type,
    }
    if deleted is not None:
        body["deleted"] = isoformat_us(deleted)
    return body


def update(site: Site, p: Profile, activity_id: str) -> dict[str, Any]:
    body = actor(site, p)
    body.pop("@context")
    return {
        "@context": CONTEXT,
        "id": site.activity(p.link_id, f"update-{activity_id}"),
        "type": "Update",
        "actor": site.actor(p.link_id),
        "to": [PUBLIC],
        "object": body,
    }


def accept(site: Site, link_id: str, follow: dict[str, Any], activity_id: str) -> dict[str, Any]:
    return {
        "@context": CONTEXT,
        "id": site.activity(link_id, f"accept-{activity_id}"),
        "type": "Accept",
        "actor": site.actor(link_id),
        "object": {
            "id": follow.get("id"),
            "type": "Follow",
            "actor": follow.get("actor"),
            "object": site.actor(link_id),
        },
    }


def collection(id_: str, total: int, items: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "@context": CONTEXT,
        "id": id_,
        "type": "OrderedCollection",
        "totalItems": total,
    }
    if items is not None:
        body["orderedItems"] = items
    return body


def outbox(id_: str, total: int) -> dict[str, Any]:
    """A link's outbox: how many answers it lists, and where its newest page is."""
    return {
        "@context": CONTEXT,
        "id": id_,
        "type": "OrderedCollection",
        "totalItems": total,
        "first": f"{id_}?page=true",
    }


def outbox_page(
    outbox_id: str, page_id: str, items: list[dict[str, Any]], older: str | None
) -> dict[str, Any]:
    """One page of a link's outbox, newest first; ``next`` (older answers, by the last
    one's reply id) only when there are more."""
    body: dict[str, Any] = {
        "@context": CONTEXT,
        "id": page_id,
        "type": "OrderedCollectionPage",
        "partOf": outbox_id,
        "orderedItems": items,
    }
    if older is not None:
        body["next"] = f"{outbox_id}?before={older}"
    return body


def webfinger(site: Site, link_id: str) -> dict[str, Any]:
    return {
        "subject": f"acct:{link_id}@{site.host}",
        "aliases": [site.actor(link_id), site.page(link_id)],
        "links": [
            {"rel": "self", "type": ACTIVITY_JSON, "href": site.actor(link_id)},
            {
                "rel": "http://webfinger.net/rel/profile-page",
                "type": "text/html",
                "href": site.page(link_id),
            },
        ],
    }


def nodeinfo_index(site: Site) -> dict[str, Any]:
    return {
        "links": [
            {
                "rel": "http://nodeinfo.diaspora.software/ns/schema/2.1",
                "href": f"{site.url}/nodeinfo/2.1",
            }
        ]
    }


def nodeinfo(version: str, followable: int) -> dict[str, Any]:
    return {
        "version": "2.1",
        "software": {"name": "anonbox", "version": version},
        "protocols": ["activitypub"],
        "services": {"inbound": [], "outbound": []},
        "openRegistrations": True,
        "usage": {"users": {"total": followable}},
        "metadata": {},
    }
