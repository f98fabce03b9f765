"""What the API says about a creator's fediverse accounts (the envelope's ``data``)."""

from __future__ import annotations

from typing import Literal

import msgspec

from anonbox.core.envelope import Timestamp

Software = Literal["mastodon", "misskey"]


class FediverseAccount(msgspec.Struct):
    """A Mastodon or Misskey account that signs in to this account. Never its token."""

    id: str
    software: Software
    instance: str  # https://host
    acct: str  # user@host
    connected: bool  # false: the instance refused its token; sign in with it again
    created_at: Timestamp
    disconnected_at: Timestamp | None = None


class FediverseAccountList(msgspec.Struct):
    items: list[FediverseAccount]
