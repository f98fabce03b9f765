"""A message and a second creator it is not for (the root fixture ``others_message``), and the
two ways that creator's key reaches for it: under the owner's link (refused, 403) or under its
own link (not found there, 404). The like, reply and delete tests each try both as parameters
of one test."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import httpx
import pytest

from tests.actions import post_message
from tests.conftest import Creator


class OthersMessage(NamedTuple):
    owner: Creator
    stranger: Creator
    message_id: str

    def link(self, whose: str) -> str:
        """The link id a stranger's request names: ``"owner"``'s or the ``"stranger"``'s own."""
        return {"owner": self.owner, "stranger": self.stranger}[whose].link_id


def others_message(api: httpx.Client, make_creator: Callable[[], Creator]) -> OthersMessage:
    owner, stranger = make_creator(), make_creator()
    return OthersMessage(owner, stranger, post_message(api, owner.link_id))


# ``(whose_link, status)`` for ``OthersMessage.link``: the stranger's key on the owner's link is
# refused; the owner's message named under the stranger's own link is not found there.
STRANGERS_REACH: list[Any] = [
    pytest.param("owner", 403, id="another-creators-key"),
    pytest.param("stranger", 404, id="message-of-another-link"),
]
