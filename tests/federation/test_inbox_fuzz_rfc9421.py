"""The inbox fed junk RFC 9421 signatures by Hypothesis, through HTTP on both databases
(issue 42 item 5): junk ``Signature-Input`` and ``Signature`` headers (not structured
fields, wrong member types, labels that do not match, components that are unknown,
parameterised or absent, ``created``/``expires`` of any size, keyids that are not URLs)
and junk ``Content-Digest``s. No answer is a 5xx, every refusal is the error envelope,
and carol's follow is still there after each. The signed examples carry a real RFC 9421
signature with carol's key, made with ``http-message-signatures`` (not anonbox's code)
over the body as sent, so they reach what comes after the signature check.
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass, field

from http_message_signatures import HTTPMessageSigner, MappingKeyResolver, algorithms
from hypothesis import given
from hypothesis import strategies as st

from tests.federation import test_inbox_fuzz
from tests.federation.test_inbox_fuzz import (
    EXAMPLES,
    Target,
    _answered,
    _bodies,
    _header_text,
    _urls,
)

# The fuzzing's anonbox, its followable link and carol following it (its own, per module).
target = test_inbox_fuzz.target

_COMPONENTS = [
    '"@method"',
    '"@target-uri"',
    '"@authority"',
    '"@path"',
    '"@query"',
    '"@request-target"',
    '"@status"',
    '"@query-param";name="a"',
    '"@unknown"',
    '"content-digest"',
    '"content-digest";sf',
    '"content-digest";key="sha-256"',
    '"date"',
    '"host"',
    '"x-absent"',
    '"Content-Type"',
    '"signature"',
    "token",
    "1",
    "?1",
    ":AAAA:",
    '"@method" "@method"',
]
_TIMES = st.one_of(
    st.integers(),
    st.integers(-(2**63), 2**63),
    st.just(int(time.time())),
    st.integers(int(time.time()) - 7200, int(time.time()) + 7200),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda f: f"{f:.3f}"),
    st.sampled_from(['"1"', "?0", ":AAAA:", ""]),
)


def _key_ids(target: Target) -> st.SearchStrategy[str]:
    clean = _urls(target.remote).filter(
        lambda u: '"' not in u and "\\" not in u and u.isascii() and u.isprintable()
    )
    return st.one_of(st.just(target.remote.key_id), clean)


def _inputs(target: Target) -> st.SearchStrategy[str]:
    structured = st.builds(
        lambda label, parts, key_id, created, expires, alg, extra: (
            f'{label}=({" ".join(parts)});keyid="{key_id}";created={created}'
            + ("" if expires is None else f";expires={expires}")
            + ("" if alg is None else f';alg="{alg}"')
            + extra
        ),
        st.sampled_from(["sig1", "sig2", "a", "*", "Sig1", ""]),
        st.lists(st.sampled_from(_COMPONENTS), max_size=6),
        _key_ids(target),
        _TIMES,
        st.one_of(st.none(), _TIMES),
        st.one_of(
            st.none(),
            st.sampled_from(["rsa-v1_5-sha256", "rsa-pss-sha512", "ed25519", "hmac-sha256", ""]),
        ),
        st.sampled_from(["", ';nonce="x"', ';tag="t"', ", sig2=()", ";keyid=1", ";created"]),
    )
    return st.one_of(_header_text, structured)


_SIGNATURES = st.one_of(
    _header_text,
    st.builds(
        lambda label, raw: f"{label}=:{base64.b64encode(raw).decode()}:",
        st.sampled_from(["sig1", "sig2", "a"]),
        st.binary(max_size=300),
    ),
    st.sampled_from(["sig1=:!!!:", "sig1=?1", 'sig1="text"', "sig1=(:AAAA:)", "sig1=:AAAA:;x=1"]),
)
_DIGESTS = st.one_of(
    _header_text,
    st.builds(
        lambda name, raw: f"{name}=:{base64.b64encode(raw).decode()}:",
        st.sampled_from(["sha-256", "sha-512", "md5", "SHA-256"]),
        st.binary(max_size=80),
    ),
)


def test_junk_rfc9421_headers_are_a_4xx(target: Target) -> None:
    @EXAMPLES
    @given(
        body=_bodies(target),
        signature_input=_inputs(target),
        signature=_SIGNATURES,
        digest=st.one_of(st.none(), _DIGESTS),
    )
    def check(body: bytes, signature_input: str, signature: str, digest: str | None) -> None:
        headers = {"Signature-Input": signature_input, "Signature": signature}
        if digest is not None:
            headers["Content-Digest"] = digest
        _answered(target, body, headers)

    check()


@dataclass
class _Request:
    method: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)


def _signed_9421(target: Target, body: bytes, key_id: str, components: list[str]) -> dict[str, str]:
    request = _Request("POST", f"{target.server.url}{target.path}")
    HTTPMessageSigner(
        signature_algorithm=algorithms.RSA_V1_5_SHA256,
        key_resolver=MappingKeyResolver(public_keys={}, private_keys={key_id: target.remote.key}),
    ).sign(request, key_id=key_id, label="sig1", covered_component_ids=components, body=body)
    return request.headers


def test_signed_junk_bodies_are_a_4xx_or_ignored(target: Target) -> None:
    """Signed with carol's key as RFC 9421 over the body as sent: past the signature check
    (or refused where the signature leaves out what an inbox needs covered)."""

    @EXAMPLES
    @given(
        body=_bodies(target),
        key_id=_key_ids(target),
        components=st.sampled_from(
            [
                ["@method", "@target-uri"],
                ["@method", "@path", "@authority"],
                ["@method", "@authority"],
                ["@target-uri"],
            ]
        ),
    )
    def check(body: bytes, key_id: str, components: list[str]) -> None:
        _answered(target, body, _signed_9421(target, body, key_id, components))

    check()
    # The signing above is one the inbox takes: what it signs gets past the check.
    liked = {"type": "Like", "actor": target.remote.actor, "object": target.actor_url}
    body = json.dumps(liked).encode()
    headers = _signed_9421(target, body, target.remote.key_id, ["@method", "@target-uri"])
    answer = target.api.post(target.path, content=body, headers=headers)
    assert answer.status_code == 202, answer.text
    assert answer.json()["message"] == "Ignored"
