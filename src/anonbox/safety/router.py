"""HTTP endpoints for a creator's safety tools: blocked senders and muted words.

Blocking itself starts from a message: ``POST /message/{link_id}/{message_id}/block``.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import delete, get, post
from litestar.params import KwargDefinition

from anonbox.auth.dependencies import Creator
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
from anonbox.core.text import TEXT_PATTERN
from anonbox.safety import blocks, mutes

_TAGS = ["safety"]


class MuteIn(msgspec.Struct):
    # Documented here, checked in the service (``mutes.checked_word``) with its own codes.
    word: Annotated[
        str,
        KwargDefinition(min_length=1, max_length=mutes.MAX_WORD_CHARACTERS, pattern=TEXT_PATTERN),
    ]


@get(
    "/blocks",
    summary="Your blocked senders, each shown by the message that got it blocked",
    responses=error_responses(401, 403, 503),
    tags=_TAGS,
)
async def list_blocks(
    request: AnyRequest, db: DB, creator: Creator
) -> Envelope[OK, blocks.BlockList]:
    return envelope(
        request, 200, "Blocked senders", await blocks.blocks_of(db, owner_id=creator.user_id)
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
    await blocks.unblock(db, owner_id=creator.user_id, block_id=block_id)
    return envelope(request, 200, "Sender unblocked", None)


@post(
    "/muted-words",
    status_code=201,
    summary="Mute a word: messages containing it go to the filtered folder (or are dropped)",
    description="Whole words, compared after NFKC, case folding and accent removal. A new "
    "message holding it goes to its link's filtered folder, or is dropped on a link set to "
    "`muted: drop`. Unanswered messages already waiting that hold it (the newest "
    f"{mutes.MOVE_SCAN_LIMIT:,} looked at) move to the filtered folder too.",
    responses=error_responses(400, 401, 403, 409, 413, 415, 503),
    tags=_TAGS,
)
async def mute_word(
    request: AnyRequest, data: MuteIn, db: DB, creator: Creator
) -> Envelope[Created, mutes.MutedWordOut]:
    muted = await mutes.mute(db, owner_id=creator.user_id, word=data.word)
    return envelope(request, 201, "Word muted", muted)


@get(
    "/muted-words",
    summary="Your muted words",
    responses=error_responses(401, 403, 503),
    tags=_TAGS,
)
async def list_muted_words(
    request: AnyRequest, db: DB, creator: Creator
) -> Envelope[OK, mutes.MutedWordList]:
    return envelope(
        request, 200, "Muted words", await mutes.muted_words(db, owner_id=creator.user_id)
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
    await mutes.unmute(db, owner_id=creator.user_id, word_id=word_id)
    return envelope(request, 200, "Word unmuted", None)


ROUTES = [list_blocks, unblock, mute_word, list_muted_words, unmute_word]
