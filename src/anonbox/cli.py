"""The ``anonbox`` command line: serve, migrate, creators and admins, backup, restore, move."""

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
from pathlib import Path
from types import FrameType
from typing import Any

import click

from anonbox.core.errors import AnonboxError
from anonbox.core.i18n import LANGUAGES
from anonbox.core.settings import Settings

DEFAULT_PORT = 8000
# Where ``serve`` listens (``--port``, else this variable; ``make run PORT=`` sets it), and
# so where ``signin-link``'s URL points when ANONBOX_PUBLIC_URL is not set.
PORT_VARIABLE = "ANONBOX_PORT"


def local_url(environ: dict[str, str] | None = None) -> str:
    """This machine's server, at the port ``serve`` uses (ANONBOX_PORT, else 8000)."""
    env = os.environ if environ is None else environ
    raw = env.get(PORT_VARIABLE) or str(DEFAULT_PORT)
    if not raw.isdigit() or not 0 < int(raw) < 65536:
        raise click.BadParameter(f"{PORT_VARIABLE} must be a port number, not {raw!r}")
    return f"http://127.0.0.1:{int(raw)}"


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


# Shown under ``anonbox serve --help``: the database settings of a larger deployment.
DATABASE_SETTINGS = """\b
The database (environment variables; README, "Growing past one database"):
  ANONBOX_DATABASE_URL          sqlite:///path or postgresql://user@host/db
                                (through PgBouncer: the pooler's address)
  ANONBOX_DATABASE_POOLER       transaction: ANONBOX_DATABASE_URL is PgBouncer in
                                transaction mode (no session state on its connections)
  ANONBOX_DATABASE_LISTEN_URL   postgresql://... straight to the database, for LISTEN
                                (one connection a process) and migrations; needed
                                with the pooler
  ANONBOX_DATABASE_REPLICA_URLS postgresql://...,postgresql://... streaming replicas
                                that answer public reads (send page, public answers,
                                cards, receipts)
  ANONBOX_DATABASE_REPLICA_MAX_LAG_SECONDS
                                a replica further behind is skipped [default: 5]
"""


@main.command(epilog=DATABASE_SETTINGS)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option(
    "--port",
    default=DEFAULT_PORT,
    show_default=True,
    type=int,
    envvar=PORT_VARIABLE,
    show_envvar=True,
)
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
        logging.config.dictConfig(log_config(logs))  # the migration's lines alike
        settings = Settings.from_env()
        MetricsSettings.from_env()  # refuse a bad setting here, not in every worker
        upgrade(settings.direct_database_url)  # once, before any worker starts
    from anonbox.core.http_protocol import BoundedHttpToolsProtocol

    options: dict[str, Any] = {
        "factory": True,
        "host": host,
        "port": port,
        "workers": workers,
        "http": BoundedHttpToolsProtocol,
        # Never rewrite the client address from X-Forwarded-For (anyone can send it), and
        # keep no access log: it would record every anonymous sender's address.
        "proxy_headers": False,
        "access_log": False,
        "server_header": False,
        "log_config": log_config(logs),
        "log_level": logs.level,
    }
    welcome = _welcome(
        settings, settings.public_url or f"http://{_shown_host(host)}:{port}", port=port
    )
    with _metrics_directory(workers):
        if workers > 1:  # the supervisor only starts workers: say it before they are up
            logging.getLogger("anonbox").info(welcome)
            uvicorn.run("anonbox.main:create_app", **options)
            return
        server = _welcoming_server(uvicorn.Config("anonbox.main:create_app", **options), welcome)
        server.run()
        if not server.started:
            sys.exit(3)  # as uvicorn.run does when the application fails to start


def _shown_host(host: str) -> str:
    if host in {"0.0.0.0", "::", ""}:  # noqa: S104 - shown to a person, not bound
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def _welcome(settings: Settings, url: str, *, port: int = DEFAULT_PORT) -> str:
    """What a person who just started the server needs to know: where, and how to get in
    (the sign-in command names the port when it is not the default and no public URL is
    set: printed from another terminal, the link must lead here)."""
    if settings.smtp_url is not None:
        email = "sign in with your e-mail: the link is sent by mail"
    elif settings.development:
        email = "sign in with your e-mail: in development the link appears in this terminal"
    else:
        email = "e-mail sign-in is off until ANONBOX_SMTP_URL is set"
    command = ".venv/bin/anonbox signin-link --email you@example.com"
    if settings.public_url is None and port != DEFAULT_PORT:
        command = f"{PORT_VARIABLE}={port} {command}"
    return (
        f"anonbox is up at {url}/\n"
        f"  Open it in your browser and {email}.\n"
        "  Or print a one-time sign-in link from another terminal:\n"
        f"  {command}"
    )


def _welcoming_server(config: Any, welcome: str) -> Any:
    """uvicorn's server, which says where to open anonbox once it listens."""
    import uvicorn

    class WelcomingServer(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started:
                logging.getLogger("anonbox").info(welcome)

    return WelcomingServer(config)


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
        upgrade(Settings.from_env().direct_database_url)
    click.echo("database is at the latest schema")


@main.group()
def creator() -> None:
    """Manage creators without Google sign-in (local use, scripts)."""


@creator.command("create")
@click.option("--email", required=True, help="The creator's e-mail address (unique).")
@click.option("--name", default=None, help="Display name; defaults to the e-mail's local part.")
@click.option(
    "--lang",
    "language",
    type=click.Choice(list(LANGUAGES)),
    default=None,
    help="The creator's language, and their first link's prompt's [default: "
    "ANONBOX_DEFAULT_LANGUAGE, else an English prompt and the language of the first "
    "browser that opens the dashboard].",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def creator_create(email: str, name: str | None, language: str | None, as_json: bool) -> None:
    """Create a creator with a default link and a fresh API key (shown only now)."""
    from anonbox.auth.service import create_creator
    from anonbox.core.database import connect
    from anonbox.migrations import upgrade

    with _plainly():
        settings = Settings.from_env()
        upgrade(settings.direct_database_url)

    async def run() -> dict[str, str]:
        db = await connect(settings.direct_database_url)
        try:
            made = await create_creator(
                db, email=email, name=name, language=language or settings.default_language
            )
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


@main.command("signin-link")
@click.option("--email", required=True, help="The creator's e-mail address.")
@click.option(
    "--base-url",
    default=None,
    help="Where the service is reached [default: ANONBOX_PUBLIC_URL, else "
    "http://127.0.0.1:$ANONBOX_PORT, else http://127.0.0.1:8000].",
)
def signin_link(email: str, base_url: str | None) -> None:
    """Print a one-time dashboard sign-in URL (the creator is created if new).

    It works once, within the e-mail link's lifetime, in whichever browser opens it first:
    hand it only to the person it is for.
    """
    from anonbox.auth.email_signin import printed_link
    from anonbox.core.database import connect
    from anonbox.migrations import upgrade

    with _plainly():
        settings = Settings.from_env()
        base = base_url or settings.public_url or local_url()
        upgrade(settings.direct_database_url)

    async def run() -> str:
        db = await connect(settings.direct_database_url)
        try:
            return (await printed_link(db, settings, email=email, base_url=base)).url
        finally:
            await db.close()

    with _plainly():
        click.echo(asyncio.run(run()))


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
        upgrade(settings.direct_database_url)

    async def run() -> None:
        db = await connect(settings.direct_database_url)
        try:
            await grant_admin(db, email=email)
        finally:
            await db.close()

    with _plainly():
        asyncio.run(run())
    click.echo(f"{normalised_email(email)} is now an admin")


class _Bar:
    """A progress bar in rows on stderr, when stderr is a terminal; nothing otherwise."""

    def __init__(self, label: str) -> None:
        self._label = label
        self._bar: Any = None

    def begin(self, total: int) -> None:
        if sys.stderr.isatty():
            self._bar = click.progressbar(length=total, label=self._label, file=sys.stderr)
            self._bar.__enter__()

    def advance(self, rows: int) -> None:
        if self._bar is not None:
            self._bar.update(rows)

    def end(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


@contextmanager
def _bar(label: str) -> Iterator[_Bar]:
    bar = _Bar(label)
    try:
        yield bar
    finally:
        bar.end()


@main.command()
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The backup file to write (it must not exist yet).",
)
def backup(out: Path) -> None:
    """Back up the whole database, while the service runs.

    The database of ANONBOX_DATABASE_URL (SQLite or PostgreSQL), as one consistent
    snapshot of every table, in a new SQLite file that restores into either. It holds
    everything, secrets-derived data included: keep it as safe as ANONBOX_SECRET_KEY,
    which it needs to be of use.
    """
    from anonbox.maintenance.service import backup as take_backup

    with _plainly():
        settings = Settings.from_env()
        with _bar("backing up") as bar:
            copied = take_backup(settings.database_url, out, bar)
    click.echo(f"backed up {copied.rows} rows of {len(copied.counts)} tables to {out}")


@main.command()
@click.option(
    "--from",
    "source",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="A file made by `anonbox backup`.",
)
def restore(source: Path) -> None:
    """Restore a backup into an empty database.

    The file is checked first (an anonbox backup, undamaged, of this anonbox's schema
    revision); a database that holds any row is refused. Either way nothing changes
    unless every row arrives.
    """
    from anonbox.maintenance.service import restore as restore_backup

    with _plainly():
        settings = Settings.from_env()
        with _bar("restoring") as bar:
            copied = restore_backup(settings.database_url, source, bar)
    click.echo(f"restored {copied.rows} rows of {len(copied.counts)} tables from {source}")


@main.command()
@click.option(
    "--to",
    "to",
    required=True,
    metavar="postgresql://…",
    help="The empty PostgreSQL database to move into.",
)
def move(to: str) -> None:
    """Move everything from the SQLite database to PostgreSQL.

    Copies every table of the SQLite database of ANONBOX_DATABASE_URL into the empty
    PostgreSQL database of --to. Stop the service first: what it writes during the move
    stays behind. The SQLite file is only read; the counts of every table are compared;
    a PostgreSQL database that holds any row is refused. Then set ANONBOX_DATABASE_URL
    to the new URL.
    """
    from anonbox.maintenance.service import move as move_database

    with _plainly():
        settings = Settings.from_env()
        with _bar("moving") as bar:
            copied = move_database(settings.database_url, to, bar)
    click.echo(f"moved {copied.rows} rows of {len(copied.counts)} tables; counts match")


if __name__ == "__main__":
    main()
