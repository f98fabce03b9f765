"""HTTP endpoints for a creator's safety tools: blocked senders and muted words.

Blocking itself starts from a message: ``POST /message/{link_id}/{message_id}/block``.
"""

from __future__ import annotations

from litestar import delete, get, post

from anonbox.core.dependencies import DB
from anonbox.core.envelope import (
    OK,
    AnyRequest,
    Created,
    Envelope,
    envelope,
    error_responses,
)
from anonbox.core.paths import RowId
from anonbox.identity.dependencies import Creator
from anonbox.safety import service
from anonbox.safety.dependencies import MoveMutedDep
from anonbox.safety.schemas import BlockList, MutedWordList, MutedWordOut, MuteIn

_TAGS = ["safety"]


@get(
    "/blocks",
    summary="Your blocked senders, each shown by the message that got it blocked",
    responses=error_responses(401, 403, 503),
    tags=_TAGS,
)
async def list_blocks(request: AnyRequest, db: DB, creator: Creator) -> Envelope[OK, BlockList]:
    return envelope(
        request, 200, "Blocked senders", await service.blocks_of(db, owner_id=creator.user_id)
    )


@delete(
    "/blocks/{block_id:str}",
    status_code=200,
    summary="Unblock a sender",
    responses=error_responses(400, 401, 403, 404, 503),
    tags=_TAGS,
)
async def unblock(
    request: AnyRequest, block_id: RowId, db: DB, creator: Creator
) -> Envelope[OK, None]:
    await service.unblock(db, owner_id=creator.user_id, block_id=block_id)
    return envelope(request, 200, "Sender unblocked", None)


@post(
    "/muted-words",
    status_code=201,
    summary="Mute a word: messages containing it go to the filtered folder (or are dropped)",
    description="Whole words, compared after NFKC, case folding and accent removal. A new "
    "message holding it goes to its link's filtered folder, or is dropped on a link set to "
    "`muted: drop`. Unanswered messages already waiting that hold it (the newest "
    f"{service.MOVE_SCAN_LIMIT:,} looked at) move to the filtered folder too.",
    responses=error_responses(400, 401, 403, 409, 413, 415, 503),
    tags=_TAGS,
)
async def mute_word(
    request: AnyRequest, data: MuteIn, db: DB, creator: Creator, move_muted: MoveMutedDep
) -> Envelope[Created, MutedWordOut]:
    muted = await service.mute(db, owner_id=creator.user_id, word=data.word, move=move_muted)
    return envelope(request, 201, "Word muted", muted)


@get(
    "/muted-words",
    summary="Your muted words",
    responses=error_responses(401, 403, 503),
    tags=_TAGS,
)
async def list_muted_words(
    request: AnyRequest, db: DB, creator: Creator
) -> Envelope[OK, MutedWordList]:
    return envelope(
        request, 200, "Muted words", await service.muted_words(db, owner_id=creator.user_id)
    )


@delete(
    "/muted-words/{word_id:str}",
    status_code=200,
    summary="Unmute a word",
    responses=error_responses(400, 401, 403, 404, 503),
    tags=_TAGS,
)
async def unmute_word(
    request: AnyRequest, word_id: RowId, db: DB, creator: Creator
) -> Envelope[OK, None]:
    await service.unmute(db, owner_id=creator.user_id, word_id=word_id)
    return envelope(request, 200, "Word unmuted", None)


ROUTES = [list_blocks, unblock, mute_word, list_muted_words, unmute_word]
