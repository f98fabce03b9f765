"""The process's shared message writers, as route dependencies: the API's routes and the
pages (``web.pages.public``, ``web.pages.receipt``, ``web.pages.inbox``) take them by
these types. Both are built once at start-up (``anonbox.wiring``).

One ``Posting`` rather than its four parts: Litestar resolves sibling dependencies as
concurrent tasks, which on this, the busiest path, cost more than the rest of the routing.
"""

from __future__ import annotations

from typing import Annotated

from anonbox.core.access import INJECTED, UNCHECKED, Provided
from anonbox.messages import service

PostingDep = Annotated[service.Posting, INJECTED, UNCHECKED, Provided("posting")]
LikeWriterDep = Annotated[service.LikeWriter, INJECTED, UNCHECKED, Provided("likes")]
ReplyWriterDep = Annotated[service.ReplyWriter, INJECTED, UNCHECKED, Provided("replies")]
