"""Path and query parameters shared by the routers, with their documented formats."""

from __future__ import annotations

from typing import Annotated

from litestar.params import Parameter

from anonbox.core.ids import ULID_PATTERN

LinkId = Annotated[
    str,
    Parameter(pattern=r"^[A-Za-z0-9_-]{1,64}$", description="The link's id, as in its share URL"),
]
RowId = Annotated[str, Parameter(pattern=ULID_PATTERN.pattern, description="A 26-character ULID")]
Limit = Annotated[int, Parameter(ge=1, le=100, description="Page size, 1 to 100")]
Cursor = Annotated[
    str | None,
    Parameter(
        pattern=ULID_PATTERN.pattern,
        description="next_cursor from the previous page; omit for the first page",
    ),
]
