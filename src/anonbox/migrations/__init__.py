"""Alembic migrations, run with the project's plain database URL.

``upgrade(url)`` is what ``anonbox migrate`` and ``anonbox serve`` call. On PostgreSQL the
upgrade holds an advisory lock, so instances starting together migrate one at a time.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

from anonbox.core.database import driver_url


def sqlalchemy_url(url: str) -> str:
    dialect, target = driver_url(url)
    if dialect == "sqlite":
        return f"sqlite+aiosqlite:///{target}"
    return "postgresql+asyncpg://" + target.split("://", 1)[1]


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent))
    config.attributes["sqlalchemy_url"] = sqlalchemy_url(url)
    return config


def upgrade(url: str) -> None:
    dialect, target = driver_url(url)
    if dialect == "sqlite" and target != ":memory:":
        Path(target).parent.mkdir(parents=True, exist_ok=True)
    command.upgrade(alembic_config(url), "head")
