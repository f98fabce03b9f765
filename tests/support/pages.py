"""The parts of a server-rendered dashboard page that tests read: one message's entry."""

from __future__ import annotations

import re


def row(page: str, message_id: str) -> str:
    """The message's entry in the inbox's (or search's) list: a line or two, a link to its
    page."""
    found = re.search(rf'<li[^>]*data-message-id="{message_id}".*?</li>', page, re.S)
    assert found, page
    return found.group(0)


def article(page: str, message_id: str) -> str:
    """The message on its own page."""
    found = re.search(rf'<article[^>]*data-message-id="{message_id}".*?</article>', page, re.S)
    assert found, page
    return found.group(0)
