"""The process's shared message writers, as route dependencies: the API's routes and the
pages (``web.public``, ``web.receipt``, ``web.inbox``) take them from here."""

from __future__ import annotations

from typing import Annotated

from litestar.datastructures import State
from litestar.params import Dependency

from anonbox.core.settings import Settings
from anonbox.messages import service


def provide_posting(state: State) -> service.Posting:
    """What an anonymous post needs, gathered once per process on first use.

    One dependency rather than four: Litestar resolves sibling dependencies as concurrent
    tasks, which on this, the busiest path, cost more than the rest of the routing.
    """
    posting: service.Posting | None = state.get("posting")
    if posting is None:
        settings: Settings = state.settings
        posting = state.posting = service.Posting(
            db=state.db,
            gate=state.gate,
            writer=service.message_writer(state.db),
            trusted_proxies=settings.trusted_proxies,
        )
    return posting


def provide_likes(state: State) -> service.LikeWriter:
    """The process's like writer (``service.like_writer``), made on first use; the API and
    the pages share it."""
    likes: service.LikeWriter | None = state.get("likes")
    if likes is None:
        likes = state.likes = service.like_writer(state.db)
    return likes


PostingDep = Annotated[service.Posting, Dependency(skip_validation=True)]
LikeWriterDep = Annotated[service.LikeWriter, Dependency(skip_validation=True)]
