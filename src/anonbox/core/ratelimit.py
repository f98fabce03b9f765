"""Rate limits: a sliding-window log per (limit, key), kept in memory or in Redis.

A ``Limit`` allows at most ``max_requests`` hits in any ``window_seconds`` that ends
now. Each (limit, key) keeps the times of the hits it let through in the last window;
a hit is allowed when every log it touches holds fewer than ``max_requests`` entries,
and is then recorded in all of them, or in none. This is exact (N concurrent hits
against a limit of L let exactly L through, and never more than L in any window), its
``retry_after`` is the true wait until the oldest blocking entry leaves the window,
and it costs one timestamp per hit let through: small for the per-sender limits, and
bounded by ``max_requests`` for a viral link. GCRA would keep one number per key but
lets up to 2L - 1 through in a window, which reads badly as "L per window".

``MemoryRateLimiter`` counts per process (fine for one instance); ``RedisRateLimiter``
shares the counts between instances through one Lua script, and when Redis cannot be
reached it allows everything (``fail_open``) or raises ``ServiceUnavailable``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import redis.asyncio
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from anonbox.core.errors import ServiceUnavailable

logger = logging.getLogger("anonbox.ratelimit")

REDIS_KEY_PREFIX = "anonbox:rl:"
UNAVAILABLE_MESSAGE = "Rate limiting is unavailable; try again shortly"


@dataclass(frozen=True, slots=True)
class Limit:
    name: str  # part of the storage key: two limits must not share a name
    max_requests: int
    window_seconds: int

    def __post_init__(self) -> None:
        if self.max_requests < 1 or self.window_seconds < 1:
            raise ValueError(f"limit {self.name!r} needs max_requests and window_seconds >= 1")


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    retry_after: int  # whole seconds, >= 1 when refused, 0 when allowed


ALLOWED = Decision(allowed=True, retry_after=0)


class RateLimiter(Protocol):
    async def hit(self, checks: Sequence[tuple[Limit, str]]) -> Decision:
        """Count one request against every (limit, key), all of them or none.

        Refused when any limit is full; ``retry_after`` is then the longest wait among
        the full ones, and no counter moves.
        """
        ...

    async def count(self, limit: Limit, key: str) -> int:
        """How many hits (limit, key) let through in its last window (0 when unknown)."""
        ...

    async def close(self) -> None: ...


def rate_limiter_from_settings(redis_url: str | None, fail_open: bool) -> RateLimiter:
    """Redis when a URL is configured, otherwise counts in this process's memory."""
    if redis_url is None:
        return MemoryRateLimiter()
    return RedisRateLimiter(redis_client(redis_url), fail_open=fail_open)


def redis_client(url: str) -> redis.asyncio.Redis:
    """A client that gives up quickly, as a rate limiter's must; it connects on first use."""
    return redis.asyncio.Redis.from_url(
        url,
        # A rate limit must never be what makes a request hang: a Redis that is down
        # refuses at once, one that is unreachable costs at most these timeouts.
        socket_connect_timeout=0.5,
        socket_timeout=0.5,
        # One immediate retry replaces a pooled connection that Redis closed (after a
        # restart); the default (10 retries with backoff) would take seconds. If a reply
        # is lost after the script ran, the retry counts that hit twice: it errs toward
        # refusing, never toward letting more through.
        retry=Retry(NoBackoff(), retries=1),
    )


def _refused(wait_seconds: float) -> Decision:
    return Decision(allowed=False, retry_after=max(1, math.ceil(wait_seconds)))


def _storage_keys(checks: Sequence[tuple[Limit, str]]) -> list[str]:
    keys = [f"{limit.name}:{key}" for limit, key in checks]
    if len(set(keys)) != len(keys):
        # The two backends would count a repeated pair differently (twice in memory,
        # once in a Redis set), so refuse the ambiguity instead.
        raise ValueError("the same (limit, key) appears twice in one hit")
    return keys


# --- In memory ----------------------------------------------------------------------------


class MemoryRateLimiter:
    """Counts in this process, for one event loop.

    ``hit`` never awaits, so concurrent tasks cannot interleave between the check and
    the record. Logs are grouped by window length and kept in order of their last
    entry, so the idle ones are at the front of their group and are dropped as soon
    as their window has passed: memory follows the hits let through in the last window,
    and refused hits store nothing.
    """

    def __init__(self) -> None:
        self._logs: dict[int, OrderedDict[str, deque[float]]] = {}

    @property
    def tracked_keys(self) -> int:
        """How many (limit, key) logs are held now (for tests and metrics)."""
        return sum(len(group) for group in self._logs.values())

    async def hit(self, checks: Sequence[tuple[Limit, str]]) -> Decision:
        keys = _storage_keys(checks)
        now = time.monotonic()
        self._forget_idle(now)
        wait = 0.0
        for (limit, _), key in zip(checks, keys, strict=True):
            group = self._logs.get(limit.window_seconds)
            log = None if group is None else group.get(key)
            if log is None:
                continue
            while log and log[0] <= now - limit.window_seconds:
                log.popleft()
            if len(log) >= limit.max_requests:
                # Allowed again once enough old entries leave that one more fits.
                oldest_blocking = log[len(log) - limit.max_requests]
                wait = max(wait, oldest_blocking + limit.window_seconds - now)
        if wait > 0:
            return _refused(wait)
        for (limit, _), key in zip(checks, keys, strict=True):
            group = self._logs.setdefault(limit.window_seconds, OrderedDict())
            group.setdefault(key, deque()).append(now)
            group.move_to_end(key)
        return ALLOWED

    async def count(self, limit: Limit, key: str) -> int:
        now = time.monotonic()
        group = self._logs.get(limit.window_seconds)
        log = None if group is None else group.get(_storage_keys([(limit, key)])[0])
        return 0 if log is None else sum(1 for at in log if at > now - limit.window_seconds)

    def _forget_idle(self, now: float) -> None:
        for window, group in list(self._logs.items()):
            while group:
                log = next(iter(group.values()))
                if log and log[-1] > now - window:
                    break
                group.popitem(last=False)
            if not group:
                del self._logs[window]

    async def close(self) -> None:
        self._logs.clear()


# --- Redis --------------------------------------------------------------------------------

# KEYS: one sorted set per (limit, key), scored by hit time in microseconds.
# ARGV[1]: a member unique to this hit; then max_requests, window (µs) for each key.
# Returns 0 when the hit is recorded everywhere, else the wait in microseconds.
#
# Time is Redis's own clock (TIME), not the callers': every instance then measures
# windows on one clock, so skew between app hosts cannot shift them. Redis >= 5
# replicates scripts by their effects, which is what allows TIME before a write.
_SLIDING_WINDOW_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local wait = 0
for i, key in ipairs(KEYS) do
  local max_requests = tonumber(ARGV[2 * i])
  local window = tonumber(ARGV[2 * i + 1])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local count = redis.call('ZCARD', key)
  if count >= max_requests then
    local oldest = redis.call('ZRANGE', key, count - max_requests, count - max_requests,
                              'WITHSCORES')
    local key_wait = tonumber(oldest[2]) + window - now
    if key_wait > wait then wait = key_wait end
  end
end
if wait > 0 then return wait end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now, ARGV[1])
  redis.call('PEXPIRE', key, tonumber(ARGV[2 * i + 1]) / 1000)
end
return 0
"""

# KEYS[1]: one (limit, key)'s sorted set; ARGV[1]: its window (µs). Returns its hits in
# the window, on Redis's clock.
_COUNT_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
return redis.call('ZCOUNT', KEYS[1], '(' .. (now - tonumber(ARGV[1])), '+inf')
"""

_REDIS_UNAVAILABLE: tuple[type[BaseException], ...] = (RedisError, OSError, TimeoutError)


class RedisRateLimiter:
    """Counts in Redis, shared by every instance that uses the same Redis and prefix.

    One Lua script checks and records all of a hit's limits, so it is atomic across
    instances. Keys are ``{prefix}{limit name}:{key}`` and expire one window after
    their last hit. All keys of a hit go to one script, so Redis Cluster would need
    them in one slot: this is written for a single Redis (or a primary with replicas).

    When Redis errors or does not answer within ``timeout`` seconds, a hit is allowed
    (``fail_open``) or raises ``ServiceUnavailable``. The limiter owns the client and
    closes it.
    """

    def __init__(
        self,
        client: redis.asyncio.Redis,
        *,
        fail_open: bool,
        prefix: str = REDIS_KEY_PREFIX,
        timeout: float = 1.0,
    ) -> None:
        self._client = client
        self._script = client.register_script(_SLIDING_WINDOW_LUA)
        self._count = client.register_script(_COUNT_LUA)
        self._fail_open = fail_open
        self._prefix = prefix
        self._timeout = timeout
        self._failing = False

    async def hit(self, checks: Sequence[tuple[Limit, str]]) -> Decision:
        keys = [self._prefix + key for key in _storage_keys(checks)]
        if not keys:
            return ALLOWED
        args: list[str | int] = [secrets.token_hex(8)]
        for limit, _ in checks:
            args += [limit.max_requests, limit.window_seconds * 1_000_000]
        try:
            # The client's socket timeouts bound each attempt; this bounds the whole
            # call, whatever client the limiter was given.
            async with asyncio.timeout(self._timeout):
                wait_us = int(await self._script(keys=keys, args=args))
        except _REDIS_UNAVAILABLE as exc:
            return self._unavailable(exc)
        if self._failing:
            self._failing = False
            logger.info("rate limiting: Redis answers again")
        return ALLOWED if wait_us == 0 else _refused(wait_us / 1_000_000)

    async def count(self, limit: Limit, key: str) -> int:
        keys = [self._prefix + _storage_keys([(limit, key)])[0]]
        try:
            async with asyncio.timeout(self._timeout):
                return int(await self._count(keys=keys, args=[limit.window_seconds * 1_000_000]))
        except _REDIS_UNAVAILABLE:
            return 0  # a count only informs; the outage is logged by hit()

    def _unavailable(self, exc: BaseException) -> Decision:
        if not self._failing:
            # Once per outage, not once per request.
            self._failing = True
            logger.error(
                "rate limiting: Redis unavailable (%s: %s); %s until it answers",
                type(exc).__name__,
                exc,
                "allowing every request" if self._fail_open else "refusing requests",
            )
        if self._fail_open:
            return ALLOWED
        raise ServiceUnavailable(UNAVAILABLE_MESSAGE) from exc

    async def close(self) -> None:
        await self._client.aclose()
