"""The pages' forms as a browser fills them: each carries its CSRF token in a hidden field."""

from __future__ import annotations

import re

import httpx

_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_of(page: str) -> str:
    """The form token a page's HTML carries; fails the test when it has none."""
    found = _TOKEN.search(page)
    assert found, page
    return found.group(1)


def submitted(browser: httpx.Client, page: str, action: str, **fields: str) -> httpx.Response:
    """Open ``page`` and send its form to ``action`` with ``fields``, as a browser does;
    the form must be taken (303)."""
    form = browser.get(page)
    sent = browser.post(action, data={"csrf_token": csrf_of(form.text), **fields})
    assert sent.status_code == 303, sent.text
    return sent
