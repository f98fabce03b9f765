"""A real SMTP server on loopback (aiosmtpd) that keeps what it is sent, for tests that
read the mail anonbox sends, as a person would read their inbox.

It requires SMTP AUTH with ``SMTP_USER`` / ``SMTP_PASSWORD`` (offered without TLS: the
server is on loopback), so a test that receives mail also proves anonbox logged in.
"""

from __future__ import annotations

import email
import email.policy
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, Envelope, LoginPassword, Session

from tests.server import free_port

SMTP_USER = "anonbox"
SMTP_PASSWORD = "mail-secret"
_LINK = re.compile(r"https?://\S+/signin/email\?token=[A-Za-z0-9_-]+")


@dataclass
class Mailbox:
    """Everything the SMTP server accepted, in order."""

    messages: list[EmailMessage] = field(default_factory=list)
    logins: list[str] = field(default_factory=list)
    _arrived: threading.Condition = field(default_factory=threading.Condition)

    def deliver(self, message: EmailMessage) -> None:
        with self._arrived:
            self.messages.append(message)
            self._arrived.notify_all()

    def to(self, address: str) -> list[EmailMessage]:
        return [m for m in self.messages if m["To"].lower() == address.lower()]

    def wait_for(self, address: str, count: int = 1, timeout: float = 10.0) -> EmailMessage:
        """The ``count``-th mail to ``address``, waiting for it to arrive."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self.to(address)) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no mail #{count} to {address} in {timeout} s")
                self._arrived.wait(left)
            return self.to(address)[count - 1]


def text_of(message: EmailMessage) -> str:
    body = message.get_body(preferencelist=("plain",))
    assert body is not None, message
    return str(body.get_content())


def signin_link_in(message: EmailMessage) -> str:
    found = _LINK.findall(text_of(message))
    assert len(found) == 1, text_of(message)
    return str(found[0])


class _Handler:
    def __init__(self, mailbox: Mailbox) -> None:
        self.mailbox = mailbox

    async def handle_DATA(self, server: Any, session: Session, envelope: Envelope) -> str:
        content = envelope.original_content or envelope.content
        assert isinstance(content, bytes)
        parsed = email.message_from_bytes(content, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        self.mailbox.deliver(parsed)
        return "250 Message accepted for delivery"


def _authenticator(mailbox: Mailbox) -> Any:
    def check(
        server: Any, session: Session, envelope: Envelope, mechanism: str, data: Any
    ) -> AuthResult:
        if (
            isinstance(data, LoginPassword)
            and data.login.decode() == SMTP_USER
            and data.password.decode() == SMTP_PASSWORD
        ):
            mailbox.logins.append(data.login.decode())
            return AuthResult(success=True)
        return AuthResult(success=False, handled=False)

    return check


@dataclass(frozen=True)
class SMTPServer:
    host: str
    port: int
    mailbox: Mailbox

    @property
    def url(self) -> str:
        return f"smtp://{SMTP_USER}:{SMTP_PASSWORD}@{self.host}:{self.port}"


@pytest.fixture(scope="session")
def smtp_server() -> Iterator[SMTPServer]:
    mailbox = Mailbox()
    port = free_port()
    controller = Controller(
        _Handler(mailbox),
        hostname="127.0.0.1",
        port=port,
        authenticator=_authenticator(mailbox),
        auth_required=True,
        auth_require_tls=False,
    )
    controller.start()
    yield SMTPServer("127.0.0.1", port, mailbox)
    controller.stop()
