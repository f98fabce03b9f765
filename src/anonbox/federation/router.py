"""HTTP endpoints of the fediverse: discovery (WebFinger, NodeInfo), a followable link's
actor with its inbox, outbox, followers and answers, and the admins' blocked servers.

The ActivityPub and discovery documents are answered as their specs say
(``application/activity+json``, ``application/jrd+json``), not in the envelope, and are
left out of /openapi.json (``docs/fediverse.md`` describes them); their errors are the
envelope as everywhere. The admin endpoints are the API's, enveloped and documented.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from litestar import Response, delete, get, post
from litestar.handlers import HTTPRouteHandler
from litestar.params import Parameter, QueryParameter
from litestar.response import Redirect

from anonbox.core.dependencies import DB, AppSettings, ClientAddress
from anonbox.core.envelope import (
    BODY_ERRORS,
    OK,
    AnyRequest,
    Created,
    Envelope,
    envelope,
    error_responses,
)
from anonbox.core.ids import ULID_PATTERN
from anonbox.core.paths import LinkId, RowId
from anonbox.federation import activities, negotiation, service
from anonbox.federation.activities import ACTIVITY_JSON
from anonbox.federation.dependencies import FederationDep
from anonbox.federation.goodbye.service import ActorGone
from anonbox.federation.schemas import (
    DOMAIN_PATTERN,
    BlockedDomain,
    BlockedDomainIn,
    BlockedDomainList,
)
from anonbox.identity.dependencies import Admin
from anonbox.safety.dependencies import GateDep

_ADMIN_TAGS = ["admin"]
Accepted = Literal[202]

Resource = Annotated[str, QueryParameter(name="resource", min_length=1, max_length=600)]


def _document(body: dict[str, Any], media_type: str = ACTIVITY_JSON) -> Response[bytes]:
    return Response(
        content=msgspec.json.encode(body),
        media_type=media_type,
        headers={"Cache-Control": "max-age=60", "Vary": "Accept"},
    )


def _tombstone(id_: str, former_type: str, gone: ActorGone) -> Response[bytes]:
    """A gone actor's or Note's answer: 410 with a Tombstone (ActivityPub §7.4)."""
    return Response(
        content=msgspec.json.encode(activities.tombstone(id_, former_type, gone.deleted)),
        status_code=410,
        media_type=ACTIVITY_JSON,
        headers={"Cache-Control": "max-age=60", "Vary": "Accept"},
    )


@get("/.well-known/webfinger", include_in_schema=False)
async def webfinger(db: DB, federation: FederationDep, resource: Resource) -> Response[bytes]:
    found = await service.webfinger(db, federation, resource)
    return _document(found, "application/jrd+json")


@get("/.well-known/nodeinfo", include_in_schema=False)
async def nodeinfo_index(federation: FederationDep) -> Response[bytes]:
    return _document(activities.nodeinfo_index(federation.site), "application/json")


@get("/nodeinfo/2.1", include_in_schema=False)
async def nodeinfo(db: DB, federation: FederationDep) -> Response[bytes]:
    federation.site  # noqa: B018 - 404 where the site does not federate
    return _document(
        await service.nodeinfo(db),
        'application/json; profile="http://nodeinfo.diaspora.software/ns/schema/2.1#"',
    )


@get("/ap/links/{link_id:str}", include_in_schema=False)
async def actor(
    request: AnyRequest, link_id: LinkId, db: DB, federation: FederationDep
) -> Response[Any]:
    kind = negotiation.activitypub_type(request.headers.get("accept"), page=False)
    try:
        found = await service.actor(db, federation, link_id)
    except ActorGone as gone:  # 410; a person is shown the page, which says what it is
        if kind is None:
            return Redirect(path=federation.site.page(link_id), headers={"Vary": "Accept"})
        return _tombstone(federation.site.actor(link_id), activities.ACTOR_TYPE, gone)
    if kind is None:  # a person who opened the address: the link's page
        return Redirect(path=found["url"], status_code=302, headers={"Vary": "Accept"})
    return _document(found, kind)


@post(
    "/ap/links/{link_id:str}/inbox",
    status_code=202,
    include_in_schema=False,
    # Bounded before it is read (413 past it); the depth, before it is parsed (service).
    request_max_body_size=service.MAX_ACTIVITY_BYTES,
)
async def inbox(
    request: AnyRequest,
    link_id: LinkId,
    db: DB,
    federation: FederationDep,
    gate: GateDep,
    settings: AppSettings,
    client_address: ClientAddress,
) -> Envelope[Accepted, None]:
    # Counted before anything is read: a flood of signatures with unknown keys would make
    # anonbox fetch keys and check signatures for whoever sends it (429 past the limit).
    await gate.throttle_client(db, address=client_address, limit=settings.limit_federation_inbox)
    body = await request.body()
    target = request.scope["raw_path"].decode("latin-1")
    if request.scope["query_string"]:
        target += "?" + request.scope["query_string"].decode("latin-1")
    done = await service.receive(
        db, federation, link_id=link_id, target=target, headers=request.headers, body=body
    )
    return envelope(request, 202, done, None)


@post(
    "/ap/inbox",
    status_code=202,
    include_in_schema=False,
    request_max_body_size=service.MAX_ACTIVITY_BYTES,
)
async def shared_inbox(
    request: AnyRequest,
    db: DB,
    federation: FederationDep,
    gate: GateDep,
    settings: AppSettings,
    client_address: ClientAddress,
) -> Envelope[Accepted, None]:
    """Every link's inbox (the actors' ``endpoints.sharedInbox``): an activity is taken
    by the link it is addressed to, as its own inbox takes it; one for none is ignored."""
    await gate.throttle_client(db, address=client_address, limit=settings.limit_federation_inbox)
    body = await request.body()
    target = request.scope["raw_path"].decode("latin-1")
    if request.scope["query_string"]:
        target += "?" + request.scope["query_string"].decode("latin-1")
    done = await service.receive_shared(
        db, federation, target=target, headers=request.headers, body=body
    )
    return envelope(request, 202, done, None)


@get("/ap/links/{link_id:str}/featured", include_in_schema=False)
async def featured(link_id: LinkId, db: DB, federation: FederationDep) -> Response[bytes]:
    return _document(await service.featured(db, federation, link_id))


# The outbox's pages: ``?page=true`` the newest, ``?before={reply_id}`` older ones.
OutboxPage = Annotated[bool | None, QueryParameter(name="page")]
OutboxBefore = Annotated[
    str | None, QueryParameter(name="before", pattern=ULID_PATTERN.pattern, max_length=26)
]


@get("/ap/links/{link_id:str}/outbox", include_in_schema=False)
async def outbox(
    link_id: LinkId,
    db: DB,
    federation: FederationDep,
    page: OutboxPage = None,
    before: OutboxBefore = None,
) -> Response[bytes]:
    found = await service.outbox(db, federation, link_id, page=bool(page), before=before)
    return _document(found)


@get("/ap/links/{link_id:str}/followers", include_in_schema=False)
async def followers(link_id: LinkId, db: DB, federation: FederationDep) -> Response[bytes]:
    return _document(await service.followers(db, federation, link_id))


@get("/ap/links/{link_id:str}/answers/{reply_id:str}", include_in_schema=False)
async def answer(
    link_id: LinkId, reply_id: RowId, db: DB, federation: FederationDep
) -> Response[bytes]:
    try:
        return _document(await service.note(db, federation, link_id, reply_id))
    except ActorGone as gone:
        return _tombstone(federation.site.answer(link_id, reply_id), "Note", gone)


@get(
    "/admin/federation/blocked-domains",
    summary="Servers this site does not federate with (admin)",
    responses=error_responses(401, 403, 503),
    tags=_ADMIN_TAGS,
)
async def list_blocked_domains(
    request: AnyRequest, admin: Admin, db: DB
) -> Envelope[OK, BlockedDomainList]:
    return envelope(request, 200, "Blocked servers", await service.blocked_domains(db))


@post(
    "/admin/federation/blocked-domains",
    status_code=201,
    summary="Block a fediverse server and its subdomains (admin)",
    description="Its followers of every link are removed, nothing more is sent to it, and "
    "its requests to any inbox are refused (403).",
    responses=error_responses(400, 401, 403, 409, *BODY_ERRORS, 503),
    tags=_ADMIN_TAGS,
)
async def block_domain(
    request: AnyRequest, data: BlockedDomainIn, admin: Admin, db: DB
) -> Envelope[Created, BlockedDomain]:
    blocked = await service.block_domain(db, domain=data.domain)
    return envelope(request, 201, "Server blocked", blocked)


@delete(
    "/admin/federation/blocked-domains/{domain:str}",
    status_code=200,
    summary="Federate with a blocked server again (admin)",
    responses=error_responses(400, 401, 403, 404, 503),
    tags=_ADMIN_TAGS,
)
async def unblock_domain(
    request: AnyRequest,
    domain: Annotated[str, Parameter(min_length=1, max_length=253, pattern=DOMAIN_PATTERN)],
    admin: Admin,
    db: DB,
) -> Envelope[OK, None]:
    await service.unblock_domain(db, domain=domain)
    return envelope(request, 200, "Server unblocked", None)


ROUTES: list[HTTPRouteHandler] = [
    webfinger,
    nodeinfo_index,
    nodeinfo,
    actor,
    inbox,
    shared_inbox,
    featured,
    outbox,
    followers,
    answer,
    list_blocked_domains,
    block_domain,
    unblock_domain,
]
