"""Group commit: concurrent writes of one kind share one statement, so one transaction and
one fsync, and each caller is answered only after that commit.

Batching is natural, not timed: the first write goes at once; writes that arrive while a
batch is being committed wait for it and go together in the next one. A lone writer pays
no delay; under load one fsync serves as many writers as arrived during the last one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

from anonbox.core.errors import ServiceUnavailable

Item = TypeVar("Item")
Result = TypeVar("Result")


class GroupCommit(Generic[Item, Result]):
    """Feeds items to ``write``, which commits a whole batch at once and returns one result
    per item, in order. A batch that fails for a reason other than an unavailable database
    is retried one item at a time, so one bad item cannot fail the others."""

    def __init__(
        self,
        write: Callable[[Sequence[Item]], Awaitable[Sequence[Result]]],
        *,
        max_batch: int = 256,
    ) -> None:
        self._write = write
        self._max_batch = max_batch
        self._pending: list[tuple[Item, asyncio.Future[Result]]] = []
        self._flusher: asyncio.Task[None] | None = None

    @property
    def waiting(self) -> int:
        return len(self._pending)

    async def submit(self, item: Item) -> Result:
        future: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        self._pending.append((item, future))
        if self._flusher is None:
            self._flusher = asyncio.create_task(self._flush())
        return await future

    async def drain(self) -> None:
        """Wait until everything submitted so far is committed (or failed)."""
        while self._flusher is not None:
            await asyncio.shield(self._flusher)

    async def _flush(self) -> None:
        try:
            while self._pending:
                batch = self._pending[: self._max_batch]
                del self._pending[: self._max_batch]
                await self._commit(batch)
        finally:
            self._flusher = None

    async def _commit(self, batch: list[tuple[Item, asyncio.Future[Result]]]) -> None:
        try:
            results = await self._write([item for item, _ in batch])
        except ServiceUnavailable as exc:
            _fail(batch, exc)
        except Exception as exc:
            if len(batch) == 1:
                _fail(batch, exc)
            else:
                for one in batch:
                    await self._commit([one])
        except BaseException:  # cancelled: nobody may be left waiting forever
            _fail(batch, ServiceUnavailable("The service is shutting down; try again shortly."))
            raise
        else:
            for (_, future), result in zip(batch, results, strict=True):
                if not future.done():  # a caller that went away: its write stands regardless
                    future.set_result(result)


def _fail(batch: Sequence[tuple[object, asyncio.Future[Result]]], exc: Exception) -> None:
    for _, future in batch:
        if not future.done():
            future.set_exception(exc)
