"""Fixtures: a real anonbox server per database backend, and creators made as the CLI makes them.

Every test that takes ``api`` runs twice: on SQLite and on PostgreSQL. PostgreSQL tests
are skipped only outside CI when no server answers; with CI=true they must run.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import asyncpg
import httpx
import pytest
from _pytest.nodeid import coerce_node_id

from anonbox.auth.service import create_creator
from anonbox.core.database import connect
from tests.server import Server, anonbox_command_on
from tests.support.http import loopback_client
from tests.support.services import answers, missing

if TYPE_CHECKING:
    from tests.support.strangers import OthersMessage

pytest_plugins = ["tests.support.mail", "tests.support.deployment"]

POSTGRES_ADMIN_URL = os.environ.get(
    "ANONBOX_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)


# pytest-xdist runs the tests in several processes (`make test`, --dist loadgroup). A
# fixture of session or module scope is made once per process that needs it, so the tests
# that share one stay in one process: those of a module together (per database, so both
# halves run side by side), and those of a session-wide fleet of servers together, across
# modules. Left free: tests that share only the cheap session ``server`` and run for long.
SHARED_FLEETS = ("fleet", "deployment", "site")
UNGROUPED = ("tests/core/test_fuzz.py", "tests/browser/test_every_page.py")
BACKENDS = ("sqlite", "postgresql")


# How a test names its group to the scheduler. xdist's own way (an ``xdist_group`` mark,
# which its worker turns into a "@group" suffix of the node id) does nothing under pytest
# 9.2: xdist 3.8 writes ``item._nodeid``, which pytest no longer reads (the id is
# ``item._id``), so the controller saw no group and handed the tests out one by one, and
# every process started its own copy of each fleet (the safety fleet, 7 servers per
# database, in all 4). So the suffix is written here, in the worker, the way xdist's
# scheduler reads it (``@`` after the last ``]``: a group name holds no ``]``).
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):  # an xdist worker, --dist loadgroup
        return
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        if path in UNGROUPED:
            continue
        callspec = getattr(item, "callspec", None)
        params = callspec.params.values() if callspec else ()
        backend = next((p for p in params if isinstance(p, str) and p in BACKENDS), "any")
        fleet = next((name for name in SHARED_FLEETS if name in item.fixturenames), None)
        item._id = coerce_node_id(f"{item.nodeid}@{fleet or path}:{backend}")


# A session-wide fleet is made for the tests of its group, which run one after another in
# one process; afterwards its servers would stand idle to the end of the session (each
# polls its database a few times a second: 4-5.5 ms of CPU a second, and 25-35 servers
# stood at once). So a fleet is finished as soon as the next test does not use it; a
# later test that asks for it again gets a new one. ``nextitem`` is the real next test
# under xdist too: a worker runs a test only once the one after it has arrived.
@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return
    still_used = set(getattr(nextitem, "fixturenames", ()))
    for name in SHARED_FLEETS:
        if name in info.names_closure and name not in still_used:
            for fixturedef in info.name2fixturedefs.get(name, ()):
                fixturedef.finish(item._request)  # type: ignore[attr-defined]


def _require_postgres() -> None:
    if not answers(POSTGRES_ADMIN_URL, 5432):
        missing(f"PostgreSQL not reachable at {POSTGRES_ADMIN_URL} (required when CI=true)")


def _migrate(url: str) -> None:
    """``anonbox migrate``, in its own process as a self-hoster runs it."""
    done = anonbox_command_on(url, ["migrate"])
    assert done.returncode == 0, done.stderr[-4000:]


async def _postgres_admin(sql: str) -> None:
    conn = await asyncpg.connect(POSTGRES_ADMIN_URL)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def _postgres_url(name: str) -> str:
    return f"{POSTGRES_ADMIN_URL.rsplit('/', 1)[0]}/{name}"


@pytest.fixture(scope="session")
def postgres_database_factory() -> Iterator[Callable[..., str]]:
    """Make fresh PostgreSQL databases; drop them all at the end of the session.

    ``make()`` gives a database at the latest schema, copied from a template migrated once
    per session (``CREATE DATABASE ... TEMPLATE``): the servers that start on it find
    nothing to migrate, which saves seconds per server. ``make(migrated=False)`` gives an
    empty one, for the tests of migrations themselves.
    """
    created: list[str] = []
    template: list[str] = []

    def create(template_name: str | None = None) -> str:
        name = f"anonbox_test_{uuid.uuid4().hex[:12]}"
        source = f' TEMPLATE "{template_name}"' if template_name else ""
        asyncio.run(_postgres_admin(f'CREATE DATABASE "{name}"{source}'))
        created.append(name)
        return name

    def make(migrated: bool = True) -> str:
        _require_postgres()
        if not migrated:
            return _postgres_url(create())
        if not template:
            name = create()
            _migrate(_postgres_url(name))
            template.append(name)
        return _postgres_url(create(template[0]))

    yield make
    for name in created:
        asyncio.run(_postgres_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(scope="session")
def database_url_factory(
    tmp_path_factory: pytest.TempPathFactory, postgres_database_factory: Callable[..., str]
) -> Callable[..., str]:
    """``make(backend)``: a fresh database at the latest schema; ``migrated=False``: empty.

    SQLite's are copies of one file migrated once per session (the migrations' own tests
    ask for an empty one).
    """
    template: list[Path] = []

    def make(backend: str, migrated: bool = True) -> str:
        if backend != "sqlite":
            return postgres_database_factory(migrated=migrated)
        path = tmp_path_factory.mktemp("sqlite") / "anonbox.db"
        if migrated:
            if not template:
                first = tmp_path_factory.mktemp("sqlite-template") / "anonbox.db"
                _migrate(f"sqlite:///{first}")
                template.append(first)
            shutil.copyfile(template[0], path)  # closed cleanly: no -wal or -shm beside it
        return f"sqlite:///{path}"

    return make


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def server(
    request: pytest.FixtureRequest,
    database_url_factory: Callable[..., str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Server]:
    backend = request.param
    url = database_url_factory(backend)
    running = Server(url, tmp_path_factory.mktemp("logs") / f"{backend}.log").start()
    yield running
    running.stop()


@dataclass(frozen=True)
class ModuleDatabase:
    backend: str
    url: str


@pytest.fixture(scope="module", params=BACKENDS)
def module_database(
    request: pytest.FixtureRequest, database_url_factory: Callable[..., str]
) -> ModuleDatabase:
    """A fresh database of each backend for a module's own servers (the test ids name the
    backend). One per module: the fixtures of a module that take it share it."""
    return ModuleDatabase(str(request.param), database_url_factory(request.param))


@pytest.fixture
def api(server: Server) -> Iterator[httpx.Client]:
    with loopback_client(base_url=server.url, timeout=30) as client:
        yield client


@dataclass(frozen=True)
class Creator:
    user_id: str
    link_id: str
    api_key: str

    @property
    def headers(self) -> dict[str, str]:
        return {"X-API-Key": self.api_key}


def make_creator_in(database_url: str, email: str | None = None) -> Creator:
    """A creator made as a sign-up makes one, with ``email`` (a new address when none is
    given)."""

    async def run() -> Creator:
        db = await connect(database_url)
        try:
            made = await create_creator(db, email=email or f"{uuid.uuid4().hex[:10]}@example.com")
        finally:
            await db.close()
        return Creator(made.user_id, made.link_id, made.api_key)

    return asyncio.run(run())


@pytest.fixture
def make_creator(server: Server) -> Callable[[], Creator]:
    return lambda: make_creator_in(server.database_url)


@pytest.fixture
def creator(make_creator: Callable[[], Creator]) -> Creator:
    return make_creator()


@pytest.fixture
def others_message(api: httpx.Client, make_creator: Callable[[], Creator]) -> OthersMessage:
    """Two new creators, and a message sent to the first (see ``tests/support/strangers``)."""
    # Imported here: tests.support.strangers sends through tests.actions, which imports
    # Creator from this module.
    from tests.support import strangers

    return strangers.others_message(api, make_creator)


@pytest.fixture
def artifacts_dir() -> Path:
    path = Path(__file__).resolve().parent.parent / "test-artifacts"
    path.mkdir(exist_ok=True)
    return path
