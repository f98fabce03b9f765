"""API keys: generated here, shown once, stored only as a SHA-256 hash.

A key is ``anb_`` followed by 40 base62 characters (~238 random bits). With that much
entropy a plain SHA-256 is as strong as a slow hash and lets the lookup use an index.
"""

from __future__ import annotations

import hashlib
import secrets

API_KEY_PREFIX = "anb_"
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_KEY_BODY_LENGTH = 40
MAX_CREDENTIAL_LENGTH = 512


def new_api_key() -> str:
    return API_KEY_PREFIX + "".join(secrets.choice(_BASE62) for _ in range(_KEY_BODY_LENGTH))


def credential_hash(credential: str) -> str:
    return hashlib.sha256(credential.encode()).hexdigest()


def hashes_match(stored: str, presented: str) -> bool:
    return secrets.compare_digest(stored.encode(), presented.encode())
