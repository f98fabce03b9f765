"""Sending mail: through any SMTP server, or, in development, onto the server's console.

``ANONBOX_SMTP_URL`` picks the server (``core.settings.smtp_settings``). Without it, a
development server prints each mail to stderr between clearly marked rules, so that a
sign-in link works on a fresh machine with nothing configured; anywhere else there is
no mailer, and what needs one is not offered.
"""

from __future__ import annotations

import logging
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Protocol

import aiosmtplib

from anonbox.core.errors import ServiceUnavailable
from anonbox.core.settings import Settings, SMTPSettings, smtp_settings

_log = logging.getLogger("anonbox.mail")
_SMTP_TIMEOUT_SECONDS = 15.0
_RULE = "=" * 72


class Mailer(Protocol):
    async def send(self, message: EmailMessage) -> None:
        """Hand the message over for delivery; ``ServiceUnavailable`` when that fails."""
        ...


def compose(settings: Settings, *, to: str, subject: str, text: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = settings.mail_from
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = formatdate(localtime=False, usegmt=True)
    message["Message-ID"] = make_msgid(domain=settings.mail_from.rpartition("@")[2].strip(">"))
    message["Auto-Submitted"] = "auto-generated"  # RFC 3834: no vacation replies to us
    message.set_content(text)
    return message


class SMTPMailer:
    def __init__(self, smtp: SMTPSettings) -> None:
        self._smtp = smtp

    async def send(self, message: EmailMessage) -> None:
        smtp = self._smtp
        try:
            await aiosmtplib.send(
                message,
                hostname=smtp.host,
                port=smtp.port,
                username=smtp.username,
                password=smtp.password,
                use_tls=smtp.implicit_tls,
                # True: STARTTLS or fail; None: STARTTLS when the server offers it.
                start_tls=True if smtp.require_starttls else None,
                timeout=_SMTP_TIMEOUT_SECONDS,
            )
        except (aiosmtplib.SMTPException, OSError) as exc:
            # The recipient is the creator's own address, but logs keep no addresses at all.
            # Not the exception's text: a refusal quotes the recipient, and logs keep no
            # addresses at all.
            code = getattr(exc, "code", None)
            _log.error(
                "mail could not be sent through %s:%s: %s%s",
                smtp.host,
                smtp.port,
                type(exc).__name__,
                f" (SMTP {code})" if code else "",
            )
            raise ServiceUnavailable(
                "Mail cannot be sent right now; try again in a minute", 60
            ) from None


class ConsoleMailer:
    """Development only: the mail, whole and readable, in the server's log on its console
    (one record, so a JSON log stays one object per line)."""

    async def send(self, message: EmailMessage) -> None:
        _log.warning(
            "%s\nDEVELOPMENT MAIL, not sent (ANONBOX_SMTP_URL is not set)\n"
            "To: %s\nSubject: %s\n\n%s\n%s",
            _RULE,
            message["To"],
            message["Subject"],
            message.get_content().rstrip(),
            _RULE,
        )


def mailer_from_settings(settings: Settings) -> Mailer | None:
    if settings.smtp_url is not None:
        return SMTPMailer(smtp_settings(settings.smtp_url))
    if settings.development:
        return ConsoleMailer()
    return None
