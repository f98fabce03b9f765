"""How anonbox reaches a mail server: STARTTLS (required beyond loopback), TLS from the
first byte (``smtps://``), and no password or link in clear to a server that is not on
this machine. Real SMTP servers with a self-signed certificate that the anonbox process
is told to trust (``SSL_CERT_FILE``), as an operator would trust a private CA."""

from __future__ import annotations

import socket
import ssl
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.server import Server
from tests.support.db import query
from tests.support.forms import csrf_of
from tests.support.http import loopback_client
from tests.support.mail import SMTP_PASSWORD, SMTP_USER, SMTPServer, self_signed, start_smtp


def _outside_address() -> str:
    """This machine's address on its network: not loopback, so STARTTLS is required."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks a route
        address = str(probe.getsockname()[0])
    if address.startswith("127."):
        pytest.skip("this machine has no address beyond loopback")
    return address


@pytest.fixture(scope="module")
def outside() -> str:
    return _outside_address()


Certificate = tuple[Path, ssl.SSLContext]  # the PEM a client trusts, the server's context
StartAnonbox = Callable[[str], Server]


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory, outside: str) -> Certificate:
    return self_signed(tmp_path_factory.mktemp("tls"), ["127.0.0.1", outside, "localhost"])


@pytest.fixture
def anonbox_for(tmp_path: Path, certificate: Certificate) -> Iterator[StartAnonbox]:
    """Start anonbox (SQLite) sending mail to an SMTP URL, trusting the test certificate."""
    started: list[Server] = []

    def start(smtp_url: str) -> Server:
        server = Server(
            f"sqlite:///{tmp_path / 'anonbox.db'}",
            tmp_path / "anonbox.log",
            env={"ANONBOX_SMTP_URL": smtp_url, "SSL_CERT_FILE": str(certificate[0])},
        )
        started.append(server.start())
        return server

    yield start
    for server in started:
        server.stop()


def ask_for_link(server: Server, address: str) -> httpx.Response:
    with loopback_client(base_url=server.url, timeout=30) as browser:
        page = browser.get("/signin")
        return browser.post(
            "/signin/email", data={"csrf_token": csrf_of(page.text), "email": address}
        )


def attempted(server: Server, timeout: float = 30.0) -> None:
    """Wait until anonbox has recorded an attempt at every sign-in mail asked for: its SMTP
    session is over then (the mail leaves after the answer, issue 39), so the test's SMTP
    server is not stopped under it."""
    deadline = time.monotonic() + timeout
    while query(
        server.database_url,
        "SELECT 1 FROM email_signin_tokens WHERE mail_due_at IS NOT NULL AND mail_attempts = 0",
    ):
        assert time.monotonic() < deadline, server.log()
        time.sleep(0.05)


def url(scheme: str, smtp: SMTPServer) -> str:
    return f"{scheme}://{SMTP_USER}:{SMTP_PASSWORD}@{smtp.host}:{smtp.port}"


def test_starttls_to_a_server_beyond_loopback(
    outside: str, certificate: Certificate, anonbox_for: StartAnonbox
) -> None:
    with start_smtp(outside, starttls=certificate[1]) as smtp:
        server = anonbox_for(url("smtp", smtp))
        address = f"tls-{uuid.uuid4().hex[:8]}@example.org"

        assert ask_for_link(server, address).status_code == 200
        assert smtp.mailbox.wait_for(address)["Subject"] == "Your anonbox sign-in link"
        attempted(server)
        assert smtp.mailbox.logins == [SMTP_USER]  # AUTH is offered only after STARTTLS


def test_tls_from_the_first_byte_with_smtps(
    certificate: Certificate, anonbox_for: StartAnonbox
) -> None:
    with start_smtp(implicit_tls=certificate[1]) as smtp:
        server = anonbox_for(url("smtps", smtp))
        address = f"smtps-{uuid.uuid4().hex[:8]}@example.org"

        assert ask_for_link(server, address).status_code == 200
        assert smtp.mailbox.wait_for(address)["To"] == address
        attempted(server)


def test_no_password_in_clear_to_a_server_beyond_loopback_without_starttls(
    outside: str, anonbox_for: StartAnonbox
) -> None:
    with start_smtp(outside) as plain:  # offers no TLS
        server = anonbox_for(url("smtp", plain))

        answer = ask_for_link(server, f"plain-{uuid.uuid4().hex[:8]}@example.org")

        # The usual page: the mail is handed over after the answer (issue 39), and refused
        # there, before any password was sent.
        assert answer.status_code == 200, answer.text
        attempted(server)
        assert "mail could not be sent" in server.log()
        assert plain.mailbox.messages == []
        assert plain.mailbox.logins == []
