"""Rate limits: the same behaviour in memory and in Redis, and what happens when Redis is down.

Every test that takes ``backend`` runs twice: in memory and against the real Redis.
Redis tests are skipped only outside CI when no server answers; with CI=true they must
run. Each test counts under its own Redis key prefix and deletes it afterwards.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pytest
import redis.asyncio

from anonbox.core.errors import ServiceUnavailable
from anonbox.core.ratelimit import (
    Decision,
    Limit,
    MemoryRateLimiter,
    RateLimiter,
    RedisRateLimiter,
    rate_limiter_from_settings,
    redis_client,
)
from tests.support.services import REDIS_URL, require_redis

NOTHING_LISTENS_URL = "redis://127.0.0.1:1/0"

Checks = Sequence[tuple[Limit, str]]


async def _redis_keys(prefix: str) -> dict[str, int]:
    """Every key under ``prefix``, with its time to live in milliseconds."""
    client = redis.asyncio.Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        return {key: await client.pttl(key) async for key in client.scan_iter(match=prefix + "*")}
    finally:
        await client.aclose()


async def _delete_redis_keys(prefix: str) -> None:
    client = redis.asyncio.Redis.from_url(REDIS_URL)
    try:
        keys = [key async for key in client.scan_iter(match=prefix + "*")]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()


@dataclass(frozen=True)
class Backend:
    name: str
    prefix: str  # this test's own Redis namespace

    def limiter(self) -> RateLimiter:
        """A new limiter: in memory a fresh count, in Redis a new client on the shared one."""
        if self.name == "memory":
            return MemoryRateLimiter()
        return RedisRateLimiter(redis_client(REDIS_URL), fail_open=False, prefix=self.prefix)


def _redis_backend() -> Iterator[Backend]:
    require_redis()
    backend = Backend("redis", f"anonbox:rl:test-{uuid.uuid4().hex[:12]}:")
    yield backend
    asyncio.run(_delete_redis_keys(backend.prefix))


@pytest.fixture(params=["memory", "redis"])
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    if request.param == "memory":
        yield Backend("memory", "")
    else:
        yield from _redis_backend()


@pytest.fixture
def redis_backend() -> Iterator[Backend]:
    yield from _redis_backend()


async def _gather_hits(limiter: RateLimiter, checks: Checks, count: int) -> list[Decision]:
    return list(await asyncio.gather(*(limiter.hit(checks) for _ in range(count))))


def test_concurrent_hits_let_exactly_the_limit_through(backend: Backend) -> None:
    limit = Limit("per_link", max_requests=10, window_seconds=60)

    async def scenario() -> None:
        limiter = backend.limiter()
        try:
            decisions = await _gather_hits(limiter, [(limit, "link-1")], 30)
        finally:
            await limiter.close()
        assert sum(d.allowed for d in decisions) == 10
        assert all(d.retry_after == 0 for d in decisions if d.allowed)
        assert all(1 <= d.retry_after <= 60 for d in decisions if not d.allowed)

    asyncio.run(scenario())


def test_hits_are_allowed_again_once_the_window_has_passed(backend: Backend) -> None:
    limit = Limit("per_sender", max_requests=2, window_seconds=1)
    checks = [(limit, "sender-1")]

    async def scenario() -> None:
        limiter = backend.limiter()
        try:
            assert [d.allowed for d in await _gather_hits(limiter, checks, 2)] == [True, True]
            assert await limiter.hit(checks) == Decision(allowed=False, retry_after=1)
            await asyncio.sleep(1.05)
            assert await limiter.hit(checks) == Decision(allowed=True, retry_after=0)
        finally:
            await limiter.close()

    asyncio.run(scenario())


def test_count_is_the_hits_let_through_in_the_last_window(backend: Backend) -> None:
    limit = Limit("counted", max_requests=3, window_seconds=1)

    async def scenario() -> None:
        limiter = backend.limiter()
        try:
            assert await limiter.count(limit, "never-hit") == 0
            await _gather_hits(limiter, [(limit, "k")], 5)  # 3 let through, 2 refused
            assert await limiter.count(limit, "k") == 3
            assert await limiter.count(limit, "other") == 0
            await asyncio.sleep(1.05)
            assert await limiter.count(limit, "k") == 0
        finally:
            await limiter.close()

    asyncio.run(scenario())


def test_a_refused_hit_consumes_none_of_its_limits(backend: Backend) -> None:
    per_sender_link = Limit("per_sender_link", max_requests=1, window_seconds=60)
    per_link = Limit("per_link", max_requests=3, window_seconds=60)
    both = [(per_sender_link, "sender-1:link-1"), (per_link, "link-1")]

    async def scenario() -> None:
        limiter = backend.limiter()
        try:
            assert (await limiter.hit(both)).allowed
            for _ in range(5):
                assert not (await limiter.hit(both)).allowed
            # The link still has 2 of its 3: the five refusals above took none.
            link_only = await _gather_hits(limiter, [(per_link, "link-1")], 3)
            assert sum(d.allowed for d in link_only) == 2
        finally:
            await limiter.close()

    asyncio.run(scenario())


def test_retry_after_is_the_longest_wait_among_the_full_limits(backend: Backend) -> None:
    short = Limit("short", max_requests=1, window_seconds=30)
    long = Limit("long", max_requests=1, window_seconds=120)
    spare = Limit("spare", max_requests=100, window_seconds=3600)

    async def scenario() -> None:
        limiter = backend.limiter()
        try:
            assert (await limiter.hit([(short, "s"), (long, "s")])).allowed
            only_short = await limiter.hit([(short, "s"), (spare, "s")])
            both = await limiter.hit([(short, "s"), (long, "s"), (spare, "s")])
        finally:
            await limiter.close()
        assert not only_short.allowed
        assert 29 <= only_short.retry_after <= 30
        assert not both.allowed
        assert 119 <= both.retry_after <= 120

    asyncio.run(scenario())


def test_keys_and_limits_count_independently(backend: Backend) -> None:
    first = Limit("first", max_requests=1, window_seconds=60)
    second = Limit("second", max_requests=1, window_seconds=60)

    async def scenario() -> None:
        limiter = backend.limiter()
        try:
            assert (await limiter.hit([(first, "a")])).allowed
            assert not (await limiter.hit([(first, "a")])).allowed
            assert (await limiter.hit([(first, "b")])).allowed
            assert (await limiter.hit([(second, "a")])).allowed
            assert (await limiter.hit([])).allowed
        finally:
            await limiter.close()

    asyncio.run(scenario())


def test_the_same_limit_and_key_twice_in_one_hit_is_refused_as_a_mistake(
    backend: Backend,
) -> None:
    limit = Limit("per_link", max_requests=5, window_seconds=60)

    async def scenario() -> None:
        limiter = backend.limiter()
        try:
            with pytest.raises(ValueError, match="twice"):
                await limiter.hit([(limit, "link-1"), (limit, "link-1")])
        finally:
            await limiter.close()

    asyncio.run(scenario())


def test_limits_need_at_least_one_request_and_one_second() -> None:
    with pytest.raises(ValueError, match="per_link"):
        Limit("per_link", max_requests=0, window_seconds=60)
    with pytest.raises(ValueError, match="per_link"):
        Limit("per_link", max_requests=5, window_seconds=0)


def test_memory_forgets_keys_once_their_window_has_passed() -> None:
    short = Limit("short", max_requests=1, window_seconds=1)
    long = Limit("long", max_requests=1, window_seconds=60)

    async def scenario() -> None:
        limiter = MemoryRateLimiter()
        try:
            for n in range(100):
                assert (await limiter.hit([(short, f"sender-{n}")])).allowed
            await limiter.hit([(long, "sender-0")])
            for _ in range(100):  # refused hits store nothing
                assert not (await limiter.hit([(short, "sender-0")])).allowed
            assert limiter.tracked_keys == 101
            await asyncio.sleep(1.05)
            assert (await limiter.hit([(short, "sender-new")])).allowed
            assert limiter.tracked_keys == 2  # sender-new, and the 60-second log
        finally:
            await limiter.close()

    asyncio.run(scenario())


def test_redis_instances_share_their_counts(redis_backend: Backend) -> None:
    limit = Limit("per_link", max_requests=10, window_seconds=60)
    checks = [(limit, "link-1")]

    async def scenario() -> None:
        one, two = redis_backend.limiter(), redis_backend.limiter()
        try:
            decisions = await asyncio.gather(
                _gather_hits(one, checks, 15), _gather_hits(two, checks, 15)
            )
            assert sum(d.allowed for d in decisions[0] + decisions[1]) == 10
            assert not (await one.hit(checks)).allowed
            assert not (await two.hit(checks)).allowed
        finally:
            await one.close()
            await two.close()

    asyncio.run(scenario())


def test_redis_keys_are_prefixed_and_expire_after_one_window(redis_backend: Backend) -> None:
    per_sender = Limit("per_sender", max_requests=5, window_seconds=60)
    per_link = Limit("per_link", max_requests=50, window_seconds=600)

    async def scenario() -> None:
        limiter = redis_backend.limiter()
        try:
            await limiter.hit([(per_sender, "sender-1"), (per_link, "link-1")])
        finally:
            await limiter.close()
        keys = await _redis_keys(redis_backend.prefix)
        assert set(keys) == {
            f"{redis_backend.prefix}per_sender:sender-1",
            f"{redis_backend.prefix}per_link:link-1",
        }
        assert all(key.startswith("anonbox:rl:") for key in keys)
        assert 0 < keys[f"{redis_backend.prefix}per_sender:sender-1"] <= 60_000
        assert 0 < keys[f"{redis_backend.prefix}per_link:link-1"] <= 600_000

    asyncio.run(scenario())


def test_a_connection_redis_dropped_is_replaced_without_a_refusal(redis_backend: Backend) -> None:
    limit = Limit("per_sender", max_requests=5, window_seconds=60)
    checks = [(limit, "sender-1")]

    async def scenario() -> None:
        client = redis_client(REDIS_URL)
        limiter = RedisRateLimiter(client, fail_open=False, prefix=redis_backend.prefix)
        admin = redis.asyncio.Redis.from_url(REDIS_URL)
        try:
            assert (await limiter.hit(checks)).allowed
            pooled_connection = await client.client_id()
            # As after a Redis restart: the pooled connection is closed under the client.
            await admin.client_kill_filter(_id=str(pooled_connection))
            assert (await limiter.hit(checks)).allowed
            assert await client.client_id() != pooled_connection
            decisions = await _gather_hits(limiter, checks, 5)
            assert sum(d.allowed for d in decisions) == 3
        finally:
            await limiter.close()
            await admin.aclose()

    asyncio.run(scenario())


def test_settings_choose_memory_without_a_redis_url() -> None:
    async def scenario() -> None:
        memory = rate_limiter_from_settings(None, fail_open=False)
        shared = rate_limiter_from_settings(REDIS_URL, fail_open=False)
        try:
            assert isinstance(memory, MemoryRateLimiter)
            assert isinstance(shared, RedisRateLimiter)
        finally:
            await memory.close()
            await shared.close()

    asyncio.run(scenario())


async def _timed_hit(limiter: RateLimiter) -> tuple[Decision | Exception, float]:
    checks = [(Limit("per_sender", max_requests=1, window_seconds=60), "sender-1")]
    started = time.monotonic()
    try:
        outcome: Decision | Exception = await limiter.hit(checks)
    except ServiceUnavailable as exc:
        outcome = exc
    return outcome, time.monotonic() - started


def test_redis_down_fails_open_when_configured_to() -> None:
    async def scenario() -> None:
        limiter = rate_limiter_from_settings(NOTHING_LISTENS_URL, fail_open=True)
        try:
            for _ in range(3):  # more hits than the limit: nothing counts them
                outcome, seconds = await _timed_hit(limiter)
                assert outcome == Decision(allowed=True, retry_after=0)
                assert seconds < 1.2
        finally:
            await limiter.close()

    asyncio.run(scenario())


def test_redis_down_fails_closed_with_service_unavailable() -> None:
    async def scenario() -> None:
        limiter = rate_limiter_from_settings(NOTHING_LISTENS_URL, fail_open=False)
        try:
            for _ in range(3):
                outcome, seconds = await _timed_hit(limiter)
                assert isinstance(outcome, ServiceUnavailable)
                assert outcome.message == "Rate limiting is unavailable; try again shortly"
                assert seconds < 1.2
        finally:
            await limiter.close()

    asyncio.run(scenario())


def test_a_redis_that_never_answers_does_not_hang_a_request() -> None:
    async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # reads until the client gives up; never replies
        writer.close()
        await writer.wait_closed()

    async def scenario() -> None:
        server = await asyncio.start_server(swallow, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        limiter = rate_limiter_from_settings(f"redis://127.0.0.1:{port}/0", fail_open=False)
        try:
            outcome, seconds = await _timed_hit(limiter)
            assert isinstance(outcome, ServiceUnavailable)
            assert seconds < 1.2
        finally:
            await limiter.close()
            server.close()
            await server.wait_closed()

    asyncio.run(scenario())
