"""Junk instance addresses never get a 5xx: "Sign in with Mastodon or Misskey" (the sign-in
page's form) and "Link a Mastodon or Misskey account" (the account page's form), fed by
Hypothesis with random text, structured junk (a NUL and other control characters,
``http://[::1``, ports past 65535, labels past 63 characters, ``xn--`` labels that are no
Punycode, letters outside ASCII, spaces) and raw bytes that are not UTF-8, against a real
``anonbox serve`` on SQLite and on PostgreSQL.

Every answer is the page's form error with a 4xx (or, for a body that is not UTF-8, the
error page's 400), never a 5xx nor a trip to an instance, and nothing is stored: no
sign-in in progress, no registration with an instance. The server's log holds no error.

No network: an address that anonbox would go and resolve (a well-formed public name) is
left out of the random text (``_would_resolve``), so the test never reaches a real host;
the structured junk is malformed by construction. The sign-in form's per-network limit is
raised for this server (``ANONBOX_LIMIT_SIGNIN_NETWORK``), the only limit on these forms.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonbox.auth.fediverse.client import instance_base
from tests.conftest import make_creator_in
from tests.fediverse.conftest import count_rows
from tests.server import Server
from tests.support.forms import csrf_of
from tests.support.hostnames import LABEL, taken_by
from tests.support.http import loopback_client
from tests.support.signin import signed_in

EXAMPLES = 150
_FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,  # the same requests every run: a failure reproduces
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
_PROBLEM = re.compile(r'id="signin-problem"[^>]*>([^<]+)<')


@pytest.fixture(scope="module")
def fuzzed(
    backend: str,
    database_url_factory: Callable[[str], str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Server]:
    """An anonbox that may not reach private addresses (the default), with a sign-in
    limit per network no fuzzer reaches."""
    server = Server(
        database_url_factory(backend),
        tmp_path_factory.mktemp("fediverse-fuzz") / f"anonbox-{backend}.log",
        env={"ANONBOX_LIMIT_SIGNIN_NETWORK": "1000000/3600"},
    )
    server.extra_env.setdefault("ANONBOX_PUBLIC_URL", server.url)
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def anonymous(fuzzed: Server) -> Iterator[tuple[httpx.Client, str]]:
    """A browser on the sign-in page, and the page's CSRF token (good for every post)."""
    with loopback_client(base_url=fuzzed.url, timeout=30) as client:
        page = client.get("/signin")
        assert page.status_code == 200, page.text
        yield client, csrf_of(page.text)


@pytest.fixture(scope="module")
def signed_in_creator(fuzzed: Server) -> Iterator[tuple[httpx.Client, str]]:
    """A signed-in browser on the account page, and the page's CSRF token."""
    creator = make_creator_in(fuzzed.database_url)
    client = signed_in(fuzzed, creator.user_id)
    with client:
        page = client.get("/dashboard/account")
        assert page.status_code == 200, page.text
        yield client, csrf_of(page.text)


def _would_resolve(typed: str) -> bool:
    """Whether anonbox would take ``typed`` for a public instance and look its name up:
    such text is left out, so that no test run asks a real DNS or a real host. Anything
    the check refuses, or raises on, stays in (the server must answer it with a 4xx)."""
    return taken_by(instance_base, typed)


_POISON = st.sampled_from(
    [
        "\x00",
        "\x01",
        "\x1f",
        "\x7f",
        "\u0085",
        "\u200b",  # zero-width space
        "\u202e",  # right-to-left override
        "\u2028",
        "\ufeff",
        " ",
        "\t",
        "\n",
        "[",
        "]",
        "[::1",
        "%00",
        "@",
        "\\",
        "a" * 64,  # a label past 63 characters
        "xn--zz",  # no Punycode
        "xn--",
        "xn--a",  # Punycode for a control character
        "-a",
        "\u2603",  # a snowman: a letter no IDNA name holds
        "\U0001f600",
    ]
)
_BAD_PORT = st.one_of(
    st.integers(min_value=65536, max_value=10**30).map(str),
    st.sampled_from(["0", "-1", "+80", "1_0", "٣", "0x50", "", " 80", "80\x00", "99999999999"]),
)


@st.composite
def _junk_address(draw: st.DrawFn) -> str:
    """An address with exactly one thing wrong (a label, the port or the scheme), the rest
    well formed: each defect has to be found by itself, past every check before it."""
    wrong = draw(st.sampled_from(["label", "label", "port", "scheme"]))
    labels = draw(st.lists(LABEL, min_size=2, max_size=4))
    if wrong == "label":
        labels.insert(draw(st.integers(min_value=0, max_value=len(labels))), draw(_POISON))
    if wrong == "scheme":
        scheme = draw(st.sampled_from(["ftp://", "//", "javascript://", "@@", "a@b@"]))
    else:
        scheme = draw(st.sampled_from(["", "https://", "http://", "@someone@"]))
    if wrong == "port":
        port: str | None = draw(_BAD_PORT)
    else:
        port = draw(st.one_of(st.just(None), st.integers(1, 65535).map(str)))
    tail = draw(st.sampled_from(["", "/"]))
    return scheme + ".".join(labels) + ("" if port is None else f":{port}") + tail


_ADDRESSES = st.one_of(
    # Filtered too, so that no run ever reaches a real host, whatever a change lets through.
    _junk_address().filter(lambda typed: not _would_resolve(typed)),
    _junk_address().filter(lambda typed: not _would_resolve(typed)),  # twice: half of all
    st.sampled_from(
        [
            "\x00",
            "a\x00b.social",
            "mastodon.social\x00",
            "@a@\x00",
            "http://[::1",
            "https://[::1]:99999",
            "example.com:99999999999999999999",
            "xn--zz.com",
            ("a" * 63 + ".") * 5 + "com",
            "\u2603.net",
            "mästodon.\u200bsocial",
            "https://x.com:\u0663",
            "http://a@b.com",
            "x" * 301,
        ]
    ),
    st.text(max_size=80).filter(lambda typed: not _would_resolve(typed)),
)


def _is_form_error(answer: httpx.Response) -> bool:
    return answer.status_code in (400, 403) and _PROBLEM.search(answer.text) is not None


@given(typed=_ADDRESSES)
@_FUZZ
def test_junk_on_the_signin_page_is_a_form_error(
    fuzzed: Server, anonymous: tuple[httpx.Client, str], typed: str
) -> None:
    client, token = anonymous
    answer = client.post("/signin/fediverse", data={"csrf_token": token, "instance": typed})

    assert answer.status_code < 500, (typed, answer.status_code)
    assert _is_form_error(answer), (typed, answer.status_code, answer.text[-500:])


@given(typed=_ADDRESSES)
@_FUZZ
def test_junk_on_the_account_page_is_refused(
    fuzzed: Server, signed_in_creator: tuple[httpx.Client, str], typed: str
) -> None:
    client, token = signed_in_creator
    answer = client.post(
        "/dashboard/account/fediverse",
        data={"csrf_token": token, "back": "/dashboard/account", "instance": typed},
    )

    assert answer.status_code < 500, (typed, answer.status_code)
    assert answer.status_code in (400, 403), (typed, answer.status_code, answer.text[-500:])


@given(raw=st.binary(min_size=1, max_size=60), multipart=st.booleans())
@_FUZZ
def test_bytes_that_are_not_text_are_a_400(
    fuzzed: Server, anonymous: tuple[httpx.Client, str], raw: bytes, multipart: bool
) -> None:
    client, token = anonymous
    if multipart:
        answer = client.post(
            "/signin/fediverse", data={"csrf_token": token}, files={"instance": (None, raw)}
        )
    else:  # written into the body as it is, not percent-encoded
        answer = client.post(
            "/signin/fediverse",
            content=b"csrf_token=" + token.encode() + b"&instance=" + raw,
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )

    assert answer.status_code < 500, (raw, multipart, answer.status_code)
    assert answer.status_code in (400, 403), (raw, multipart, answer.status_code)


@pytest.mark.parametrize("origin", ["http://[::1", "http://[", "https://x:99999999999"])
def test_an_origin_that_is_no_url_is_a_403(
    fuzzed: Server, anonymous: tuple[httpx.Client, str], origin: str
) -> None:
    """The browser's ``Origin`` reaches URL parsing too (the CSRF check): one that is no
    URL is a form from elsewhere, refused, not a 500."""
    client, token = anonymous
    answer = client.post(
        "/signin/fediverse",
        data={"csrf_token": token, "instance": "mastodon.social"},
        headers={"Origin": origin},
    )

    assert answer.status_code == 403, (origin, answer.status_code)


def test_after_the_junk_nothing_was_stored_and_nothing_failed(fuzzed: Server) -> None:
    """Run after the fuzzing above (same module, same server): no sign-in was begun, no
    registration made, and the log holds no error (a 4xx is never logged as one)."""
    assert count_rows(fuzzed, "fediverse_signins") == 0
    assert count_rows(fuzzed, "fediverse_apps") == 0
    errors = [r for r in fuzzed.log_records() if r.get("level") in ("error", "critical")]
    assert errors == []
