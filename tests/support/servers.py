"""A test module's own server, for settings the session's shared ``server`` must not have
(a trusted proxy, small limits, loopback webhooks...): a fixture factory, so that each
module says only its name and its environment."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.server import Server

BACKENDS = ("sqlite", "postgresql")


def own_server(
    name: str,
    env: dict[str, str] | Callable[[pytest.FixtureRequest], dict[str, str]] | None = None,
    *,
    mail: bool = False,
    public_url: bool = False,
    backends: tuple[str, ...] = BACKENDS,
    before: Callable[[], None] | None = None,
    clean_log: bool = False,
) -> Any:
    """A module-scoped fixture called ``name``: one server per backend, started with
    ``env`` (or what it makes of the fixture's request, to read other fixtures), the
    session's SMTP server when ``mail`` and its own address as ``ANONBOX_PUBLIC_URL`` when
    ``public_url``; stopped after the module. ``before`` runs first (a check that skips);
    with ``clean_log`` the server's log must hold no traceback once it has stopped."""

    @pytest.fixture(scope="module", params=list(backends), name=name)
    def started(
        request: pytest.FixtureRequest,
        database_url_factory: Callable[[str], str],
        tmp_path_factory: pytest.TempPathFactory,
    ) -> Iterator[Server]:
        if before is not None:
            before()
        backend = str(request.param)
        # On a thread of its own: making a database runs asyncio, which a browser test's
        # open event loop (Playwright's) would refuse in this one.
        with ThreadPoolExecutor(1) as pool:
            database_url = pool.submit(database_url_factory, backend).result()
        log = tmp_path_factory.mktemp(name) / f"{backend}.log"
        made = env(request) if callable(env) else dict(env or {})
        if mail:
            made["ANONBOX_SMTP_URL"] = request.getfixturevalue("smtp_server").url
        running = Server(database_url, log, env=made)
        if public_url:
            running.extra_env["ANONBOX_PUBLIC_URL"] = running.url  # its port is chosen already
        running.start(60)
        yield running
        running.stop()
        if clean_log:
            assert "Traceback" not in running.log(), f"the server logged a traceback: see {log}"

    return started


@contextmanager
def running(database_url: str, log: Path, **options: Any) -> Iterator[Server]:
    """A server of a test's own (``options`` as ``Server`` takes them), started for the
    ``with`` block and stopped after it, however the block ends."""
    server = Server(database_url, log, **options).start()
    try:
        yield server
    finally:
        server.stop()
