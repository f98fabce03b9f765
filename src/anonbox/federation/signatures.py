"""HTTP Signatures as Mastodon, Misskey and Fedify send and check them: draft-cavage-12,
and RFC 9421 HTTP Message Signatures with an RFC 9530 ``Content-Digest``.

draft-cavage: a signed request carries ``Date``, ``Digest: SHA-256=<base64>`` of its body
(POST) and ``Signature: keyId="…",algorithm="rsa-sha256",headers="(request-target) host
date digest",signature="…"``: RSASSA-PKCS1-v1_5 with SHA-256 over the named headers, one
``name: value`` line each. ``hs2019`` (what newer senders write) is read as rsa-sha256 for
an RSA key, as Mastodon does. Written here with ``cryptography``: no maintained package
implements it without a JSON-LD processor and two HTTP clients (``docs/decisions.md``).

RFC 9421: ``Signature-Input: sig1=("@method" "@target-uri" … "content-digest");
keyid="…";alg="rsa-v1_5-sha256";created=…`` and ``Signature: sig1=:<base64>:``, built and
checked by the maintained ``http-message-signatures`` package (``docs/decisions.md``);
what an inbox requires of it (the components covered, the window) is decided here.

``read`` takes either from an inbox request, checks what can be checked before the key
is known, and gives what verifies it with a key and what it is remembered by (each
signature counts once). No SQL and no HTTP here: the inbox (``service``) and the courier
(``delivery``) call these.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime
from typing import Any, Literal

import http_sf
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, padding, rsa
from http_message_signatures import (
    ContentDigest,
    HTTPMessageSignaturesException,
    HTTPMessageSigner,
    HTTPMessageVerifier,
    MappingKeyResolver,
    algorithms,
)

# A request whose Date is further than this from now is refused (as Fedify checks).
MAX_SKEW_SECONDS = 3600
# What a POST to an inbox must sign, at least; a GET signs no digest.
REQUIRED_POST = ("(request-target)", "host", "date", "digest")
_PARAM = re.compile(r'\s*([A-Za-z]+)\s*=\s*"([^"]*)"\s*(?:,|$)')


class BadSignature(Exception):
    """The request is not signed as the inbox requires; the message says how."""


@dataclass(frozen=True, slots=True)
class SignatureHeader:
    key_id: str
    algorithm: str
    headers: tuple[str, ...]
    signature: bytes


def generate_key_pair() -> tuple[str, str]:
    """A new RSA key pair, 2048 bits: (private PEM, public PEM)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


def digest(body: bytes) -> str:
    return "SHA-256=" + base64.b64encode(hashlib.sha256(body).digest()).decode()


def http_date(at: datetime | None = None) -> str:
    return format_datetime(at or datetime.now(UTC), usegmt=True)


def _signing_string(
    names: tuple[str, ...], method: str, target: str, headers: Mapping[str, str]
) -> bytes:
    lines = []
    for name in names:
        if name == "(request-target)":
            lines.append(f"(request-target): {method.lower()} {target}")
        else:
            value = headers.get(name)
            if value is None:
                raise BadSignature(f"The signed header {name!r} is missing")
            lines.append(f"{name}: {value.strip()}")
    return "\n".join(lines).encode()


def sign(
    *,
    method: str,
    target: str,
    host: str,
    body: bytes | None,
    key_id: str,
    private_pem: str,
) -> dict[str, str]:
    """The headers that sign a request: Host, Date, Digest (with a body) and Signature.
    ``target``: the path and query as sent; ``host``: the Host header as sent."""
    headers = {"host": host, "date": http_date()}
    names: tuple[str, ...] = ("(request-target)", "host", "date")
    if body is not None:
        headers["digest"] = digest(body)
        names = (*names, "digest")
    key = serialization.load_pem_private_key(private_pem.encode(), password=None)
    assert isinstance(key, rsa.RSAPrivateKey), "actors' keys are RSA"
    signed = key.sign(
        _signing_string(names, method, target, headers), padding.PKCS1v15(), hashes.SHA256()
    )
    headers["signature"] = (
        f'keyId="{key_id}",algorithm="rsa-sha256",headers="{" ".join(names)}",'
        f'signature="{base64.b64encode(signed).decode()}"'
    )
    return {name.title(): value for name, value in headers.items()}


def parse(header: str | None) -> SignatureHeader:
    """The ``Signature`` header's parameters; ``BadSignature`` if absent or malformed."""
    if not header:
        raise BadSignature("The request is not signed (no Signature header)")
    params = {name.lower(): value for name, value in _PARAM.findall(header)}
    if "keyid" not in params or "signature" not in params:
        raise BadSignature("The Signature header needs keyId and signature")
    try:
        raw = base64.b64decode(params["signature"], validate=True)
    except ValueError as exc:
        raise BadSignature("The signature is not base64") from exc
    algorithm = params.get("algorithm", "hs2019").lower()
    if algorithm not in ("rsa-sha256", "hs2019"):
        raise BadSignature(f"The algorithm {algorithm!r} is not accepted; use rsa-sha256")
    names = tuple(params.get("headers", "date").lower().split())
    return SignatureHeader(params["keyid"], algorithm, names, raw)


def check_request(
    parsed: SignatureHeader,
    *,
    method: str,
    headers: Mapping[str, str],
    body: bytes,
    now: datetime | None = None,
) -> datetime:
    """What can be checked before the key is known: the signed headers cover what an
    inbox needs and are all there, the Date is within an hour, the Digest is the body's.
    The Date, for how long the signature may be replayed (``MAX_SKEW_SECONDS`` after it)."""
    missing = [name for name in REQUIRED_POST if name not in parsed.headers]
    if method.upper() == "POST" and missing:
        raise BadSignature(f"The signature must cover {', '.join(missing)}")
    absent = [name for name in parsed.headers if name != "(request-target)" and name not in headers]
    if absent:
        raise BadSignature(f"The signed headers {', '.join(absent)[:200]} are missing")
    date = headers.get("date")
    if not date:
        raise BadSignature("The request has no Date header")
    try:
        sent = parsedate_to_datetime(date)
    except (TypeError, ValueError) as exc:
        raise BadSignature("The Date header is not an HTTP date") from exc
    if sent.tzinfo is None:
        sent = sent.replace(tzinfo=UTC)
    if abs(((now or datetime.now(UTC)) - sent).total_seconds()) > MAX_SKEW_SECONDS:
        raise BadSignature("The Date header is more than an hour from now")
    if method.upper() == "POST":
        given = headers.get("digest", "")
        sha = [
            part.strip() for part in given.split(",") if part.strip().upper().startswith("SHA-256=")
        ]
        if not sha or sha[0].split("=", 1)[1] != digest(body).split("=", 1)[1]:
            raise BadSignature("The Digest header is not the body's SHA-256")
    return sent


def fingerprint(parsed: SignatureHeader) -> str:
    """What a signature is remembered by, so that it counts once: a hash of its value.
    The value signs the request target, host, date and digest (RSASSA-PKCS1-v1_5 is
    deterministic), so one activity sent to two inboxes is two fingerprints, and the
    same request sent twice is one, however its header is written."""
    return hashlib.sha256(parsed.signature).hexdigest()


def verify(
    parsed: SignatureHeader,
    *,
    method: str,
    target: str,
    headers: Mapping[str, str],
    public_pem: str,
) -> bool:
    """Whether the signature is the key's over the named headers."""
    try:
        key = serialization.load_pem_public_key(public_pem.encode())
    except (ValueError, UnsupportedAlgorithm):
        return False
    if not isinstance(key, rsa.RSAPublicKey):
        return False
    try:
        key.verify(
            parsed.signature,
            _signing_string(parsed.headers, method, target, headers),
            padding.PKCS1v15(),
            hashes.SHA256(),
        )
    except (InvalidSignature, BadSignature):
        return False
    return True


# --- RFC 9421 HTTP Message Signatures --------------------------------------------------------

Standard = Literal["cavage", "rfc9421"]
CAVAGE: Standard = "cavage"
RFC9421: Standard = "rfc9421"
LABEL = "sig1"  # as Fedify and Mastodon label theirs
# What a server answers a signature it does not take (400 and 401 as Fedify reads them,
# 403 as some servers answer): then the other standard is tried, once.
REFUSED_SIGNATURE = (400, 401, 403)
# An ``expires`` this far behind now still passes (clocks differ a little).
EXPIRES_SKEW_SECONDS = 60
# What anonbox covers when it signs: the method, where it is sent, the Date (for servers
# that check one) and the body through its Content-Digest (added by the signer).
SIGNED_COMPONENTS = ("@method", "@target-uri", "@authority", "date")
_ALGORITHMS: dict[str, type[algorithms.HTTPSignatureAlgorithm]] = {
    "rsa-v1_5-sha256": algorithms.RSA_V1_5_SHA256,
    "rsa-pss-sha512": algorithms.RSA_PSS_SHA512,
    "ed25519": algorithms.ED25519,
}


@dataclass(frozen=True, slots=True)
class MessageSignature:
    """One signature of a ``Signature-Input``/``Signature`` pair, as read from them."""

    label: str
    components: frozenset[str]  # the covered components named without parameters
    key_id: str
    created: int
    expires: int | None
    algorithm: str | None
    signature: bytes
    fields: tuple[str, str]  # Signature-Input and Signature of this one signature alone


def _dictionary(value: str | None, name: str) -> dict[str, Any]:
    if not value:
        raise BadSignature(f"The request has no {name} header")
    try:
        parsed = http_sf.parse(value.encode("latin-1"), tltype="dictionary")
    except (ValueError, TypeError, UnicodeError) as exc:  # StructuredFieldError is a ValueError
        raise BadSignature(f"The {name} header is not a structured field dictionary") from exc
    if not isinstance(parsed, dict):
        raise BadSignature(f"The {name} header is not a structured field dictionary")
    return parsed


def parse_rfc9421(signature_input: str | None, signature: str | None) -> MessageSignature:
    """The first signature whose input names its key and when it was created, with its
    value; ``BadSignature`` if there is none or the headers are malformed."""
    inputs = _dictionary(signature_input, "Signature-Input")
    values = _dictionary(signature, "Signature")
    for label, member in inputs.items():
        items, params = member
        value = values.get(label)
        if not isinstance(items, list) or not isinstance(value, tuple):
            continue
        key_id, created, expires = params.get("keyid"), params.get("created"), params.get("expires")
        algorithm = params.get("alg")
        if (
            not isinstance(key_id, str)
            or type(created) is not int
            or not isinstance(value[0], bytes)
            or (expires is not None and type(expires) is not int)
            or (algorithm is not None and not isinstance(algorithm, str))
        ):
            continue
        names = frozenset(name for name, extra in items if isinstance(name, str) and not extra)
        try:
            fields = (http_sf.ser({label: member}), http_sf.ser({label: value}))
        except (ValueError, TypeError) as exc:
            raise BadSignature("The Signature-Input header cannot be read back") from exc
        return MessageSignature(label, names, key_id, created, expires, algorithm, value[0], fields)
    raise BadSignature("No RFC 9421 signature names its keyid and created, with its value")


def check_rfc9421(
    parsed: MessageSignature,
    *,
    method: str,
    headers: Mapping[str, str],
    body: bytes,
    now: datetime | None = None,
) -> datetime:
    """What can be checked before the key is known: the signature covers the method, where
    the request was sent and (for a POST) its body's ``Content-Digest``, which is the
    body's; it was created within an hour of now and has not expired; its algorithm is
    one anonbox checks. When it was created, for how long it may be replayed."""
    covered = parsed.components
    if "@method" not in covered:
        raise BadSignature("The signature must cover @method")
    if "@target-uri" not in covered and not {"@path", "@authority"} <= covered:
        raise BadSignature("The signature must cover @target-uri, or @path and @authority")
    if method.upper() == "POST" and "content-digest" not in covered:
        raise BadSignature("The signature must cover content-digest")
    absent = [name for name in covered if not name.startswith("@") and name not in headers]
    if absent:
        raise BadSignature(f"The signed headers {', '.join(sorted(absent))[:200]} are missing")
    if parsed.algorithm is not None and parsed.algorithm not in _ALGORITHMS:
        raise BadSignature(f"The algorithm {parsed.algorithm[:40]!r} is not accepted")
    at = (now or datetime.now(UTC)).timestamp()
    if abs(at - parsed.created) > MAX_SKEW_SECONDS:
        raise BadSignature("The signature was not created within an hour of now")
    if parsed.expires is not None and parsed.expires + EXPIRES_SKEW_SECONDS < at:
        raise BadSignature("The signature has expired")
    if "content-digest" in covered:
        try:
            ContentDigest.verify(headers["content-digest"], body)
        except HTTPMessageSignaturesException as exc:  # InvalidSignature is one
            raise BadSignature("The Content-Digest header is not the body's") from exc
    return datetime.fromtimestamp(parsed.created, UTC)


def fingerprint_rfc9421(parsed: MessageSignature) -> str:
    """What an RFC 9421 signature is remembered by: its value and when it was created."""
    return hashlib.sha256(f"rfc9421 {parsed.created} ".encode() + parsed.signature).hexdigest()


@dataclass(slots=True)
class _Message:
    """A request as ``http-message-signatures`` reads one."""

    method: str
    url: str
    headers: dict[str, str]


def _algorithm_for(
    named: str | None, key: rsa.RSAPublicKey | ed25519.Ed25519PublicKey
) -> type[algorithms.HTTPSignatureAlgorithm] | None:
    if named is not None:
        chosen = _ALGORITHMS.get(named)
    elif isinstance(key, rsa.RSAPublicKey):
        chosen = algorithms.RSA_V1_5_SHA256  # what an RSA key signs with, as Fedify reads it
    else:
        chosen = algorithms.ED25519 if isinstance(key, ed25519.Ed25519PublicKey) else None
    rsa_alg = chosen in (algorithms.RSA_V1_5_SHA256, algorithms.RSA_PSS_SHA512)
    if chosen is None or rsa_alg != isinstance(key, rsa.RSAPublicKey):
        return None
    return chosen


def verify_rfc9421(
    parsed: MessageSignature,
    *,
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes,
    public_pem: str,
) -> bool:
    """Whether the signature is the key's over what it covers, ``url`` being where the
    request was sent (the public address, as the sender named it)."""
    try:
        key = serialization.load_pem_public_key(public_pem.encode())
    except (ValueError, UnsupportedAlgorithm):
        return False
    if not isinstance(key, (rsa.RSAPublicKey, ed25519.Ed25519PublicKey)):
        return False
    chosen = _algorithm_for(parsed.algorithm, key)
    if chosen is None:
        return False
    fields = {name.lower(): value for name, value in headers.items()}
    fields["signature-input"], fields["signature"] = parsed.fields
    verifier = HTTPMessageVerifier(
        signature_algorithm=chosen,
        key_resolver=MappingKeyResolver(public_keys={parsed.key_id: key}, private_keys={}),
    )
    verifier.max_clock_skew = timedelta(seconds=MAX_SKEW_SECONDS)
    try:
        verifier.verify(_Message(method.upper(), url, fields), max_age=timedelta(0), body=body)
    except HTTPMessageSignaturesException:
        return False
    return True


def sign_rfc9421(
    *, method: str, url: str, body: bytes | None, key_id: str, private_pem: str
) -> dict[str, str]:
    """The headers that sign a request as RFC 9421 asks: Date, Content-Digest (with a
    body), Signature-Input and Signature (``SIGNED_COMPONENTS``, rsa-v1_5-sha256)."""
    key = serialization.load_pem_private_key(private_pem.encode(), password=None)
    assert isinstance(key, rsa.RSAPrivateKey), "actors' keys are RSA"
    message = _Message(method.upper(), url, {"Date": http_date()})
    signer = HTTPMessageSigner(
        signature_algorithm=algorithms.RSA_V1_5_SHA256,
        key_resolver=MappingKeyResolver(public_keys={}, private_keys={key_id: key}),
    )
    signer.sign(
        message,
        key_id=key_id,
        created=datetime.now(UTC),
        label=LABEL,
        covered_component_ids=SIGNED_COMPONENTS,
        body=body,
    )
    return message.headers


# --- either standard, as an inbox reads it ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class Presented:
    """A request's signature, checked as far as it can be without its key."""

    standard: Standard
    key_id: str
    fingerprint: str  # what it is remembered by, so that it counts once
    sent: datetime  # its Date or created: it may be replayed for an hour after
    verify: Callable[[str], bool]  # whether it is this public key's (PEM)


def read(
    *, method: str, url: str, target: str, headers: Mapping[str, str], body: bytes
) -> Presented:
    """The signature of a request, RFC 9421's where it carries ``Signature-Input``, else
    draft-cavage's; ``BadSignature`` if it is absent or not as an inbox requires.
    ``url``: where the request was sent (its public address); ``target``: its path."""
    if "signature-input" in headers:
        message = parse_rfc9421(headers.get("signature-input"), headers.get("signature"))
        sent = check_rfc9421(message, method=method, headers=headers, body=body)
        return Presented(
            RFC9421,
            message.key_id,
            fingerprint_rfc9421(message),
            sent,
            lambda pem: verify_rfc9421(
                message, method=method, url=url, headers=headers, body=body, public_pem=pem
            ),
        )
    parsed = parse(headers.get("signature"))
    sent = check_request(parsed, method=method, headers=headers, body=body)
    return Presented(
        CAVAGE,
        parsed.key_id,
        fingerprint(parsed),
        sent,
        lambda pem: verify(parsed, method=method, target=target, headers=headers, public_pem=pem),
    )
