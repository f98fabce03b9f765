"""HTTP clients for the servers the tests start: all on loopback, all plain HTTP.

httpx builds an SSL context for every client it makes, loading the CA bundle each time:
about 17 ms of CPU per client (measured), though no test server speaks TLS. With a client
or more per test, that was a minute of the suite's CPU. Clients made here share one.
"""

from __future__ import annotations

import ssl
from typing import Any

import httpx

TLS = ssl.create_default_context()


def loopback_client(**options: Any) -> httpx.Client:
    """``httpx.Client(**options)``, without building a new SSL context."""
    return httpx.Client(verify=TLS, **options)


def loopback_get(url: str, **options: Any) -> httpx.Response:
    """``httpx.get(url, **options)``, without building a new SSL context."""
    return httpx.get(url, verify=TLS, **options)
