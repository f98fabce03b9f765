"""The settings of a larger deployment (a pooler, a direct connection, replicas): a bad
value is one line naming the variable and a non-zero exit, before anything is touched."""

from __future__ import annotations

import pytest

from tests.server import anonbox_command

POSTGRES = "postgresql://postgres@127.0.0.1:5432/postgres"


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"ANONBOX_DATABASE_POOLER": "session"}, "ANONBOX_DATABASE_POOLER"),
        ({"ANONBOX_DATABASE_POOLER": "transaction"}, "ANONBOX_DATABASE_LISTEN_URL"),
        (
            {"ANONBOX_DATABASE_POOLER": "transaction", "ANONBOX_DATABASE_LISTEN_URL": "x"},
            "ANONBOX_DATABASE_LISTEN_URL",
        ),
        ({"ANONBOX_DATABASE_REPLICA_URLS": f"{POSTGRES},mysql://h/d"}, "REPLICA_URLS"),
        ({"ANONBOX_DATABASE_REPLICA_MAX_LAG_SECONDS": "soon"}, "REPLICA_MAX_LAG_SECONDS"),
        ({"ANONBOX_DATABASE_REPLICA_MAX_LAG_SECONDS": "-1"}, "REPLICA_MAX_LAG_SECONDS"),
        ({"ANONBOX_DATABASE_REPLICA_MAX_LAG_SECONDS": "86400"}, "REPLICA_MAX_LAG_SECONDS"),
        (
            {
                "ANONBOX_DATABASE_POOLER": "transaction",
                "ANONBOX_DATABASE_LISTEN_URL": POSTGRES,
                "ANONBOX_DURABLE_COMMITS": "false",
            },
            "ANONBOX_DURABLE_COMMITS",
        ),
    ],
)
def test_a_bad_database_setting_is_one_line_naming_it(settings: dict[str, str], named: str) -> None:
    env = {"ANONBOX_DATABASE_URL": POSTGRES, **settings}
    done = anonbox_command(["migrate"], env)
    assert done.returncode != 0
    assert done.stderr.startswith("error: ")
    assert named in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_the_pooler_and_replicas_need_postgresql() -> None:
    env = {
        "ANONBOX_DATABASE_URL": "sqlite:///./never-made.db",
        "ANONBOX_DATABASE_REPLICA_URLS": POSTGRES,
    }
    done = anonbox_command(["migrate"], env)
    assert done.returncode != 0
    assert "ANONBOX_DATABASE_REPLICA_URLS needs ANONBOX_DATABASE_URL" in done.stderr


def test_serve_help_lists_the_database_settings() -> None:
    done = anonbox_command(["serve", "--help"], {})
    assert done.returncode == 0
    for name in (
        "ANONBOX_DATABASE_POOLER",
        "ANONBOX_DATABASE_LISTEN_URL",
        "ANONBOX_DATABASE_REPLICA_URLS",
        "ANONBOX_DATABASE_REPLICA_MAX_LAG_SECONDS",
    ):
        assert name in done.stdout
