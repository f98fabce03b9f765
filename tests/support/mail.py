"""A real SMTP server on loopback (aiosmtpd) that keeps what it is sent, for tests that
read the mail anonbox sends, as a person would read their inbox.

It requires SMTP AUTH with ``SMTP_USER`` / ``SMTP_PASSWORD`` (offered without TLS: the
server is on loopback), so a test that receives mail also proves anonbox logged in.
``start_smtp`` makes more of them, with STARTTLS or TLS from the first byte, under a
self-signed certificate from ``self_signed``.
"""

from __future__ import annotations

import datetime
import email
import email.policy
import ipaddress
import re
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, Envelope, LoginPassword, Session
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.server import free_port

SMTP_USER = "anonbox"
SMTP_PASSWORD = "mail-secret"
REFUSED_PREFIX = "refused-"  # the server refuses recipients whose address starts so
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

    def wait_for(self, address: str, count: int = 1, timeout: float = 30.0) -> EmailMessage:
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


def deliver_into(mailbox: Mailbox, envelope: Envelope) -> str:
    """Parses the mail ``envelope`` carries into ``mailbox``; the SMTP server's reply."""
    content = envelope.original_content or envelope.content
    assert isinstance(content, bytes)
    parsed = email.message_from_bytes(content, policy=email.policy.default)
    assert isinstance(parsed, EmailMessage)
    mailbox.deliver(parsed)
    return "250 Message accepted for delivery"


class _Handler:
    def __init__(self, mailbox: Mailbox) -> None:
        self.mailbox = mailbox

    async def handle_RCPT(
        self, server: Any, session: Session, envelope: Envelope, address: str, options: list[str]
    ) -> str:
        if address.startswith(REFUSED_PREFIX):  # a mailbox that does not exist
            return f"550 5.1.1 <{address}>: Recipient address rejected"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Session, envelope: Envelope) -> str:
        return deliver_into(self.mailbox, envelope)


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


@contextmanager
def start_smtp(
    host: str = "127.0.0.1",
    *,
    starttls: ssl.SSLContext | None = None,
    implicit_tls: ssl.SSLContext | None = None,
) -> Iterator[SMTPServer]:
    """An SMTP server on ``host``: plain, offering (and requiring) STARTTLS, or TLS from
    the first byte. AUTH is required; over TLS only when there is TLS."""
    mailbox = Mailbox()
    port = free_port()
    # aiosmtpd counts only STARTTLS as TLS for AUTH; a connection that began in TLS is too.
    tls = starttls is not None
    controller = Controller(
        _Handler(mailbox),
        hostname=host,
        port=port,
        ssl_context=implicit_tls,
        authenticator=_authenticator(mailbox),
        auth_required=True,
        auth_require_tls=tls,
        tls_context=starttls,
        require_starttls=starttls is not None,
    )
    controller.start()
    try:
        yield SMTPServer(host, port, mailbox)
    finally:
        controller.stop()


def self_signed(directory: Path, hosts: list[str]) -> tuple[Path, ssl.SSLContext]:
    """A certificate for ``hosts`` (IP addresses or names): the PEM file a client must
    trust, and the server's TLS context."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])])
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path = directory / "smtp-cert.pem"
    key_path = directory / "smtp-key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_path, key_path)
    return cert_path, context


@pytest.fixture(scope="session")
def smtp_server() -> Iterator[SMTPServer]:
    with start_smtp() as server:
        yield server
