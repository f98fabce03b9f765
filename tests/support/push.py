"""What a browser sends to subscribe a device to Web Push: an endpoint and real keys."""

from __future__ import annotations

import base64
import uuid
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def subscription_body(endpoint: str | None = None) -> dict[str, Any]:
    """A device's subscription, with a real P-256 key as a browser would make; at
    ``endpoint``, or at a fresh one on push.example.org."""
    device = ec.generate_private_key(ec.SECP256R1()).public_key()
    point = device.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
    return {
        "endpoint": endpoint or f"https://push.example.org/{uuid.uuid4().hex}",
        "keys": {"p256dh": _b64url(point), "auth": _b64url(uuid.uuid4().bytes)},
    }
