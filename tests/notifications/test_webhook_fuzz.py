"""Junk webhook URLs never get a 5xx: ``POST /webhooks`` and the notifications page's form,
fed by Hypothesis with random text and structured junk (a NUL and other control
characters, ``http://[::1``, ports past 65535, labels past 63 characters, ``xn--`` labels
that are no Punycode, letters outside ASCII, spaces), against a real ``anonbox serve`` on
SQLite and on PostgreSQL.

Every answer is a 400 or 403 in the error envelope (the API) or the page with the form's
problem (the page), and nothing is stored. Random text that would be a deliverable URL is
left out (``_acceptable``): it would be stored, which is no refusal to test here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonbox.notifications.webhooks.delivery import check_url
from tests.conftest import Creator, make_creator_in
from tests.server import Server
from tests.support.hostnames import LABEL, taken_by
from tests.support.http import loopback_client
from tests.support.signin import signed_in

_FUZZ = settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture(scope="module")
def owner(server: Server) -> Creator:
    return make_creator_in(server.database_url)


@pytest.fixture(scope="module")
def page(server: Server, owner: Creator) -> Iterator[tuple[httpx.Client, str]]:
    """The creator's browser on the notifications page, and the page's CSRF token."""
    with signed_in(server, owner.user_id) as client:
        shown = client.get("/dashboard/notifications")
        assert shown.status_code == 200, shown.text
        found = _CSRF.search(shown.text)
        assert found, shown.text
        yield client, found.group(1)


def _acceptable(url: str) -> bool:
    """Whether the API would take ``url`` (left out of the random text). Anything the
    check refuses, or raises on, stays in."""
    return taken_by(check_url, url)


_POISON = st.sampled_from(
    [
        "\x00",
        "\x01",
        "\x7f",
        "\u200b",
        "\u202e",
        "\u2028",
        " ",
        "\t",
        "[",
        "[::1",
        "%00",
        "@",
        "\\",
        "a" * 64,
        "mästodon",
        "\u2603",
        "\ud800",  # a lone surrogate: JSON may carry it as an escape
    ]
)
# Labels the URL pattern lets through that no name may hold: half of the poisoned labels,
# so that every run reaches the host check behind the pattern.
_PASSES_THE_PATTERN = st.sampled_from(["xn--zz", "xn--", "xn--a", "xn--ab-", "-a", "a-"])
_BAD_PORT = st.one_of(
    st.integers(min_value=65536, max_value=10**30).map(str),
    st.sampled_from(["0", "-1", "+80", "1_0", "٣", "0x50", "80\x00"]),
)


@st.composite
def _junk_url(draw: st.DrawFn) -> str:
    """A URL with exactly one thing wrong (a label, the port or the scheme), the rest well
    formed: each defect has to be found by itself, past every check before it."""
    wrong = draw(st.sampled_from(["label", "label", "port", "scheme"]))
    labels = draw(st.lists(LABEL, min_size=2, max_size=4))
    if wrong == "label":
        poison = draw(st.one_of(_PASSES_THE_PATTERN, _POISON))
        labels.insert(draw(st.integers(min_value=0, max_value=len(labels))), poison)
    if wrong == "scheme":
        scheme = draw(st.sampled_from(["ftp://", "//", "", "http:/", "javascript://"]))
    else:
        scheme = draw(st.sampled_from(["http://", "https://"]))
    if wrong == "port":
        port: str | None = draw(_BAD_PORT)
    else:
        port = draw(st.one_of(st.just(None), st.integers(1, 65535).map(str)))
    tail = draw(st.sampled_from(["", "/", "/hook", "?a=1", "#x"]))
    return scheme + ".".join(labels) + ("" if port is None else f":{port}") + tail


_URLS = st.one_of(
    _junk_url(),
    _junk_url(),  # twice: half the examples
    st.text(max_size=80).filter(lambda url: not _acceptable(url)),
    st.text(max_size=60).map(lambda text: "https://" + text).filter(lambda u: not _acceptable(u)),
)


@given(url=_URLS)
@_FUZZ
def test_junk_webhook_urls_are_refused_in_the_envelope(
    server: Server, owner: Creator, url: str
) -> None:
    with loopback_client(base_url=server.url, timeout=30) as api:
        answer = api.post(
            "/webhooks",
            # JSON's escapes, so that a lone surrogate is sent as ``\\ud800`` (httpx's own
            # encoder writes UTF-8, which cannot hold one).
            content=json.dumps({"url": url}).encode(),
            headers={**owner.headers, "Content-Type": "application/json"},
        )

    assert answer.status_code < 500, (url, answer.status_code)
    assert answer.status_code in (400, 403), (url, answer.status_code, answer.text)
    body = answer.json()
    assert body["status_code"] == answer.status_code
    assert body["error"]["code"], body


@given(url=_URLS)
@_FUZZ
def test_junk_webhook_urls_come_back_in_the_form(
    server: Server, page: tuple[httpx.Client, str], url: str
) -> None:
    client, token = page
    try:
        answer = client.post("/dashboard/webhooks", data={"csrf_token": token, "url": url})
    except UnicodeEncodeError:  # a lone surrogate cannot be sent in a form at all
        return

    assert answer.status_code < 500, (url, answer.status_code)
    assert answer.status_code in (400, 403), (url, answer.status_code)


def test_after_the_junk_no_webhook_was_stored(server: Server, owner: Creator) -> None:
    """Run after the fuzzing above (same module and creator)."""
    with loopback_client(base_url=server.url, timeout=30) as api:
        listed = api.get("/webhooks", headers=owner.headers)
    assert listed.status_code == 200, listed.text
    assert listed.json()["data"]["items"] == []
