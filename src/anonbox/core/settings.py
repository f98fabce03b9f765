"""Configuration, read once from ``ANONBOX_*`` environment variables."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from anonbox.core.i18n import LANGUAGES
from anonbox.core.ratelimit import Limit

DEFAULT_DATABASE_URL = "sqlite:///./anonbox.db"
DEVELOPMENT = "development"  # ANONBOX_ENV's default; any other value is a deployment
GOOGLE_ISSUER = "https://accounts.google.com"
# Only for development: anywhere else the service refuses to start without a real secret.
DEVELOPMENT_SECRET = "anonbox-development-secret-do-not-use-in-production"  # noqa: S105
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
MAX_ACCOUNT_ERASE_DAYS = 3650  # a deletion asked for is carried out within ten years


class ConfigurationError(ValueError):
    """A setting that the service refuses to start with."""


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str = DEFAULT_DATABASE_URL
    max_body_bytes: int = 16 * 1024
    environment: str = DEVELOPMENT
    google_issuer: str = GOOGLE_ISSUER
    google_client_id: str | None = None
    google_client_secret: str | None = None
    google_redirect_uri: str = "http://127.0.0.1:8000/auth/google/callback"
    access_token_ttl_seconds: int = 3600
    refresh_token_ttl_seconds: int = 30 * 24 * 3600
    session_max_seconds: int = 90 * 24 * 3600  # however often it is renewed
    signin_state_ttl_seconds: int = 600
    secret_key: str = DEVELOPMENT_SECRET
    trusted_proxies: tuple[IPNetwork, ...] = ()
    redis_url: str | None = None
    rate_limit_fail_open: bool = True
    # Off only to measure what durability costs (make bench): a 201 could then be lost
    # with the machine's power. Refused outside development.
    durable_commits: bool = True
    # The public pages' rendered bytes kept per content version (web.infra.page_cache): off
    # only to measure what rendering costs (make bench's "cache off" run).
    page_cache: bool = True
    limit_sender_per_link: Limit = field(default=Limit("sender_link", 10, 60))
    limit_sender: Limit = field(default=Limit("sender", 60, 600))
    # Past either of these a link (or the whole service) is under a flood: new posts then
    # need a proof of work (safety.flood) instead of being refused.
    limit_link: Limit = field(default=Limit("link", 1200, 60))
    limit_service: Limit = field(default=Limit("service", 60_000, 60))
    # The proof of work's least difficulty: the most numbers a solver may have to try.
    proof_of_work_numbers: int = 50_000
    # Webhooks: private, loopback and link-local destinations only when allowed (tests,
    # an intranet); the first retry's wait (each next one 4 times longer, at most 4 h);
    # how long a delivery is retried before its endpoint is disabled.
    webhook_allow_private: bool = False
    webhook_retry_seconds: float = 5.0
    # The fediverse (docs/fediverse.md): followable links need ANONBOX_PUBLIC_URL, and
    # ANONBOX_FEDERATION_OFF=true turns them off for the whole site; private, loopback and
    # link-local peers (followers, and the instances of sign-in and posted answers) only
    # when allowed (tests, an intranet); the first retry's wait of a delivery.
    federation: bool = True
    federation_allow_private: bool = False
    federation_retry_seconds: float = 10.0
    webhook_give_up_seconds: int = 26 * 3600
    # E-mail notices: how long the hourly and daily digests gather (shorter in tests), the
    # first retry's wait when the mail server refuses (each next 4 times longer, at most
    # 4 h), and how long a notice is retried before it is given up.
    email_hourly_seconds: int = 3600
    email_daily_seconds: int = 24 * 3600
    email_retry_seconds: float = 30.0
    email_give_up_seconds: int = 3 * 24 * 3600
    # Web Push: http:// endpoints and local addresses only when allowed (tests); the VAPID
    # ``sub`` a push service reaches the operator by (mailto: or https:); the first
    # retry's wait (each next 4 times longer, at most 1 h) and how long a push is retried.
    push_allow_local: bool = False
    push_contact: str = "mailto:anonbox@localhost"
    push_retry_seconds: float = 5.0
    push_give_up_seconds: int = 24 * 3600
    limit_card: Limit = field(default=Limit("card", 60, 60))
    limit_report: Limit = field(default=Limit("report", 10, 600))
    # Requests to followable links' inboxes per client network, counted before a signature
    # is read: each unknown key costs a fetch from the key's server and an RSA check.
    limit_federation_inbox: Limit = field(default=Limit("federation-inbox", 300, 60))
    sender_key_rotation_hours: int = 24
    sender_retention_days: int = 90
    # E-mail sign-in: where mail goes (None: printed to the console in development, and
    # the e-mail option hidden elsewhere), who it is from, and the base URL of its links.
    smtp_url: str | None = None
    mail_from: str = "anonbox <no-reply@localhost>"
    public_url: str | None = None
    # The language of accounts made where no browser says one (``anonbox creator create``
    # without --lang): theirs and their first link's prompt. One of core.i18n.LANGUAGES;
    # None (unset): the prompt in English, the account's language picked by the first
    # browser that opens its dashboard, as before the setting.
    default_language: str | None = None
    email_signin_ttl_seconds: int = 15 * 60
    # Sign-in mails per address; past it the asking browser is bound to the pending link
    # (auth.email_signin), never refused. Links must outlive its window.
    limit_signin_address: Limit = field(default=Limit("signin_address", 1, 300))
    limit_signin_network: Limit = field(default=Limit("signin_network", 30, 3600))
    # Account deletion: days between asking and erasure, during which the account is
    # disabled and its creator may cancel (fractions allowed: tests use seconds' worth).
    account_erase_days: float = 30.0
    # Growing past one database (docs/decisions.md, "Behind a pooler, beside replicas"):
    # "transaction" when ANONBOX_DATABASE_URL names PgBouncer in transaction mode (no
    # session state on its connections); then LISTEN, and the migrations, take the direct
    # connection named by database_listen_url. Replicas answer public reads while they are
    # up and no further behind than the bound.
    database_pooler: str | None = None
    database_listen_url: str | None = None
    database_replica_urls: tuple[str, ...] = ()
    database_replica_max_lag_seconds: float = 5.0

    def __post_init__(self) -> None:
        if self.environment != "development" and self.secret_key == DEVELOPMENT_SECRET:
            raise ConfigurationError("Set ANONBOX_SECRET_KEY (ANONBOX_ENV is not development)")
        if self.environment != "development" and not self.durable_commits:
            raise ConfigurationError("ANONBOX_DURABLE_COMMITS=false is for measurement only")
        if len(self.secret_key) < 32:
            raise ConfigurationError("ANONBOX_SECRET_KEY must be at least 32 characters")
        if not 0 < self.account_erase_days <= MAX_ACCOUNT_ERASE_DAYS:
            raise ConfigurationError(
                f"ANONBOX_ACCOUNT_ERASE_DAYS must be more than 0 and at most "
                f"{MAX_ACCOUNT_ERASE_DAYS}, not {self.account_erase_days}"
            )
        if self.limit_signin_address.window_seconds > self.email_signin_ttl_seconds:
            # Past the limit the pending link is what the owner signs in with: it must
            # still work for as long as no new one is mailed.
            raise ConfigurationError(
                "ANONBOX_LIMIT_SIGNIN_ADDRESS's window must not be longer than "
                "ANONBOX_EMAIL_SIGNIN_TTL_SECONDS"
            )
        if self.default_language is not None and self.default_language not in LANGUAGES:
            raise ConfigurationError(
                f"ANONBOX_DEFAULT_LANGUAGE must be one of {', '.join(LANGUAGES)},"
                f" not {self.default_language!r}"
            )
        if self.smtp_url is not None:
            smtp_settings(self.smtp_url)  # refuse a malformed URL at start, not at first mail
            if self.environment != "development" and self.public_url is None:
                raise ConfigurationError(
                    "Set ANONBOX_PUBLIC_URL (the base URL of links in mail) with ANONBOX_SMTP_URL"
                )
        if self.public_url is not None and urlsplit(self.public_url).scheme not in {
            "http",
            "https",
        }:
            raise ConfigurationError(
                f"ANONBOX_PUBLIC_URL must be an http(s):// URL, not {self.public_url!r}"
            )
        self._check_database()
        issuer = urlsplit(self.google_issuer)
        if issuer.scheme != "https" and not (
            issuer.scheme == "http" and _is_loopback(issuer.hostname or "")
        ):
            raise ConfigurationError(
                f"ANONBOX_GOOGLE_ISSUER must be an https:// URL (http:// only on loopback), "
                f"not {self.google_issuer!r}"
            )

    def _check_database(self) -> None:
        on_postgres = _is_postgres_url(self.database_url)
        if self.database_pooler not in {None, "transaction"}:
            raise ConfigurationError(
                f"ANONBOX_DATABASE_POOLER must be transaction (or unset), "
                f"not {self.database_pooler!r}"
            )
        if self.database_listen_url is not None and not _is_postgres_url(self.database_listen_url):
            raise ConfigurationError(
                "ANONBOX_DATABASE_LISTEN_URL must be a postgresql:// URL (the database "
                "itself, not the pooler)"
            )
        for url in self.database_replica_urls:
            if not _is_postgres_url(url):
                raise ConfigurationError(
                    f"ANONBOX_DATABASE_REPLICA_URLS must list postgresql:// URLs, "
                    f"not {_without_password(url)!r}"
                )
        needs_postgres = [
            name
            for name, given in (
                ("ANONBOX_DATABASE_POOLER", self.database_pooler),
                ("ANONBOX_DATABASE_LISTEN_URL", self.database_listen_url),
                ("ANONBOX_DATABASE_REPLICA_URLS", self.database_replica_urls),
            )
            if given
        ]
        if needs_postgres and not on_postgres:
            raise ConfigurationError(
                f"{needs_postgres[0]} needs ANONBOX_DATABASE_URL to be a postgresql:// URL"
            )
        if self.database_pooler is not None:
            if self.database_listen_url is None:
                raise ConfigurationError(
                    "Set ANONBOX_DATABASE_LISTEN_URL with ANONBOX_DATABASE_POOLER: LISTEN "
                    "needs a connection of its own, straight to PostgreSQL"
                )
            if not self.durable_commits:
                raise ConfigurationError(
                    "ANONBOX_DURABLE_COMMITS=false cannot pass a pooler (a session setting): "
                    "set synchronous_commit on the database instead"
                )
        if not 0 < self.database_replica_max_lag_seconds <= 3600:
            raise ConfigurationError(
                "ANONBOX_DATABASE_REPLICA_MAX_LAG_SECONDS must be more than 0 and at most "
                f"3600, not {self.database_replica_max_lag_seconds}"
            )

    @property
    def direct_database_url(self) -> str:
        """The database itself, past any pooler: for LISTEN and the migrations."""
        return self.database_listen_url or self.database_url

    @property
    def federates(self) -> bool:
        """Whether links can be followed from the fediverse: not turned off, and the site
        knows its own address (actors' ids are addresses under it, for good)."""
        return self.federation and self.public_url is not None

    @property
    def development(self) -> bool:
        return self.environment == DEVELOPMENT

    @property
    def email_signin_enabled(self) -> bool:
        """Mail goes through SMTP, or (in development only) to the console."""
        return self.smtp_url is not None or self.development

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

        def limit(name: str, default: Limit) -> Limit:
            raw = env.get(name)
            if raw is None:
                return default
            count, _, seconds = raw.partition("/")
            try:
                return Limit(default.name, int(count), int(seconds))
            except ValueError:
                raise ConfigurationError(
                    f"{name} must look like 10/60 (requests per seconds), not {raw!r}"
                ) from None

        def networks(raw: str) -> tuple[IPNetwork, ...]:
            try:
                return tuple(
                    ipaddress.ip_network(part.strip(), strict=False)
                    for part in raw.split(",")
                    if part.strip()
                )
            except ValueError as exc:
                raise ConfigurationError(f"ANONBOX_TRUSTED_PROXIES: {exc}") from None

        fail_open = env.get("ANONBOX_RATE_LIMIT_FAIL", "open").lower()
        if fail_open not in {"open", "closed"}:
            raise ConfigurationError("ANONBOX_RATE_LIMIT_FAIL must be open or closed")

        def seconds(name: str, default: float) -> float:
            raw = env.get(name)
            if not raw:
                return default
            try:
                value = float(raw)
            except ValueError:
                raise ConfigurationError(f"{name} must be a number, not {raw!r}") from None
            if not value > 0:
                raise ConfigurationError(f"{name} must be positive, not {raw!r}")
            return value

        def flag(name: str) -> bool:
            raw = env.get(name, "false").lower()
            if raw not in {"true", "false"}:
                raise ConfigurationError(f"{name} must be true or false, not {raw!r}")
            return raw == "true"

        durable = env.get("ANONBOX_DURABLE_COMMITS", "true").lower()
        if durable not in {"true", "false"}:
            raise ConfigurationError("ANONBOX_DURABLE_COMMITS must be true or false")

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
            session_max_seconds=number("ANONBOX_SESSION_MAX_SECONDS", defaults.session_max_seconds),
            signin_state_ttl_seconds=number(
                "ANONBOX_SIGNIN_STATE_TTL_SECONDS", defaults.signin_state_ttl_seconds
            ),
            secret_key=env.get("ANONBOX_SECRET_KEY", DEVELOPMENT_SECRET),
            trusted_proxies=networks(env.get("ANONBOX_TRUSTED_PROXIES", "")),
            redis_url=env.get("ANONBOX_REDIS_URL") or None,
            rate_limit_fail_open=fail_open == "open",
            durable_commits=durable == "true",
            page_cache=env.get("ANONBOX_PAGE_CACHE", "true").lower() != "false",
            limit_sender_per_link=limit(
                "ANONBOX_LIMIT_SENDER_LINK", defaults.limit_sender_per_link
            ),
            limit_sender=limit("ANONBOX_LIMIT_SENDER", defaults.limit_sender),
            limit_link=limit("ANONBOX_LIMIT_LINK", defaults.limit_link),
            limit_service=limit("ANONBOX_LIMIT_SERVICE", defaults.limit_service),
            webhook_allow_private=flag("ANONBOX_WEBHOOK_ALLOW_PRIVATE"),
            federation=not flag("ANONBOX_FEDERATION_OFF"),
            federation_allow_private=flag("ANONBOX_FEDERATION_ALLOW_PRIVATE"),
            federation_retry_seconds=seconds(
                "ANONBOX_FEDERATION_RETRY_SECONDS", defaults.federation_retry_seconds
            ),
            webhook_retry_seconds=seconds(
                "ANONBOX_WEBHOOK_RETRY_SECONDS", defaults.webhook_retry_seconds
            ),
            webhook_give_up_seconds=number(
                "ANONBOX_WEBHOOK_GIVE_UP_SECONDS", defaults.webhook_give_up_seconds
            ),
            email_hourly_seconds=number(
                "ANONBOX_EMAIL_HOURLY_SECONDS", defaults.email_hourly_seconds
            ),
            email_daily_seconds=number("ANONBOX_EMAIL_DAILY_SECONDS", defaults.email_daily_seconds),
            email_retry_seconds=seconds(
                "ANONBOX_EMAIL_RETRY_SECONDS", defaults.email_retry_seconds
            ),
            email_give_up_seconds=number(
                "ANONBOX_EMAIL_GIVE_UP_SECONDS", defaults.email_give_up_seconds
            ),
            push_allow_local=flag("ANONBOX_PUSH_ALLOW_LOCAL"),
            push_contact=env.get("ANONBOX_PUSH_CONTACT") or defaults.push_contact,
            push_retry_seconds=seconds("ANONBOX_PUSH_RETRY_SECONDS", defaults.push_retry_seconds),
            push_give_up_seconds=number(
                "ANONBOX_PUSH_GIVE_UP_SECONDS", defaults.push_give_up_seconds
            ),
            proof_of_work_numbers=number(
                "ANONBOX_PROOF_OF_WORK_NUMBERS", defaults.proof_of_work_numbers
            ),
            limit_card=limit("ANONBOX_LIMIT_CARD", defaults.limit_card),
            limit_report=limit("ANONBOX_LIMIT_REPORT", defaults.limit_report),
            limit_federation_inbox=limit(
                "ANONBOX_LIMIT_FEDERATION_INBOX", defaults.limit_federation_inbox
            ),
            sender_key_rotation_hours=number(
                "ANONBOX_SENDER_KEY_ROTATION_HOURS", defaults.sender_key_rotation_hours
            ),
            sender_retention_days=number(
                "ANONBOX_SENDER_RETENTION_DAYS", defaults.sender_retention_days
            ),
            smtp_url=env.get("ANONBOX_SMTP_URL") or None,
            mail_from=env.get("ANONBOX_MAIL_FROM") or defaults.mail_from,
            public_url=(env.get("ANONBOX_PUBLIC_URL") or "").rstrip("/") or None,
            default_language=env.get("ANONBOX_DEFAULT_LANGUAGE") or None,
            email_signin_ttl_seconds=number(
                "ANONBOX_EMAIL_SIGNIN_TTL_SECONDS", defaults.email_signin_ttl_seconds
            ),
            limit_signin_address=limit(
                "ANONBOX_LIMIT_SIGNIN_ADDRESS", defaults.limit_signin_address
            ),
            limit_signin_network=limit(
                "ANONBOX_LIMIT_SIGNIN_NETWORK", defaults.limit_signin_network
            ),
            account_erase_days=seconds("ANONBOX_ACCOUNT_ERASE_DAYS", defaults.account_erase_days),
            database_pooler=(env.get("ANONBOX_DATABASE_POOLER") or "").lower() or None,
            database_listen_url=env.get("ANONBOX_DATABASE_LISTEN_URL") or None,
            database_replica_urls=tuple(
                part.strip()
                for part in env.get("ANONBOX_DATABASE_REPLICA_URLS", "").split(",")
                if part.strip()
            ),
            database_replica_max_lag_seconds=seconds(
                "ANONBOX_DATABASE_REPLICA_MAX_LAG_SECONDS",
                defaults.database_replica_max_lag_seconds,
            ),
        )


@dataclass(frozen=True, slots=True)
class SMTPSettings:
    """``smtp://user:pass@host:587`` (STARTTLS, required but on loopback) or
    ``smtps://user:pass@host:465`` (TLS from the first byte)."""

    host: str
    port: int
    username: str | None
    password: str | None
    implicit_tls: bool
    require_starttls: bool


def smtp_settings(url: str) -> SMTPSettings:
    parts = urlsplit(url)
    if parts.scheme not in {"smtp", "smtps"} or not parts.hostname:
        raise ConfigurationError(
            "ANONBOX_SMTP_URL must look like smtp://user:pass@host:587 or smtps://host:465"
        )
    try:
        port = parts.port
    except ValueError:
        raise ConfigurationError("ANONBOX_SMTP_URL has a port that is not a number") from None
    implicit = parts.scheme == "smtps"
    return SMTPSettings(
        host=parts.hostname,
        port=port or (465 if implicit else 587),
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        implicit_tls=implicit,
        # A relay on this machine may offer no TLS at all; anywhere else plain text would
        # send the password and every sign-in link in the clear.
        require_starttls=not implicit and not _is_loopback(parts.hostname),
    )


def _is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://", "postgresql+asyncpg://"))


def _without_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    return url.replace(f":{parts.password}@", ":…@", 1)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
