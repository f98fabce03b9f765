"""Signing in without a provider or a mailbox: the link ``anonbox signin-link`` prints."""

from __future__ import annotations

import subprocess
import sys

from tests.server import Server


def signin_link_command(server: Server, email: str) -> str:
    """Run ``anonbox signin-link`` against ``server``'s database; the link it prints."""
    made = subprocess.run(
        [
            sys.executable,
            "-m",
            "anonbox",
            "signin-link",
            "--email",
            email,
            "--base-url",
            server.url,
        ],
        env={"ANONBOX_DATABASE_URL": server.database_url, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    return made.stdout.strip()
