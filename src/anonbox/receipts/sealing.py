"""A receipt's copy of the sender's text, readable only with the receipt's token.

The table keeps the token's SHA-256 for lookup; the text is sealed with AES-GCM under
HMAC-SHA256(token, purpose), a different function of the token, so a copy of the
database (or anyone who can read it) holds neither the token nor the text. Without it
a receipt would keep in clear the very text a drop promises not to keep.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

import msgspec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

_PURPOSE = b"anonbox receipt text v1"
_NONCE_BYTES = 12


class Sealed(msgspec.Struct, array_like=True):
    text: str
    created_at: str  # as shown: ISO 8601


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _key(token: str) -> bytes:
    return hmac.new(token.encode(), _PURPOSE, hashlib.sha256).digest()


def seal(token: str, part: str, sealed: Sealed) -> str:
    """``part`` (message or follow-up) is bound in, so one sealed text cannot pass for the
    other."""
    nonce = secrets.token_bytes(_NONCE_BYTES)
    box = AESGCM(_key(token)).encrypt(nonce, msgspec.json.encode(sealed), part.encode())
    return base64.urlsafe_b64encode(nonce + box).decode()


def unseal(token: str, part: str, stored: str) -> Sealed:
    raw = base64.urlsafe_b64decode(stored)
    plain = AESGCM(_key(token)).decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], part.encode())
    return msgspec.json.decode(plain, type=Sealed)
