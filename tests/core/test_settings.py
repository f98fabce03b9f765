"""Settings for mail and the public URL: what the service refuses to start with."""

from __future__ import annotations

import pytest

from anonbox.core.settings import ConfigurationError, Settings, smtp_settings

PRODUCTION = {"ANONBOX_ENV": "production", "ANONBOX_SECRET_KEY": "s" * 48}


def test_smtp_url_with_starttls_and_credentials() -> None:
    smtp = smtp_settings("smtp://mailer%40example.org:p%40ss@mail.example.org:587")
    assert (smtp.host, smtp.port, smtp.username, smtp.password) == (
        "mail.example.org",
        587,
        "mailer@example.org",
        "p@ss",
    )
    assert not smtp.implicit_tls
    assert smtp.require_starttls  # a remote server never gets the password in clear


def test_smtps_url_is_tls_from_the_first_byte_on_465() -> None:
    smtp = smtp_settings("smtps://mail.example.org")
    assert (smtp.port, smtp.implicit_tls, smtp.require_starttls) == (465, True, False)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]"])
def test_a_relay_on_loopback_may_offer_no_tls(host: str) -> None:
    assert not smtp_settings(f"smtp://{host}:25").require_starttls


@pytest.mark.parametrize(
    "url", ["http://mail.example.org", "smtp://", "mail.example.org:25", "smtp://host:port"]
)
def test_a_malformed_smtp_url_is_refused_at_start(url: str) -> None:
    with pytest.raises(ConfigurationError, match="ANONBOX_SMTP_URL"):
        Settings.from_env({"ANONBOX_SMTP_URL": url})


def test_outside_development_mail_needs_a_public_url_for_its_links() -> None:
    with pytest.raises(ConfigurationError, match="ANONBOX_PUBLIC_URL"):
        Settings.from_env({**PRODUCTION, "ANONBOX_SMTP_URL": "smtps://mail.example.org"})
    settings = Settings.from_env(
        {
            **PRODUCTION,
            "ANONBOX_SMTP_URL": "smtps://mail.example.org",
            "ANONBOX_PUBLIC_URL": "https://anonbox.example/",
        }
    )
    assert settings.public_url == "https://anonbox.example"
    assert settings.email_signin_enabled


def test_email_signin_is_offered_in_development_and_hidden_elsewhere_without_smtp() -> None:
    assert Settings.from_env({}).email_signin_enabled
    assert not Settings.from_env(PRODUCTION).email_signin_enabled


def test_a_public_url_must_be_http() -> None:
    with pytest.raises(ConfigurationError, match="ANONBOX_PUBLIC_URL"):
        Settings.from_env({"ANONBOX_PUBLIC_URL": "javascript:alert(1)"})


def test_notification_settings_are_read_with_the_others() -> None:
    settings = Settings.from_env(
        {
            "ANONBOX_PUSH_ALLOW_LOCAL": "true",
            "ANONBOX_PUSH_CONTACT": "mailto:ops@example.org",
            "ANONBOX_PUSH_RETRY_SECONDS": "0.2",
            "ANONBOX_PUSH_GIVE_UP_SECONDS": "60",
            "ANONBOX_WEBHOOK_RETRY_SECONDS": "1.5",
        }
    )
    assert (settings.push_allow_local, settings.push_contact) == (True, "mailto:ops@example.org")
    assert (settings.push_retry_seconds, settings.push_give_up_seconds) == (0.2, 60)
    assert settings.webhook_retry_seconds == 1.5
    assert not Settings.from_env({}).push_allow_local


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("ANONBOX_PUSH_ALLOW_LOCAL", "yes please"),
        ("ANONBOX_PUSH_RETRY_SECONDS", "soon"),
        ("ANONBOX_PUSH_RETRY_SECONDS", "-1"),
        ("ANONBOX_PUSH_GIVE_UP_SECONDS", "a day"),
        ("ANONBOX_WEBHOOK_ALLOW_PRIVATE", "1"),
        ("ANONBOX_EMAIL_RETRY_SECONDS", "nan"),
    ],
)
def test_a_bad_notification_setting_is_a_configuration_error(name: str, value: str) -> None:
    with pytest.raises(ConfigurationError, match=name):
        Settings.from_env({name: value})
