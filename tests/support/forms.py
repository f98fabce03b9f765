"""The pages' forms as a browser fills them: each carries its CSRF token in a hidden field."""

from __future__ import annotations

import re

_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_of(page: str) -> str:
    """The form token a page's HTML carries; fails the test when it has none."""
    found = _TOKEN.search(page)
    assert found, page
    return found.group(1)
