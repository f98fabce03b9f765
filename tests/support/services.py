"""The services some tests need beside anonbox (PostgreSQL, Redis, installed programs), and
what a run does without one: under CI=true it fails, elsewhere it skips."""

from __future__ import annotations

import os
import socket
from typing import NoReturn
from urllib.parse import urlsplit

import pytest

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
REDIS_URL = os.environ.get("ANONBOX_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def missing(message: str) -> NoReturn:
    """What is missing fails the run under CI=true, and skips the test elsewhere."""
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)


def answers(url: str, default_port: int) -> bool:
    """Whether something accepts a connection at ``url``'s host and port, within a second."""
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname, parts.port or default_port), timeout=1):
            return True
    except OSError:
        return False


def redis_reachable() -> bool:
    return answers(REDIS_URL, 6379)


def require_redis() -> None:
    if not redis_reachable():
        missing(f"Redis not reachable at {REDIS_URL} (required when CI=true)")
