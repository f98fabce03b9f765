"""Configuration, read once from ``ANONBOX_*`` environment variables."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from urllib.parse import urlsplit

DEFAULT_DATABASE_URL = "sqlite:///./anonbox.db"
GOOGLE_ISSUER = "https://accounts.google.com"


class ConfigurationError(ValueError):
    """A setting that the service refuses to start with."""


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str = DEFAULT_DATABASE_URL
    max_body_bytes: int = 16 * 1024
    environment: str = "development"
    google_issuer: str = GOOGLE_ISSUER
    google_client_id: str | None = None
    google_client_secret: str | None = None
    google_redirect_uri: str = "http://127.0.0.1:8000/auth/google/callback"
    access_token_ttl_seconds: int = 3600
    refresh_token_ttl_seconds: int = 30 * 24 * 3600
    signin_state_ttl_seconds: int = 600

    def __post_init__(self) -> None:
        issuer = urlsplit(self.google_issuer)
        if issuer.scheme != "https" and not (
            issuer.scheme == "http" and _is_loopback(issuer.hostname or "")
        ):
            raise ConfigurationError(
                f"ANONBOX_GOOGLE_ISSUER must be an https:// URL (http:// only on loopback), "
                f"not {self.google_issuer!r}"
            )

    @property
    def secure_cookies(self) -> bool:
        """Cookies carry ``Secure`` everywhere but local development over plain HTTP."""
        return self.environment != "development"

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        defaults = cls()

        def number(name: str, default: int) -> int:
            raw = env.get(name)
            if raw is None:
                return default
            try:
                value = int(raw)
            except ValueError:
                raise ConfigurationError(f"{name} must be a whole number, not {raw!r}") from None
            if value <= 0:
                raise ConfigurationError(f"{name} must be positive, not {value}")
            return value

        return cls(
            database_url=env.get("ANONBOX_DATABASE_URL", DEFAULT_DATABASE_URL),
            max_body_bytes=number("ANONBOX_MAX_BODY_BYTES", defaults.max_body_bytes),
            environment=env.get("ANONBOX_ENV", defaults.environment),
            google_issuer=env.get("ANONBOX_GOOGLE_ISSUER", GOOGLE_ISSUER).rstrip("/"),
            google_client_id=env.get("ANONBOX_GOOGLE_CLIENT_ID") or None,
            google_client_secret=env.get("ANONBOX_GOOGLE_CLIENT_SECRET") or None,
            google_redirect_uri=env.get(
                "ANONBOX_GOOGLE_REDIRECT_URI", defaults.google_redirect_uri
            ),
            access_token_ttl_seconds=number(
                "ANONBOX_ACCESS_TOKEN_TTL_SECONDS", defaults.access_token_ttl_seconds
            ),
            refresh_token_ttl_seconds=number(
                "ANONBOX_REFRESH_TOKEN_TTL_SECONDS", defaults.refresh_token_ttl_seconds
            ),
            signin_state_ttl_seconds=number(
                "ANONBOX_SIGNIN_STATE_TTL_SECONDS", defaults.signin_state_ttl_seconds
            ),
        )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
