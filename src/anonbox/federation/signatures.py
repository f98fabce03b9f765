"""HTTP Signatures as Mastodon, Misskey and Fedify send and check them (draft-cavage-12).

A signed request carries ``Date``, ``Digest: SHA-256=<base64>`` of its body (POST) and
``Signature: keyId="…",algorithm="rsa-sha256",headers="(request-target) host date
digest",signature="…"``: RSASSA-PKCS1-v1_5 with SHA-256 over the named headers, one
``name: value`` line each. ``hs2019`` (what newer senders write) is read as rsa-sha256 for
an RSA key, as Mastodon does.

Written here with ``cryptography`` rather than taken from a package: the maintained ones
implement RFC 9421 only, or pull in a JSON-LD processor and two HTTP clients
(``docs/decisions.md``). No SQL and no HTTP here: the inbox (``service``) and the courier
(``delivery``) call these.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

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
