"""Opaque credentials: generated here, shown once, stored only as a SHA-256 hash.

Each is a prefix that says what it is, then 40 base62 characters (~238 random bits).
With that much entropy a plain SHA-256 is as strong as a slow hash, and lets the
lookup use an index.

    anb_   API key        long-lived, named, revocable
    anbs_  access token   from sign-in or refresh, short-lived
    anbr_  refresh token  rotated at every use
"""

from __future__ import annotations

import hashlib
import secrets

API_KEY_PREFIX = "anb_"
ACCESS_TOKEN_PREFIX = "anbs_"  # noqa: S105 - a prefix, not a secret
REFRESH_TOKEN_PREFIX = "anbr_"  # noqa: S105 - a prefix, not a secret
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_KEY_BODY_LENGTH = 40
MAX_CREDENTIAL_LENGTH = 512


def new_credential(prefix: str) -> str:
    return prefix + "".join(secrets.choice(_BASE62) for _ in range(_KEY_BODY_LENGTH))


def new_api_key() -> str:
    return new_credential(API_KEY_PREFIX)


def credential_hash(credential: str) -> str:
    return hashlib.sha256(credential.encode()).hexdigest()


def hashes_match(stored: str, presented: str) -> bool:
    return secrets.compare_digest(stored.encode(), presented.encode())
