"""HTTP endpoints for reports and the admin's moderation tools.

Anyone may report a message; everything under ``/admin`` needs an admin's credential
(401 without one, 403 with a creator's). Admins are made on the command line:
``anonbox admin grant --email E``. Every admin action is written to the audit log
(``GET /admin/audit``) in the action's own transaction.
"""

from __future__ import annotations

from typing import Annotated

from litestar import delete, get, post
from litestar.handlers import HTTPRouteHandler
from litestar.params import Parameter

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
from anonbox.core.paths import Cursor, Limit, LinkId, RowId
from anonbox.identity.dependencies import Admin
from anonbox.moderation import service
from anonbox.moderation.schemas import (
    AuditPage,
    MutedPhraseIn,
    MutedPhraseList,
    MutedPhraseOut,
    ReportIn,
    ReportOut,
    ReportPage,
    ReportReceipt,
    ReportStatus,
    ResolveIn,
)
from anonbox.safety.dependencies import GateDep
from anonbox.safety.schemas import BlockOut

_ADMIN_TAGS = ["admin"]
_ADMIN_ERRORS = (400, 401, 403, 404, 503)

StatusFilter = Annotated[
    ReportStatus, Parameter(description="open (the default) or resolved reports")
]


@post(
    "/message/{link_id:str}/{message_id:str}/report",
    status_code=201,
    summary="Report a message to the admins (anyone)",
    description="No credential needed. The report keeps the first 200 characters of the "
    "message, so it can still be judged if the message is deleted. A link that was deleted, "
    "or whose account is being deleted, takes no reports (404 link_gone).",
    responses=error_responses(400, 404, *BODY_ERRORS, 429, 503),
    tags=["safety"],
)
async def report_message(
    request: AnyRequest,
    link_id: LinkId,
    message_id: RowId,
    data: ReportIn,
    db: DB,
    gate: GateDep,
    settings: AppSettings,
    client_address: ClientAddress,
) -> Envelope[Created, ReportReceipt]:
    receipt = await service.report_message(
        db,
        gate,
        link_id=link_id,
        message_id=message_id,
        reason=data.reason,
        address=client_address,
        limit=settings.limit_report,
    )
    return envelope(request, 201, "Report received", receipt)


@get(
    "/admin/reports",
    summary="List reports, newest first (admin)",
    responses=error_responses(400, 401, 403, 503),
    tags=_ADMIN_TAGS,
)
async def list_reports(
    request: AnyRequest,
    admin: Admin,
    db: DB,
    status: StatusFilter = "open",
    cursor: Cursor = None,
    limit: Limit = 20,
) -> Envelope[OK, ReportPage]:
    page = await service.reports(db, status=status, cursor=cursor, limit=limit)
    return envelope(request, 200, "Reports", page)


@post(
    "/admin/reports/{report_id:str}/resolve",
    status_code=200,
    summary="Resolve a report: dismiss it, delete the message, or block its sender (admin)",
    description="block_sender blocks whoever sent the message on every link, then deletes "
    "the message. Deleting a message resolves every other open report about it too. A "
    "report is resolved once: a second attempt is a 409.",
    responses=error_responses(*_ADMIN_ERRORS, 409, *BODY_ERRORS),
    tags=_ADMIN_TAGS,
)
async def resolve_report(
    request: AnyRequest, report_id: RowId, data: ResolveIn, admin: Admin, db: DB
) -> Envelope[OK, ReportOut]:
    report = await service.resolve(
        db, report_id=report_id, action=data.action, admin_id=admin.user_id
    )
    return envelope(request, 200, "Report resolved", report)


@delete(
    "/admin/messages/{message_id:str}",
    status_code=200,
    summary="Delete any message and its replies (admin)",
    description="Open reports about the message are resolved as delete_message.",
    responses=error_responses(*_ADMIN_ERRORS),
    tags=_ADMIN_TAGS,
)
async def delete_message(
    request: AnyRequest, message_id: RowId, admin: Admin, db: DB
) -> Envelope[OK, None]:
    await service.delete_message(db, message_id=message_id, admin_id=admin.user_id)
    return envelope(request, 200, "Message deleted", None)


@post(
    "/admin/messages/{message_id:str}/block-sender",
    status_code=201,
    summary="Block whoever sent this message, on every link (admin)",
    description="Later messages from that sender to any link are dropped silently. "
    "Nothing already sent moves: the message itself and any other waiting message stay "
    "where they are (moving them would show creators which messages share a sender); "
    "delete it separately if it should go.",
    responses=error_responses(*_ADMIN_ERRORS, 409),
    tags=_ADMIN_TAGS,
)
async def block_sender(
    request: AnyRequest, message_id: RowId, admin: Admin, db: DB
) -> Envelope[Created, BlockOut]:
    blocked = await service.block_sender(db, message_id=message_id, admin_id=admin.user_id)
    return envelope(request, 201, "Sender blocked on every link", blocked)


@get(
    "/admin/muted-phrases",
    summary="The site's muted phrases, newest first (admin)",
    responses=error_responses(401, 403, 503),
    tags=_ADMIN_TAGS,
)
async def list_muted_phrases(
    request: AnyRequest, admin: Admin, db: DB
) -> Envelope[OK, MutedPhraseList]:
    return envelope(request, 200, "Muted phrases", await service.muted_phrases(db))


@post(
    "/admin/muted-phrases",
    status_code=201,
    summary="Mute a phrase on every link (admin)",
    description="A message containing it, on any link, is treated exactly as one with a "
    "word its creator muted: the sender gets the same 201 as for a stored message. Whole "
    "words, compared after NFKC, case folding and accent removal; 1 to 100 characters, at "
    "most 1,000 phrases.",
    responses=error_responses(400, 401, 403, 409, *BODY_ERRORS, 503),
    tags=_ADMIN_TAGS,
)
async def add_muted_phrase(
    request: AnyRequest, data: MutedPhraseIn, admin: Admin, db: DB
) -> Envelope[Created, MutedPhraseOut]:
    added = await service.add_muted_phrase(db, phrase=data.phrase, admin_id=admin.user_id)
    return envelope(request, 201, "Phrase muted on every link", added)


@delete(
    "/admin/muted-phrases/{phrase_id:str}",
    status_code=200,
    summary="Stop muting a phrase on every link (admin)",
    responses=error_responses(*_ADMIN_ERRORS),
    tags=_ADMIN_TAGS,
)
async def remove_muted_phrase(
    request: AnyRequest, phrase_id: RowId, admin: Admin, db: DB
) -> Envelope[OK, None]:
    await service.remove_muted_phrase(db, phrase_id=phrase_id, admin_id=admin.user_id)
    return envelope(request, 200, "Phrase no longer muted", None)


@get(
    "/admin/audit",
    summary="What admins did, newest first (admin)",
    description="One entry per admin action: who (the admin's user id), what, on which "
    "report, message or muted phrase, and when. Nothing about any sender.",
    responses=error_responses(400, 401, 403, 503),
    tags=_ADMIN_TAGS,
)
async def audit_log(
    request: AnyRequest, admin: Admin, db: DB, cursor: Cursor = None, limit: Limit = 20
) -> Envelope[OK, AuditPage]:
    return envelope(request, 200, "Audit log", await service.audit(db, cursor=cursor, limit=limit))


ROUTES: list[HTTPRouteHandler] = [
    report_message,
    list_reports,
    resolve_report,
    delete_message,
    block_sender,
    list_muted_phrases,
    add_muted_phrase,
    remove_muted_phrase,
    audit_log,
]
