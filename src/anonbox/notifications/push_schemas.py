"""What the Web Push endpoints of the API take and answer."""

from __future__ import annotations

from typing import Annotated

import msgspec

from anonbox.core.envelope import Timestamp

MAX_ENDPOINT_CHARACTERS = 2000
Key = Annotated[str, msgspec.Meta(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_\-=]+$")]


class PushKeys(msgspec.Struct, forbid_unknown_fields=True):
    p256dh: Key  # the device's P-256 public key, base64url
    auth: Key  # its 16-byte authentication secret, base64url


class PushSubscriptionIn(msgspec.Struct):
    """A browser's ``PushSubscription.toJSON()``, and whether to show first words."""

    endpoint: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_ENDPOINT_CHARACTERS)]
    keys: PushKeys
    preview: bool = False
    # The browser sends it; the push service, not anonbox, decides when it ends.
    expiration_time: float | None = msgspec.field(default=None, name="expirationTime")


class PushSubscriptionOut(msgspec.Struct):
    id: str
    endpoint: str
    preview: bool
    created_at: Timestamp


class PushSubscriptionList(msgspec.Struct):
    items: list[PushSubscriptionOut]


class PushKeyOut(msgspec.Struct):
    public_key: str  # the applicationServerKey for PushManager.subscribe, base64url
