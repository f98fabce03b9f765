"""The inbox fed junk, signed and unsigned, by Hypothesis, through HTTP on both databases:
no answer is a 5xx, every refusal is the error envelope, and carol's follow (the one
follower) is still there after each request.

Junk of every layer: raw bytes, invalid UTF-8, JSON nested thousands deep, JSON of any
shape, activities with junk actors and objects, junk ``Signature`` parameters, ``keyId``s
that are not URLs (``http://[::1``, out-of-range ports, NULs, another scheme), and junk
``Date`` and ``Digest`` headers. The signed examples carry a real signature with carol's
key over the body as sent, so they reach what comes after the signature check.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.actions import assert_error
from tests.conftest import ModuleDatabase, make_creator_in
from tests.federation.conftest import open_to_follows
from tests.federation.standin import Remote, follow_of, followers, serving, signed
from tests.server import Server
from tests.support.http import loopback_client

EXAMPLES = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,  # the same cases on every run
    database=None,
    suppress_health_check=list(HealthCheck),
)


@dataclass
class Target:
    server: Server
    api: httpx.Client
    remote: Remote
    path: str
    actor_url: str


@pytest.fixture(scope="module")
def target(
    module_database: ModuleDatabase,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Target]:
    """A federating anonbox whose inboxes take the fuzzing's volume from one client, a
    followable link, and carol (the stand-in's actor) following it."""
    log = tmp_path_factory.mktemp("federation-logs") / f"fuzz-{module_database.backend}.log"
    running = Server(
        module_database.url,
        log,
        env={
            "ANONBOX_FEDERATION_ALLOW_PRIVATE": "true",
            "ANONBOX_LIMIT_FEDERATION_INBOX": "100000/60",
        },
    )
    running.extra_env["ANONBOX_PUBLIC_URL"] = running.url
    running.start(60)
    try:
        with serving() as remote, loopback_client(base_url=running.url, timeout=30) as api:
            creator = make_creator_in(running.database_url)
            actor_url, path = open_to_follows(running, api, creator)
            follow = follow_of(remote, actor_url)
            body = json.dumps(follow).encode()
            headers = signed(running, path, body, key=remote.key, key_id=remote.key_id)
            assert api.post(path, content=body, headers=headers).status_code == 202
            assert followers(api, actor_url) == 1
            yield Target(running, api, remote, path, actor_url)
    finally:
        running.stop()


def _answered(target: Target, body: bytes, headers: dict[str, str]) -> None:
    # Latin-1 bytes as given; h11 sends no value with whitespace at its ends (nor would a
    # server see one: HTTP strips it).
    raw = {name: value.strip(" \t").encode("latin-1") for name, value in headers.items()}
    answer = target.api.post(target.path, content=body, headers=raw)
    assert answer.status_code < 500, (answer.status_code, answer.text, body[:200], headers)
    if answer.status_code >= 400:
        assert_error(answer, answer.status_code)
    assert followers(target.api, target.actor_url) == 1


# --- what is generated -----------------------------------------------------------------------

# Header values httpx will send: latin-1, no line breaks or NUL (the server never sees those).
_header_text = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"),
    max_size=120,
)
_NASTY_URLS = [
    "http://[::1",
    "http://[::1]:99999/actor",
    "http://127.0.0.2:0/actor",
    "http://127.0.0.2:65536/actor",
    "http://127.0.0.2:-1/actor",
    "http://exa mple/actor",
    "http://a%00b/actor",
    "http://xn--/actor",
    "http://xn--ls8h.la/actor",
    "http://" + "a" * 64 + ".example/actor",
    "http://" + "a." * 200 + "example/actor",
    "https://user:pass@127.0.0.2/actor",
    "ftp://127.0.0.2/actor",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "//127.0.0.2/actor",
    "http://127.0.0.2:1/actor#main-key",
    "http://0x7f.1/actor#main-key",
    "http://[fe80::1%25eth0]/actor",
    "http://127.0.0.2/" + "x" * 5000,
    "",
    "#main-key",
]


def _urls(remote: Remote) -> st.SearchStrategy[str]:
    base = f"http://127.0.0.2:{remote.port}"
    return st.one_of(
        st.sampled_from(_NASTY_URLS),
        st.builds(lambda p: f"{base}/{p}", _header_text),
        st.builds(lambda h, p: f"http://{h}/{p}", _header_text, _header_text),
        _header_text,
    )


_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
)
_json = st.recursive(
    _leaves,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=25,
)


def _activities(target: Target) -> st.SearchStrategy[dict[str, Any]]:
    remote = target.remote
    carol = remote.actor
    follow = follow_of(remote, target.actor_url)
    return st.fixed_dictionaries(
        {
            "type": st.one_of(
                st.sampled_from(["Follow", "Undo", "Delete", "Create", "Accept", "Update"]),
                _json,
            ),
            "actor": st.one_of(st.just(carol), _urls(remote), _json),
            "object": st.one_of(
                st.just(target.actor_url), st.just(follow), st.just(carol), _urls(remote), _json
            ),
        },
        optional={"id": st.one_of(_urls(remote), _json), "@context": _json},
    ).filter(lambda a: not (a["type"] == "Undo" and a["actor"] == carol))  # carol's own undo


def _bodies(target: Target) -> st.SearchStrategy[bytes]:
    return st.one_of(
        st.binary(max_size=600),
        st.integers(1, 6000).map(lambda n: b"[" * n + b"]" * n),
        st.integers(1, 6000).map(lambda n: b'{"a":' * n + b"1" + b"}" * n),
        st.integers(1, 3000).map(lambda n: b'{"actor":' + b"[" * n),
        st.builds(lambda b: b'{"actor":"' + b + b'","type":"Follow"}', st.binary(max_size=40)),
        _json.map(lambda j: json.dumps(j).encode()),
        _activities(target).map(lambda a: json.dumps(a).encode()),
        _activities(target).map(lambda a: json.dumps(a, ensure_ascii=False).encode("utf-8")),
    )


# --- the properties ----------------------------------------------------------------------------


def test_unsigned_junk_is_a_4xx(target: Target) -> None:
    @EXAMPLES
    @given(
        body=_bodies(target),
        signature=st.one_of(
            _header_text,
            st.builds(
                lambda k, a, h, s: f'keyId="{k}",algorithm="{a}",headers="{h}",signature="{s}"',
                _urls(target.remote).filter(lambda u: '"' not in u and u.isprintable()),
                st.sampled_from(["rsa-sha256", "hs2019", "ed25519", ""]),
                st.sampled_from(
                    ["(request-target) host date digest", "date", "(created) (expires)", ""]
                ),
                st.sampled_from(["", "AAAA", "!!!", "QQ=="]),
            ),
        ),
        date=st.one_of(_header_text, st.just("Mon, 01 Jan 0001 00:00:00 GMT")),
        digest=_header_text,
        media=_header_text,
    )
    def check(body: bytes, signature: str, date: str, digest: str, media: str) -> None:
        headers = {"Signature": signature, "Date": date, "Digest": digest, "Content-Type": media}
        _answered(target, body, headers)

    check()


def test_signed_junk_bodies_are_a_4xx_or_ignored(target: Target) -> None:
    """Signed with carol's own key over the body as sent: past the signature check."""

    @EXAMPLES
    @given(body=_bodies(target))
    def check(body: bytes) -> None:
        remote = target.remote
        headers = signed(target.server, target.path, body, key=remote.key, key_id=remote.key_id)
        _answered(target, body, headers)

    check()


def test_junk_key_ids_are_a_4xx(target: Target) -> None:
    """Validly signed bodies whose keyId is junk, or names a document that is not an actor."""

    @EXAMPLES
    @given(
        key_id=_urls(target.remote).filter(lambda u: '"' not in u and u.isprintable()),
        activity=_activities(target),
    )
    def check(key_id: str, activity: dict[str, Any]) -> None:
        body = json.dumps(activity).encode()
        headers = signed(target.server, target.path, body, key=target.remote.key, key_id=key_id)
        _answered(target, body, headers)

    check()
