"""Ending a child process the tests started (a provider mock, a pool, a peer)."""

from __future__ import annotations

import subprocess


def stop(process: subprocess.Popen[bytes]) -> None:
    """Asks ``process`` to end (SIGTERM) and waits; kills it if it has not ended in ten
    seconds, so that no fixture leaves one running for the rest of the session."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
