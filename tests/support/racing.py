"""Requests released all at once, for the tests of what concurrent requests agree on, and
their answers counted by status."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import httpx

T = TypeVar("T")


def race(count: int, request: Callable[[int], T]) -> list[T]:
    """Run ``request(0)`` … ``request(count - 1)`` in threads released all at once."""
    start = threading.Barrier(count)

    def released(i: int) -> T:
        start.wait(timeout=30)
        return request(i)

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(released, range(count)))


def statuses(responses: list[httpx.Response]) -> Counter[int]:
    return Counter(response.status_code for response in responses)
