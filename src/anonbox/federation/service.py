"""The rules of followable links: who the actor is, what the inbox takes, what is sent.

A link is an actor only while its creator has it followable (``links.fediverse``) and the
site federates (``Settings.federates``: not turned off, ``ANONBOX_PUBLIC_URL`` set);
otherwise every federation address of it answers 404, as for no link. The inbox takes
``Follow`` and ``Undo`` of a follow, signed (``signatures``: draft-cavage or RFC 9421)
with a key read from the sender's actor (``remote``: only an actor's own document vouches
for its key), kept with the actor's inboxes (``keys``: one read per Follow, again when it
expires or no longer verifies). A signature counts once: it is remembered, in the
transaction that acts on it, until its Date (or ``created``) leaves the window. Anything
else it takes is answered 202 and ignored. Whatever is sent (``Accept``, ``Create``,
``Delete``, ``Update``) is a row for the courier (``delivery``), in the transaction that
decided it, one per inbox: a server's shared inbox once for all its followers.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
import msgspec

from anonbox import __version__
from anonbox.account import avatar
from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Connection, Database, Row
from anonbox.core.errors import (
    BadRequest,
    Conflict,
    FieldProblem,
    Forbidden,
    NotFound,
    Unauthorized,
    ValidationFailed,
)
from anonbox.core.ids import new_ulid
from anonbox.core.settings import Settings
from anonbox.federation import activities, keys, peerjson, remote, repository, signatures
from anonbox.federation.activities import Profile, Site
from anonbox.federation.goodbye import service as goodbye
from anonbox.federation.notes import service as notes
from anonbox.federation.schemas import DOMAIN_PATTERN, BlockedDomain, BlockedDomainList

NOT_FOLLOWABLE = "No followable link here"
# Changes looked for (actors, deleted answers) this often, by every instance.
SWEEP_SECONDS = 2.0
MAX_ACTIVITY_BYTES = 256 * 1024
# Each accepted signature is remembered until its Date leaves the window (an hour either
# side of now), and a minute more for clocks that differ between instances.
SIGNATURE_KEPT_SECONDS = signatures.MAX_SKEW_SECONDS + 60
# How often every instance forgets the signatures whose window has passed.
PURGE_SIGNATURES_SECONDS = 300.0


class Unsigned(Unauthorized):
    code = "signature_invalid"


class FederationOff(Conflict):
    code = "federation_unavailable"


@dataclass(frozen=True, slots=True)
class Federation:
    """The process's: its settings, and the HTTP client remote actors are read with."""

    settings: Settings
    http: httpx.AsyncClient

    @property
    def site(self) -> Site:
        if not self.settings.federates or self.settings.public_url is None:
            raise NotFound(NOT_FOLLOWABLE)
        return Site(self.settings.public_url)


def site_of(settings: Settings) -> Site | None:
    return Site(settings.public_url) if settings.federates and settings.public_url else None


def _profile(row: Row) -> Profile:
    picture = avatar.avatar_ref(
        user_id=row["user_id"], uploaded=row["avatar_id"], named=bool(row["display_name"])
    )
    return Profile(
        link_id=str(row["link_id"]),
        name=row["display_name"],
        prompt=str(row["prompt"]),
        avatar_url=picture.raster_url,
        avatar_type=picture.raster_type,
        public_key=str(row["public_key"]),
        discoverable=bool(row["fediverse_discoverable"]),
        published=int(row["link_created_at"]),
    )


async def followable(conn: Connection, link_id: str) -> Row:
    row = await repository.profile(conn, link_id)
    if row is None or not row["fediverse"] or not row["public_key"] or row["disabled"]:
        if row is None or not row["disabled"]:  # in its grace period an account may return
            await goodbye.raise_if_gone(conn, link_id)
        raise NotFound(NOT_FOLLOWABLE)
    return row


# --- the creator's switch ------------------------------------------------------------------


async def make_followable(db: Database, settings: Settings | None, *, link_id: str) -> None:
    """Give the link its actor's key pair, once (before ``links.fediverse`` is set)."""
    if settings is None or site_of(settings) is None:
        raise FederationOff(
            "This site does not federate: it needs ANONBOX_PUBLIC_URL, and federation on"
        )
    if await repository.has_actor(db, link_id):
        await goodbye.start_afresh(db, link_id)  # if it said goodbye: a new key, no followers
        return
    private, public = await asyncio.to_thread(signatures.generate_key_pair)
    row = await repository.profile(db, link_id)
    if row is None:
        raise NotFound(NOT_FOLLOWABLE)
    await repository.insert_actor(
        db,
        link_id=link_id,
        private_key=private,
        public_key=public,
        shape=activities.ACTOR_SHAPE,
        now=now_us(),
    )


# --- documents -----------------------------------------------------------------------------


def _link_of_resource(site: Site, resource: str) -> str:
    if resource.startswith("acct:"):
        user, _, host = resource[5:].rpartition("@")
        hostname = site.host.rsplit(":", 1)[0] if ":" in site.host else site.host
        if user and host.lower() in (site.host, hostname):
            return user
    elif resource.startswith(site.actor("")):
        return resource.removeprefix(site.actor(""))
    raise NotFound(NOT_FOLLOWABLE)


async def webfinger(db: Database, fed: Federation, resource: str) -> dict[str, Any]:
    site = fed.site
    link_id = _link_of_resource(site, resource)
    await followable(db, link_id)
    return activities.webfinger(site, link_id)


async def nodeinfo(db: Database) -> dict[str, Any]:
    return activities.nodeinfo(__version__, await repository.followable_count(db))


async def actor(db: Database, fed: Federation, link_id: str) -> dict[str, Any]:
    site = fed.site
    return activities.actor(site, _profile(await followable(db, link_id)))


async def note(db: Database, fed: Federation, link_id: str, reply_id: str) -> dict[str, Any]:
    """An answer's Note (``notes``: 404 where the link's answers are for followers only)."""
    site = fed.site
    await followable(db, link_id)
    return await notes.note(db, site, link_id, reply_id)


async def outbox(
    db: Database, fed: Federation, link_id: str, *, page: bool = False, before: str | None = None
) -> dict[str, Any]:
    """Every answer the link lists, paged (``notes``)."""
    site = fed.site
    await followable(db, link_id)
    return await notes.outbox(db, site, link_id, page=page, before=before)


async def featured(db: Database, fed: Federation, link_id: str) -> dict[str, Any]:
    """The posts pinned to the profile: none (anonbox pins nothing)."""
    site = fed.site
    await followable(db, link_id)
    return activities.collection(f"{site.actor(link_id)}/featured", 0, [])


async def followers(db: Database, fed: Federation, link_id: str) -> dict[str, Any]:
    """How many; never who (a follower's list is theirs to show)."""
    site = fed.site
    await followable(db, link_id)
    total = await repository.follower_count(db, link_id)
    return activities.collection(f"{site.actor(link_id)}/followers", total)


# --- the inbox -----------------------------------------------------------------------------


async def _blocked(conn: Connection, url: str) -> bool:
    return await repository.blocked_among(conn, remote.domains_to_check(url))


def _activity(body: bytes) -> dict[str, Any]:
    try:
        activity = peerjson.decode_object(body)
    except peerjson.NotJSON as exc:
        raise BadRequest(f"The activity is not a JSON object: {exc}") from exc
    if not isinstance(activity.get("actor"), str):
        raise ValidationFailed(
            "The activity must be a JSON object naming its actor",
            [FieldProblem("actor", "invalid")],
        )
    return activity


def _origin(site: Site) -> str:
    """Where senders address the inbox (RFC 9421's @target-uri): the public address's
    scheme and host, whatever a proxy in front names them."""
    parts = urlsplit(site.url)
    return f"{parts.scheme}://{parts.netloc}"


async def _once(conn: Connection, seen: str, until: int) -> None:
    """Remember the signature (in the caller's transaction); refused if it was already."""
    if not await repository.remember_signature(conn, fingerprint=seen, until=until):
        raise Unsigned("This signed request was received already")


async def receive(
    db: Database,
    fed: Federation,
    *,
    link_id: str,
    target: str,
    headers: Mapping[str, str],
    body: bytes,
) -> str:
    """Take one signed activity into the link's inbox; what was done, for the answer."""
    site = fed.site
    row = await followable(db, link_id)
    try:
        presented = signatures.read(
            method="POST", url=_origin(site) + target, target=target, headers=headers, body=body
        )
        remote.checked_url(presented.key_id)
    except (signatures.BadSignature, remote.Unreachable) as exc:
        raise Unsigned(str(exc)) from exc
    if await _blocked(db, presented.key_id):
        raise Forbidden("This server does not federate with the sender's")
    activity = _activity(body)
    signer = remote.Signer(site.key(link_id), str(row["private_key"]))
    try:
        sender = await keys.sender(
            db,
            fed.http,
            presented.key_id,
            presented.verify,
            allow_private=fed.settings.federation_allow_private,
            signer=signer,
        )
    except keys.KeyUnusable as exc:
        raise Unsigned(str(exc)) from exc
    if activity["actor"] != sender.id:
        raise Unsigned("The activity's actor is not the key's owner")
    seen = presented.fingerprint
    if await repository.signature_seen(db, seen):  # before a replay costs a fetch
        raise Unsigned("This signed request was received already")
    until = int(presented.sent.timestamp() + SIGNATURE_KEPT_SECONDS) * 1_000_000
    kind = activity.get("type")
    if kind == "Follow" and activity.get("object") == site.actor(link_id):
        await _follow(db, fed, row, activity, sender, signer, once=(seen, until))
        return "Follow accepted"
    done = "Ignored"
    async with db.transaction() as tx:
        await _once(tx, seen, until)
        if kind == "Undo" and isinstance(activity.get("object"), (dict, str)):
            undone = activity["object"]
            if isinstance(undone, str) or undone.get("type") == "Follow":
                await repository.remove_follower(tx, link_id=link_id, actor_id=sender.id)
                done = "Unfollowed"
    return done


def _addressed(site: Site, activity: dict[str, Any]) -> str | None:
    """The link a Follow (its object) or an Undo of one (its object's object) is for."""
    target: Any = activity.get("object")
    if activity.get("type") == "Undo":
        target = target.get("object") if isinstance(target, dict) else None
    if isinstance(target, dict):
        target = target.get("id")
    prefix = site.actor("")
    if isinstance(target, str) and target.startswith(prefix) and "/" not in target[len(prefix) :]:
        return target[len(prefix) :] or None
    return None


async def receive_shared(
    db: Database, fed: Federation, *, target: str, headers: Mapping[str, str], body: bytes
) -> str:
    """Take one signed activity into the site's shared inbox: it is the inbox of the link
    it is addressed to (``_addressed``), checked as there; anything else is ignored."""
    site = fed.site
    link_id = _addressed(site, _activity(body))
    if link_id is None:
        return "Ignored"
    try:
        return await receive(db, fed, link_id=link_id, target=target, headers=headers, body=body)
    except goodbye.ActorGone:  # the link's inbox is gone, not this one: no 410 here
        return "Ignored"


async def _follow(
    db: Database,
    fed: Federation,
    row: Row,
    follow: dict[str, Any],
    follower: remote.RemoteActor,
    signer: remote.Signer,
    *,
    once: tuple[str, int],
) -> None:
    """The follower (the signature's sender, whose actor was read with its key: once per
    Follow) is added, and an Accept sent to its own inbox."""
    site = fed.site
    link_id = str(row["link_id"])
    now = now_us()
    accept = activities.accept(site, link_id, follow, new_ulid(now))
    async with db.transaction() as tx:
        await _once(tx, *once)  # first: a parallel replay waits here, then is refused
        await repository.add_follower(
            tx,
            link_id=link_id,
            actor_id=follower.id,
            inbox=follower.inbox,
            shared_inbox=follower.shared_inbox,
            domain=remote.domain_of(follower.id),
            now=now,
        )
        await enqueue(
            tx,
            user_id=str(row["user_id"]),
            link_id=link_id,
            activity=accept,
            inboxes=[follower.inbox],
        )


# --- what is sent ----------------------------------------------------------------------------


async def enqueue(
    conn: Connection,
    *,
    user_id: str,
    link_id: str,
    activity: dict[str, Any],
    inboxes: list[str],
) -> None:
    """One delivery of ``activity`` per inbox, for the courier (in the caller's transaction)."""
    now = now_us()
    payload = msgspec.json.encode(activity).decode()
    await repository.insert_deliveries(
        conn, [(new_ulid(now), user_id, link_id, inbox, payload, now) for inbox in inboxes]
    )


async def send_answers(conn: Connection, site: Site, replies: list[tuple[str, str, str]]) -> None:
    """A ``Create`` of each new answer (link id, reply id, creator) of a followed link, to
    its followers; recorded so that its deletion is sent too."""
    followed = await repository.links_with_followers(conn, sorted({r[0] for r in replies}))
    owners = {reply_id: user_id for link_id, reply_id, user_id in replies if link_id in followed}
    for answer in await notes.answers(conn, sorted(owners)):
        await repository.record_sent(
            conn,
            reply_id=answer.reply_id,
            link_id=answer.link_id,
            message_id=answer.message_id,
            now=now_us(),
        )
        await enqueue(
            conn,
            user_id=owners[answer.reply_id],
            link_id=answer.link_id,
            activity=activities.create(site, answer),
            inboxes=await repository.inboxes(conn, answer.link_id),
        )


async def sweep(db: Database, settings: Settings) -> None:
    """Send what changed without an event: deleted answers (``Delete``), and a changed
    actor (``Update``: its name, prompt, picture or discoverable). A chore of every
    instance: each change is claimed by the transaction that sends it."""
    site = site_of(settings)
    if site is None:
        return
    for gone in await repository.deleted_answers(db):
        async with db.transaction() as tx:
            if await repository.forget_sent(tx, str(gone["reply_id"])) != 1:
                continue  # another instance sent it
            await enqueue(
                tx,
                user_id=str(gone["user_id"]),
                link_id=str(gone["link_id"]),
                activity=activities.delete(
                    site,
                    str(gone["link_id"]),
                    str(gone["reply_id"]),
                    notes.visibility(gone["visibility"]),
                ),
                inboxes=await repository.inboxes(tx, str(gone["link_id"])),
            )
    for row in await repository.changed_actors(db, activities.ACTOR_SHAPE):
        async with db.transaction() as tx:
            told = await repository.mark_told(
                tx, link_id=str(row["link_id"]), state=str(row["state"]), was=row["told_state"]
            )
            if not told:
                continue
            now = now_us()
            await enqueue(
                tx,
                user_id=str(row["user_id"]),
                link_id=str(row["link_id"]),
                activity=activities.update(site, _profile(row), new_ulid(now)),
                inboxes=await repository.inboxes(tx, str(row["link_id"])),
            )


async def forget_signatures(db: Database) -> None:
    """Forget the signatures whose Date has left the window: a chore of every instance."""
    await repository.forget_signatures(db, before=now_us())


def sweeper(settings: Settings) -> Any:
    async def run(db: Database) -> None:
        await sweep(db, settings)

    return run


# --- blocked servers (admins) --------------------------------------------------------------


def normalised_domain(value: str) -> str:
    """Lower case, without a final dot; refused unless it is a host name
    (``schemas.DOMAIN_PATTERN``)."""
    domain = value.lower().removesuffix(".")
    if re.fullmatch(DOMAIN_PATTERN, value) is None or len(domain) > 253:
        raise ValidationFailed(
            "domain must be a host name such as example.social (ASCII; punycode for others)",
            [FieldProblem("domain", "invalid")],
        )
    return domain


def _blocked_out(row: Row) -> BlockedDomain:
    return BlockedDomain(domain=str(row["domain"]), created_at=isoformat_us(row["created_at"]))


async def blocked_domains(db: Database) -> BlockedDomainList:
    return BlockedDomainList(items=[_blocked_out(r) for r in await repository.blocked_domains(db)])


async def block_domain(db: Database, *, domain: str) -> BlockedDomain:
    """Block a server and its subdomains: its followers are removed, nothing more is sent
    to it, and its requests are refused (403)."""
    name = normalised_domain(domain)
    async with db.transaction() as tx:
        row = await repository.block_domain(tx, domain=name, now=now_us())
    if row is None:
        raise Conflict(f"{name} is already blocked")
    return _blocked_out(row)


async def unblock_domain(db: Database, *, domain: str) -> None:
    if await repository.unblock_domain(db, normalised_domain(domain)) != 1:
        raise NotFound("That server is not blocked")
