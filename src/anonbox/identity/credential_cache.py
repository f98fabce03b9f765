"""Credentials the database has just proved, remembered for a while, so that most
authenticated requests need not ask it who they come from.

Only a proof is remembered, never a refusal: an unknown, revoked or expired credential
is looked up every time, as before, so timing tells nothing about which credentials
exist. A remembered one is found by its SHA-256 and compared again in constant time.

A change that can end or alter a credential (an API key revoked; a session signed out,
refreshed, or revoked for reuse; an account's deletion asked, cancelled or done; the
admin role granted) is announced under ``credentials:{user_id}`` or ``session:{id}``
(``announce``): this process forgets at once, after the commit, and the other instances
hear it through the live fan-out (``outbox.fanout``), whose keys reach ``forget``:

- on PostgreSQL the announcement is a NOTIFY in the change's own transaction, heard by
  every instance once it commits (from any process, the CLI's too). An entry lives up
  to ``NOTIFIED_TTL_SECONDS`` but is used only while the listener has shown, within the
  last ``LEASE_SECONDS``, that it hears everything: it notifies itself every
  ``fanout.CONFIRM_SECONDS``, and its echo comes after every notification committed
  before it was sent. A change committed at t is therefore applied on every instance
  before any of them uses an entry after t + ``LEASE_SECONDS``; a listener that falls
  silent (connection lost, loop stalled) sends every request to the database again, and
  a listener that reconnects (and may have missed something) empties the cache;
- on SQLite (no notifications; worker processes may share the file) an entry lives
  ``LOCAL_TTL_SECONDS``: this process forgets at once, the others within that time.

A lookup under way while anything was forgotten is not remembered: it may have read the
row from before the change.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic, NamedTuple, TypeVar

from anonbox.core.database import Connection
from anonbox.identity.credentials import hashes_match
from anonbox.outbox import repository as events

LOCAL_TTL_SECONDS = 0.5
NOTIFIED_TTL_SECONDS = 60.0
LEASE_SECONDS = 0.75
MAX_ENTRIES = 10_000
CHANGED = "credentials:"
SESSION = "session:"  # what sign-out already announces, for live streams

V = TypeVar("V")


def changed_key(user_id: str) -> str:
    return f"{CHANGED}{user_id}"


def session_key(session_id: str) -> str:
    return f"{SESSION}{session_id}"


class Ticket(NamedTuple):
    """Taken before a lookup: when it began, and what had been forgotten by then."""

    generation: int
    started: float


@dataclass(frozen=True, slots=True)
class _Entry(Generic[V]):
    value: V
    credential_hash: str
    expires: float  # monotonic
    keys: tuple[str, ...]


class CredentialCache(Generic[V]):
    """Proven credentials by hash, forgotten by account or session key."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry[V]] = {}
        self._by_key: dict[str, set[str]] = {}
        self._generation = 0
        self._confirmed: Callable[[], float] | None = None
        self._ttl = LOCAL_TTL_SECONDS
        self.hits = 0
        self.misses = 0

    def rely_on(self, confirmed: Callable[[], float] | None) -> None:
        """Keep entries long while ``confirmed()`` (the monotonic time as of which every
        announcement has been heard) is recent; None: back to the short local life."""
        self.clear()
        self._confirmed = confirmed
        self._ttl = LOCAL_TTL_SECONDS if confirmed is None else NOTIFIED_TTL_SECONDS

    def get(self, credential_hash: str) -> V | None:
        entry = self._entries.get(credential_hash)
        now = time.monotonic()
        if (
            entry is None
            or now >= entry.expires
            or (self._confirmed is not None and self._confirmed() < now - LEASE_SECONDS)
            or not hashes_match(entry.credential_hash, credential_hash)
        ):
            self.misses += 1
            return None
        self.hits += 1
        return entry.value

    def ticket(self) -> Ticket:
        return Ticket(self._generation, time.monotonic())

    def put(
        self,
        credential_hash: str,
        value: V,
        ticket: Ticket,
        *,
        keys: Iterable[str],
        valid_for: float | None = None,
    ) -> None:
        """Remember a proof made after ``ticket`` was taken, for at most ``valid_for``
        more seconds (an access token's remaining life), unless something was forgotten
        meanwhile."""
        if ticket.generation != self._generation:
            return
        expires = ticket.started + self._ttl
        if valid_for is not None:
            expires = min(expires, ticket.started + valid_for)
        if len(self._entries) >= MAX_ENTRIES:
            self._drop(next(iter(self._entries)))  # the oldest
        self._drop(credential_hash)
        entry = _Entry(value, credential_hash, expires, tuple(keys))
        self._entries[credential_hash] = entry
        for key in entry.keys:
            self._by_key.setdefault(key, set()).add(credential_hash)

    def forget(self, key: str | None) -> None:
        """Forget the entries of an announced key; None: everything (announcements may
        have been missed). Keys of other kinds are ignored."""
        if key is None:
            self.clear()
        elif key.startswith((CHANGED, SESSION)):
            self._generation += 1
            for credential_hash in self._by_key.pop(key, ()):
                self._drop(credential_hash)

    def clear(self) -> None:
        self._generation += 1
        self._entries.clear()
        self._by_key.clear()

    def _drop(self, credential_hash: str) -> None:
        entry = self._entries.pop(credential_hash, None)
        if entry is None:
            return
        for key in entry.keys:
            hashes = self._by_key.get(key)
            if hashes is not None:
                hashes.discard(credential_hash)
                if not hashes:
                    del self._by_key[key]

    def stats(self) -> dict[str, int]:
        return {"entries": len(self._entries), "hits": self.hits, "misses": self.misses}


async def announce(conn: Connection, keys: Iterable[str]) -> None:
    """Tell every instance, once the caller's transaction commits, that credentials under
    these keys changed; call ``forget_here`` after the commit for this process."""
    await events.notify(conn, list(keys))
