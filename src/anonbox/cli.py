"""The ``anonbox`` command line: serve, migrate, creators and admins."""

from __future__ import annotations

import asyncio
import json
import logging.config
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

import click

from anonbox.core.errors import AnonboxError
from anonbox.core.settings import Settings


@contextmanager
def _plainly() -> Iterator[None]:
    """Report a bad database URL, an unreachable database or a refused request in one line."""
    try:
        yield
    except (ValueError, OSError, AnonboxError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)


@click.group()
def main() -> None:
    """anonbox: an anonymous message service."""


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(min=1),
    help="Worker processes, each with its own database connections.",
)
def serve(host: str, port: int, workers: int) -> None:
    """Migrate the database to the latest schema, then serve HTTP."""
    import uvicorn

    from anonbox.core.logs import LogSettings, log_config
    from anonbox.core.metrics import MetricsSettings
    from anonbox.migrations import upgrade

    # uvicorn finishes what is in flight on SIGTERM, then raises the signal again for the
    # handler that was there before it; the default one would end a clean shutdown as
    # "killed by SIGTERM" (status 143), which supervisors read as a crash.
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    with _plainly():
        logs = LogSettings.from_env()
        logging.config.dictConfig(log_config(logs))  # the migration's lines are JSON too
        settings = Settings.from_env()
        MetricsSettings.from_env()  # refuse a bad setting here, not in every worker
        upgrade(settings.database_url)  # once, before any worker starts
    from anonbox.core.http_protocol import BoundedHttpToolsProtocol

    with _metrics_directory(workers):
        uvicorn.run(
            "anonbox.main:create_app",
            factory=True,
            host=host,
            port=port,
            workers=workers,
            http=BoundedHttpToolsProtocol,
            # Never rewrite the client address from X-Forwarded-For (anyone can send it), and
            # keep no access log: it would record every anonymous sender's address.
            proxy_headers=False,
            access_log=False,
            server_header=False,
            log_config=log_config(logs),
            log_level=logs.level,
        )


def _exit_on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


@contextmanager
def _metrics_directory(workers: int) -> Iterator[None]:
    """With several workers, a fresh PROMETHEUS_MULTIPROC_DIR for their metric files,
    removed when the server stops (unless the operator chose the directory)."""
    from anonbox.core.metrics import MULTIPROC_DIR

    if workers == 1 or os.environ.get(MULTIPROC_DIR):
        yield
        return
    directory = tempfile.mkdtemp(prefix="anonbox-metrics-")
    os.environ[MULTIPROC_DIR] = directory  # the workers inherit it
    try:
        yield
    finally:
        del os.environ[MULTIPROC_DIR]
        shutil.rmtree(directory, ignore_errors=True)


@main.command()
def migrate() -> None:
    """Upgrade the database in ANONBOX_DATABASE_URL to the latest schema."""
    from anonbox.migrations import upgrade

    with _plainly():
        upgrade(Settings.from_env().database_url)
    click.echo("database is at the latest schema")


@main.group()
def creator() -> None:
    """Manage creators without Google sign-in (local use, scripts)."""


@creator.command("create")
@click.option("--email", required=True, help="The creator's e-mail address (unique).")
@click.option("--name", default=None, help="Display name; defaults to the e-mail's local part.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def creator_create(email: str, name: str | None, as_json: bool) -> None:
    """Create a creator with a default link and a fresh API key (shown only now)."""
    from anonbox.auth.service import create_creator
    from anonbox.core.database import connect
    from anonbox.migrations import upgrade

    with _plainly():
        settings = Settings.from_env()
        upgrade(settings.database_url)

    async def run() -> dict[str, str]:
        db = await connect(settings.database_url)
        try:
            made = await create_creator(db, email=email, name=name)
        finally:
            await db.close()
        return {
            "user_id": made.user_id,
            "email": made.email,
            "link_id": made.link_id,
            "api_key": made.api_key,
        }

    with _plainly():
        result = asyncio.run(run())
    if as_json:
        click.echo(json.dumps(result))
    else:
        click.echo(f"creator {result['user_id']} <{result['email']}>")
        click.echo(f"link     {result['link_id']}")
        click.echo(f"api key  {result['api_key']}  (shown once: keep it safe)")


@main.group()
def admin() -> None:
    """Manage who may act on reports and moderate every link."""


@admin.command("grant")
@click.option("--email", required=True, help="The e-mail address of an existing creator.")
def admin_grant(email: str) -> None:
    """Make an existing creator an admin (their current credentials gain it at once)."""
    from anonbox.auth.service import grant_admin, normalised_email
    from anonbox.core.database import connect
    from anonbox.migrations import upgrade

    with _plainly():
        settings = Settings.from_env()
        upgrade(settings.database_url)

    async def run() -> None:
        db = await connect(settings.database_url)
        try:
            await grant_admin(db, email=email)
        finally:
            await db.close()

    with _plainly():
        asyncio.run(run())
    click.echo(f"{normalised_email(email)} is now an admin")


if __name__ == "__main__":
    main()
