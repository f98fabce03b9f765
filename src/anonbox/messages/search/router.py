"""HTTP endpoint of the inbox search (the creator's)."""

from __future__ import annotations

from typing import Annotated

from litestar import get
from litestar.params import QueryParameter

from anonbox.core.dependencies import DB
from anonbox.core.envelope import OK, AnyRequest, Envelope, envelope, error_responses
from anonbox.core.paths import Cursor, Limit
from anonbox.core.text import TEXT_PATTERN
from anonbox.links.dependencies import OwnedLink
from anonbox.messages.inbox.schemas import InboxFilter
from anonbox.messages.schemas import InboxPage
from anonbox.messages.search import service as search

_CREATOR_ERRORS = error_responses(400, 401, 403, 404, 503)


SearchQuery = Annotated[
    str,
    QueryParameter(
        name="q",
        # Documented, not checked here: the service says which rule a query breaks.
        schema_extra={
            "min_length": 1,
            "max_length": search.MAX_QUERY_CHARACTERS,
            "pattern": TEXT_PATTERN,
        },
        description="What to look for: 1 to 100 characters (after NFC and trimming), found "
        "as a substring, case-insensitively, in a message or one of its replies",
    ),
]
SearchFilter = Annotated[
    InboxFilter,
    QueryParameter(name="filter", description="Which of the matching messages: as in the inbox"),
]


@get(
    "/message/{link_id:str}/search",
    summary="Search a link's messages and their replies, newest first (creator)",
    description="A message is found when its text, or the text of one of its replies, "
    "contains `q`: any script, Japanese and Korean included (no word splitting). Items "
    "and paging are the inbox's.",
    responses=_CREATOR_ERRORS,
    tags=["messages"],
)
async def search_messages(
    request: AnyRequest,
    owned: OwnedLink,
    db: DB,
    q: SearchQuery,
    which: SearchFilter = InboxFilter.ALL,
    cursor: Cursor = None,
    limit: Limit = 20,
) -> Envelope[OK, InboxPage]:
    page = await search.search(
        db, link_id=owned.link_id, q=q, which=which, cursor=cursor, limit=limit
    )
    return envelope(request, 200, "Messages found", page)


ROUTES = [search_messages]
