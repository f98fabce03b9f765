"""Live fan-out: wake the open dashboards of a link when something happens to it, on
every instance, without any open stream asking the database.

Each process keeps one ``Hub``: a stream subscribes to keys (``link:{id}`` for its link,
``session:{id}`` for its sign-in session) and waits. One subscription per process feeds
the hub:

- on PostgreSQL, one connection ``LISTEN``s to ``anonbox_events``; the writes that
  matter ``pg_notify`` a key in their own transaction, so the notification arrives once
  it commits, on every instance (``ListenerFeed``). After the connection is lost and
  made again, every subscriber is woken once, to catch up what it missed;
- on SQLite, the process tails the outbox (``events``, whose seq is the commit order)
  and the sessions signed out since its last look, twice a second (``TailFeed``): one
  query pair per process, however many streams are open, and it sees the commits of
  every worker process sharing the file.

A woken stream reads what is new for it once; an idle one costs nothing. Taps see every
key too (``Hub.tap``): the cache of proven credentials forgets by them.

On PostgreSQL the listener also notifies itself every ``CONFIRM_SECONDS`` on a channel of
its own, and records when each echo was sent (``Hub.confirmed_at``): notifications come
in commit order, so once an echo is in, everything committed before it was sent has been
published here. A listener that hears nothing more has nothing confirmed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Callable, Iterator, Mapping, Sequence

import asyncpg

from anonbox.core.clock import now_us
from anonbox.core.database import Database, Row, driver_url
from anonbox.outbox import repository

logger = logging.getLogger("anonbox.notifications")

TAIL_SECONDS = 0.5
RECONNECT_SECONDS = 1.0
CONFIRM_SECONDS = 0.2


class Hub:
    """Who in this process waits on which key."""

    def __init__(self) -> None:
        self._waiting: dict[str, set[asyncio.Event]] = {}
        # Set on every publication, whoever waits: wakes the notification worker early.
        self.activity = asyncio.Event()
        self._taps: list[Callable[[str | None], None]] = []
        # Monotonic time as of which every notification committed has been published here
        # (PostgreSQL's listener; 0: nothing confirmed).
        self.confirmed_at = 0.0
        # PostgreSQL's listener: whether it is connected, and how often it lost the connection.
        self.listening = False
        self.losses = 0

    def tap(self, callback: Callable[[str | None], None]) -> None:
        """Call ``callback`` with every key published, and with None when publications may
        have been missed (the listener connected again)."""
        self._taps.append(callback)

    def missed(self) -> None:
        for callback in self._taps:
            callback(None)

    def confirm(self, sent_at: float) -> None:
        self.confirmed_at = max(self.confirmed_at, sent_at)

    @contextlib.contextmanager
    def subscription(self, *keys: str) -> Iterator[asyncio.Event]:
        """An event set whenever one of ``keys`` is published (clear it once handled)."""
        woken = asyncio.Event()
        for key in keys:
            self._waiting.setdefault(key, set()).add(woken)
        try:
            yield woken
        finally:
            for key in keys:
                waiting = self._waiting.get(key)
                if waiting is not None:
                    waiting.discard(woken)
                    if not waiting:
                        del self._waiting[key]

    def publish(self, key: str) -> None:
        self.activity.set()
        for callback in self._taps:
            callback(key)
        for woken in self._waiting.get(key, ()):
            woken.set()

    def publish_all(self) -> None:
        self.activity.set()
        for waiting in self._waiting.values():
            for woken in waiting:
                woken.set()

    def stats(self) -> Mapping[str, int]:
        confirmed = self.confirmed_at
        confirmed_ms_ago = (time.monotonic() - confirmed) * 1000 if confirmed else -1
        return {
            "subscribed_keys": len(self._waiting),
            "listening": int(self.listening),
            "listener_losses": self.losses,
            "confirmed_ms_ago": int(confirmed_ms_ago),
        }


LISTENER_NAME = "anonbox listener"


class ListenerFeed:
    """PostgreSQL: one LISTEN connection per process, kept open, feeding the hub."""

    # Its echoes set ``Hub.confirmed_at``: what it has heard is all that was committed.
    confirms = True

    def __init__(self, database_url: str, hub: Hub) -> None:
        self._dsn = driver_url(database_url)[1]
        self._hub = hub
        # This process's own channel for its echoes: nobody else hears them.
        self._echo_channel = f"anonbox_echo_{secrets.token_hex(8)}"

    async def run(self) -> None:
        first = True
        while True:
            try:
                # Straight to PostgreSQL (ANONBOX_DATABASE_LISTEN_URL past a pooler), and
                # named, so that an operator tells it from the pooled ones.
                conn = await asyncpg.connect(
                    self._dsn, timeout=5, server_settings={"application_name": LISTENER_NAME}
                )
            except (OSError, asyncpg.PostgresError, TimeoutError) as exc:
                logger.warning("live updates: cannot listen (%s); retrying", type(exc).__name__)
                await asyncio.sleep(RECONNECT_SECONDS)
                continue
            except Exception:  # whatever the driver raises, this process must listen again
                logger.exception("live updates: cannot listen; retrying")
                await asyncio.sleep(RECONNECT_SECONDS)
                continue
            lost = asyncio.Event()
            self._hub.listening = True
            try:
                conn.add_termination_listener(lambda _conn, lost=lost: lost.set())
                await conn.add_listener(repository.NOTIFY_CHANNEL, self._received)
                await conn.add_listener(self._echo_channel, self._echoed)
                self._hub.missed()  # whatever was published before now, or while away
                if not first:  # what was published while we were away
                    self._hub.publish_all()
                first = False
                await self._confirm_until(conn, lost)
                logger.warning("live updates: the listening connection was lost; reconnecting")
            # InterfaceError: an echo sent on a connection that just closed.
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError) as exc:
                logger.warning("live updates: listening failed (%s)", type(exc).__name__)
            except Exception:  # never end the feed: a process that stops listening for good
                # would go on refusing every remembered credential and waking no stream
                logger.exception("live updates: listening failed")
            finally:
                self._hub.listening = False
                self._hub.losses += 1
                with contextlib.suppress(Exception):
                    await conn.close(timeout=1)
            await asyncio.sleep(RECONNECT_SECONDS)

    async def _confirm_until(self, conn: asyncpg.Connection, lost: asyncio.Event) -> None:
        """Notify ourselves now and then, the send time as payload, until the connection
        is lost; a notification that does not go out in time counts as a loss."""
        while not lost.is_set():
            sent_at = time.monotonic()
            await repository.echo(conn, self._echo_channel, repr(sent_at), within=5)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(lost.wait(), CONFIRM_SECONDS)

    def _received(self, _conn: object, _pid: int, _channel: str, payload: str) -> None:
        self._hub.publish(payload)

    def _echoed(self, _conn: object, _pid: int, _channel: str, payload: str) -> None:
        self._hub.confirm(float(payload))


class TailFeed:
    """SQLite: tail the outbox, the signed-out sessions and the stream overlays, feeding
    the hub."""

    confirms = False  # ``Hub.confirmed_at`` stays 0: nothing is confirmed

    def __init__(self, db: Database, hub: Hub) -> None:
        self._db = db
        self._hub = hub

    async def run(self) -> None:
        seq = await repository.last_seq(self._db)
        since = now_us()
        # Overlays are followed by the newest change seen, not by the clock when we looked:
        # a change's time is taken inside its write transaction, and SQLite's one writer
        # commits them in that order, so one committed after a look is never older than
        # what that look saw. (By the clock, a look between a change's time and its
        # commit moved past it, and the change was never heard.)
        overlays_seen = (since, frozenset[str]())  # the newest time, and who changed then
        while True:
            await asyncio.sleep(TAIL_SECONDS)
            try:
                looked = now_us()
                for row in await repository.links_since(self._db, seq):
                    seq = int(row["seq"])
                    self._hub.publish(f"link:{row['link_id']}")
                for row in await repository.sessions_ended_since(self._db, since):
                    self._hub.publish(f"session:{row['id']}")
                overlays_seen = self._overlays(
                    await repository.overlays_changed_since(self._db, overlays_seen[0]),
                    overlays_seen,
                )
                since = looked
            except Exception:  # the database is away a moment: look again next time
                logger.warning("live updates: tailing the outbox failed", exc_info=True)

    def _overlays(
        self, rows: Sequence[Row], seen: tuple[int, frozenset[str]]
    ) -> tuple[int, frozenset[str]]:
        """Publish the overlays changed since the newest change seen (``rows``: at that
        time or later, oldest first), but not one already published for that very time."""
        newest, at_newest = seen
        for row in rows:
            changed_at, user_id = int(row["updated_at"]), str(row["user_id"])
            if changed_at == newest and user_id in at_newest:
                continue
            self._hub.publish(f"stream:{user_id}")
            if changed_at > newest:
                newest, at_newest = changed_at, frozenset()
            at_newest = at_newest | {user_id}
        return newest, at_newest


def feed_for(db: Database, database_url: str, hub: Hub) -> ListenerFeed | TailFeed:
    if repository.notifies(db):
        return ListenerFeed(database_url, hub)
    return TailFeed(db, hub)
