"""Configuration, read once from ``ANONBOX_*`` environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass

DEFAULT_DATABASE_URL = "sqlite:///./anonbox.db"


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str = DEFAULT_DATABASE_URL
    max_body_bytes: int = 16 * 1024
    # Seconds a client is told to wait (Retry-After) when the database is unavailable.
    unavailable_retry_after: int = 5
    environment: str = "development"

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        return cls(
            database_url=env.get("ANONBOX_DATABASE_URL", DEFAULT_DATABASE_URL),
            max_body_bytes=int(env.get("ANONBOX_MAX_BODY_BYTES", str(16 * 1024))),
            environment=env.get("ANONBOX_ENV", "development"),
        )
