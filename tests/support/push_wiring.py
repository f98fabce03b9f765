"""Web Push wired into the service for its tests, until ``anonbox.main`` does it itself.

``python -m tests.support.push_wiring serve …`` is ``anonbox serve`` with the push channel
in the relay, the push sender running, and the push routes (API and pages) registered.
Once ``anonbox.main`` imports ``PushSender`` it changes nothing, and can be deleted.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

import httpx

from tests.server import GENEROUS_LIMITS, Server


class PushServer(Server):
    """``Server``, started through this module."""

    def start(self, timeout: float = 30.0) -> PushServer:
        env = {
            **os.environ,
            **GENEROUS_LIMITS,
            **self.extra_env,
            "ANONBOX_DATABASE_URL": self.database_url,
        }
        command = [sys.executable, "-m", "tests.support.push_wiring", "serve"]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [*command, "--port", str(self.port), *self.args],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited early; see {self.log_path}:\n{self.log()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(0.1)
        raise RuntimeError(f"server did not start in {timeout}s; see {self.log_path}")


def wire() -> None:
    import anonbox.main as main
    from anonbox.notifications.push import PushChannel, PushSender, PushSettings
    from anonbox.notifications.push_router import ROUTES as PUSH_ROUTES
    from anonbox.web.push import ROUTES as PUSH_PAGES
    from anonbox.web.routing import page_router

    if hasattr(main, "PushSender"):
        return
    real_relay = main.Relay

    class Relay(real_relay):  # type: ignore[misc,valid-type]
        def __init__(self, db: Any, channels: Sequence[Any]) -> None:
            super().__init__(db, [*channels, PushChannel()])

    main.Relay = Relay  # type: ignore[misc]
    real_create_app = main.create_app

    def create_app(settings: Any = None, metrics_settings: Any = None) -> Any:
        clock = real_create_app(settings, metrics_settings)
        app = clock.app
        for route in PUSH_ROUTES:
            app.register(route)
        app.register(page_router(*PUSH_PAGES))
        running: list[asyncio.Task[None]] = []

        async def start(app: Any) -> None:
            sender = PushSender(app.state.db, PushSettings.from_env())
            running.append(asyncio.create_task(sender.run()))

        async def stop(app: Any) -> None:
            for task in running:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

        app.on_startup.append(start)
        app.on_shutdown.append(stop)
        return clock

    main.create_app = create_app  # type: ignore[assignment]


if __name__ == "__main__":
    wire()
    from anonbox.cli import main as cli

    cli()
