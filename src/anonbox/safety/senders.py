"""Recognising a repeat sender without knowing who it is.

A sender is their network: an IPv4 address, or an IPv6 /64 (one household or phone
gets a whole /64, so a single address would be trivially rotated). It is stored only
as HMAC-SHA256 under a key that changes every key period (``sender_epoch``, 24 hours
by default). A period's key is derived from the server secret *and* a random salt kept
in the database:

- someone who reads the database (or a backup) lacks the server secret, so cannot
  test the 2^32 IPv4 addresses against a hash;
- when a period's retention ends its salt is deleted, and its hashes can then be
  linked to no one, by anyone, ever: they are erased along with it.

So a hash recognises a sender for the retention period (90 days by default) and no
longer; that is the price of keeping nothing that identifies a person.

On a link that takes messages from signed-in senders only, a sender is their account
instead (``account_of``): the same keyed hash of the account's id, so a block of their
message blocks the account from any network, their limits follow the account, and the
creator learns no more than from a network's hash. Their network's hash (for "block this
network" and the wider limits) is kept as for anyone.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets

from anonbox.core.clock import now_us
from anonbox.core.database import Database
from anonbox.safety import repository
from anonbox.safety.schemas import IPAddress, SenderId

_US_PER_HOUR = 3600 * 1_000_000
_US_PER_DAY = 24 * _US_PER_HOUR


def network_of(address: IPAddress) -> bytes:
    """What identifies a sender: the IPv4 address, or the IPv6 /64 prefix."""
    if isinstance(address, ipaddress.IPv6Address):
        return b"6" + address.packed[:8]
    return b"4" + address.packed


def account_of(user_id: str) -> bytes:
    """What identifies a signed-in sender: their account (never stored as such)."""
    return b"a" + user_id.encode()


def identity_of(address: IPAddress, account: str | None) -> bytes:
    """The sender: their account when they are known by one, else their network."""
    return network_of(address) if account is None else account_of(account)


# The networks around a sender that are limited too, looser: a household or phone gets a
# new IPv6 /64 for nothing, and many IPv4 hosts of one provider share a /24.
WIDER_NETWORKS = {4: (24,), 6: (56, 48)}


def wider_networks_of(address: IPAddress) -> list[tuple[int, bytes]]:
    """Each wider network of the address, with what identifies it (prefix length, bytes)."""
    version = 6 if isinstance(address, ipaddress.IPv6Address) else 4
    return [
        (bits, f"{version}/{bits}:".encode() + address.packed[: bits // 8])
        for bits in WIDER_NETWORKS[version]
    ]


def network_of_block(address: IPAddress) -> bytes:
    """What "block this network" blocks: the widest network limited around the sender, an
    IPv4 /24 or an IPv6 /48."""
    return wider_networks_of(address)[-1][1]


class SenderKeys:
    """Per-period HMAC keys, derived on first use and cached for the process's life.
    A "sender" is a network (``network_of``), known only by its keyed hash."""

    def __init__(self, *, secret_key: str, rotation_hours: int, retention_days: int) -> None:
        self._secret = secret_key.encode()
        self._period_us = rotation_hours * _US_PER_HOUR
        self.retained_epochs = max(1, (retention_days * 24 + rotation_hours - 1) // rotation_hours)
        self._keys: dict[int, bytes] = {}

    def epoch_at(self, epoch_us: int) -> int:
        return epoch_us // self._period_us

    def _derive(self, epoch: int, salt: str) -> bytes:
        return hmac.new(
            self._secret, f"sender-key:{epoch}:{salt}".encode(), hashlib.sha256
        ).digest()

    async def key(self, db: Database, epoch: int) -> bytes | None:
        """The key of a period still retained, or None once its salt is gone."""
        if epoch in self._keys:
            return self._keys[epoch]
        salt = await repository.epoch_salt(db, epoch)
        if salt is None:
            return None
        self._keys[epoch] = self._derive(epoch, salt)
        return self._keys[epoch]

    async def _current_key(self, db: Database) -> tuple[int, bytes]:
        epoch = self.epoch_at(now_us())
        return epoch, await self.key(db, epoch) or await self._open_epoch(db, epoch)

    async def current(
        self, db: Database, address: IPAddress, account: str | None = None
    ) -> SenderId:
        """The sender's keyed hash now: their ``account``'s (a signed-in sender's user id)
        when given, else their network's."""
        epoch, key = await self._current_key(db)
        return SenderId(
            epoch=epoch,
            hash=self.hash_with(key, address, account),
            network=self.network_hash_with(key, address),
        )

    async def wider(self, db: Database, address: IPAddress) -> list[tuple[int, str]]:
        """The keyed hashes of the address's wider networks, under the current key."""
        _, key = await self._current_key(db)
        return [
            (bits, hmac.new(key, network, hashlib.sha256).hexdigest())
            for bits, network in wider_networks_of(address)
        ]

    @staticmethod
    def hash_with(key: bytes, address: IPAddress, account: str | None = None) -> str:
        return hmac.new(key, identity_of(address, account), hashlib.sha256).hexdigest()

    @staticmethod
    def network_hash_with(key: bytes, address: IPAddress) -> str:
        return hmac.new(key, network_of_block(address), hashlib.sha256).hexdigest()

    async def _open_epoch(self, db: Database, epoch: int) -> bytes:
        """Create the period's salt (once, whichever instance gets there first), and let the
        instance that created it erase the periods whose retention has ended."""
        created = await repository.insert_epoch(
            db, epoch=epoch, salt=secrets.token_hex(32), created_at=now_us()
        )
        if created:
            await self.forget_before(db, epoch - self.retained_epochs + 1)
        key = await self.key(db, epoch)
        assert key is not None, "the row was just written"
        return key

    async def forget_before(self, db: Database, epoch: int) -> None:
        """Erase every trace of the periods before ``epoch``: hashes, blocks, salts.

        Runs once per key period, so it also does the period's other housekeeping:
        idempotency records older than a day go too.
        """
        async with db.transaction() as tx:
            await repository.forget_epochs_before(
                tx, epoch=epoch, idempotent_since=now_us() - _US_PER_DAY
            )
        for old in [e for e in self._keys if e < epoch]:
            del self._keys[old]
