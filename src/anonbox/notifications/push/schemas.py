"""What the Web Push endpoints of the API take and answer."""

from typing import Annotated

import msgspec
from litestar.params import KwargDefinition

from anonbox.core.egress import MAX_URL_CHARACTERS, PUSH_ENDPOINT
from anonbox.core.envelope import Timestamp
from anonbox.core.openapi import keep_component_names

# Base64url, padded or not: an uncompressed P-256 point (65 bytes, the first 0x04, so its
# text starts "B" and a letter A to P), and a 16-byte secret. Nothing else decodes to them.
P256DH = r"^B[A-P][A-Za-z0-9_-]{85}=*$"
AUTH_KEY = r"^[A-Za-z0-9_-]{22}=*$"


class PushKeys(msgspec.Struct, forbid_unknown_fields=True):
    # At most the padding base64 gives 65 and 16 bytes.
    p256dh: Annotated[str, msgspec.Meta(max_length=88, pattern=P256DH)]  # the public key
    auth: Annotated[str, msgspec.Meta(max_length=24, pattern=AUTH_KEY)]


class PushSubscriptionIn(msgspec.Struct):
    """A browser's ``PushSubscription.toJSON()``, and whether to show first words."""

    # Documented here, checked in the service (``push.delivery.check_endpoint``), where a test setup
    # may also allow http.
    endpoint: Annotated[
        str,
        KwargDefinition(min_length=1, max_length=MAX_URL_CHARACTERS, pattern=PUSH_ENDPOINT),
    ]
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


# Published from ``notifications.push_schemas`` before it was split (core/openapi.py).
keep_component_names(
    "anonbox.notifications.push_schemas", PushSubscriptionOut, PushSubscriptionList, PushKeyOut
)
