"""Signing in with a link sent by e-mail, over HTTP as a browser does it, with the mail read
from a real SMTP server on loopback. Each test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import hashlib
import re
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from email.message import EmailMessage

import httpx
import pytest

from tests.auth.conftest import (
    Provider,
    StartServers,
    cookie_attributes,
    cookie_header_client,
    http_client,
    make_local_creator,
    profile,
    set_cookies,
    sign_in,
    signin_env,
)
from tests.server import Server, free_port
from tests.support.db import query
from tests.support.forms import csrf_of
from tests.support.mail import REFUSED_PREFIX, SMTPServer, signin_link_in
from tests.support.racing import race
from tests.support.signin import signin_link_command

SESSION_COOKIE = "anonbox_session"
EMAIL_COOKIE = "anonbox_email_signin"
PUBLIC_URL = "https://anonbox.example"
RACERS = 15  # requests fired at once at a once-only action
PRODUCTION = {"ANONBOX_ENV": "production", "ANONBOX_SECRET_KEY": "p" * 48}


@pytest.fixture(scope="module")
def servers(
    provider: Provider, smtp_server: SMTPServer, start_servers: StartServers
) -> Iterator[dict[str, Server]]:
    mail = {"ANONBOX_SMTP_URL": smtp_server.url, "ANONBOX_MAIL_FROM": "anonbox <me@anonbox.test>"}
    envs = {
        # 127.0.0.1 is a trusted proxy: a test names other networks with X-Forwarded-For.
        "mail": signin_env(provider.url, **mail, ANONBOX_TRUSTED_PROXIES="127.0.0.1/32"),
        "console": {},  # development, nothing configured
        "strict": signin_env(
            provider.url,
            **mail,
            ANONBOX_EMAIL_SIGNIN_TTL_SECONDS="1",
            ANONBOX_LIMIT_SIGNIN_ADDRESS="1/1",  # no longer than a link lives
            ANONBOX_LIMIT_SIGNIN_NETWORK="3/3600",
            ANONBOX_TRUSTED_PROXIES="127.0.0.1/32",
        ),
        "production": {**PRODUCTION, **mail, "ANONBOX_PUBLIC_URL": PUBLIC_URL},
        "closed": dict(PRODUCTION),  # production with neither SMTP nor Google
        "mail_down": {"ANONBOX_SMTP_URL": f"smtp://127.0.0.1:{free_port()}"},
    }
    with start_servers("email-signin-logs", envs) as running:
        yield running


def new_address() -> str:
    return f"person-{uuid.uuid4().hex[:12]}@example.org"


def ask_for_link(
    browser: httpx.Client, email: str, headers: dict[str, str] | None = None
) -> httpx.Response:
    """Open the sign-in page, type the address, press the button."""
    page = browser.get("/signin")
    assert page.status_code == 200, page.text
    return browser.post(
        "/signin/email", data={"csrf_token": csrf_of(page.text), "email": email}, headers=headers
    )


def mailed_link(browser: httpx.Client, smtp: SMTPServer, address: str) -> str:
    """Ask for a link in ``browser``, then read it from the mail as its owner would."""
    asked = ask_for_link(browser, address)
    assert asked.status_code == 200, asked.text
    return signin_link_in(smtp.mailbox.wait_for(address))


def session_token(response: httpx.Response) -> str | None:
    cookies = set_cookies(response, SESSION_COOKIE)
    return cookie_attributes(cookies[0])["value"] if cookies else None


def problem_of(page: httpx.Response) -> str:
    found = re.search(r'id="signin-problem"[^>]*>([^<]+)<', page.text)
    assert found, page.text
    return found.group(1)


@dataclass(frozen=True)
class MailSignin:
    """One person about to sign in by mail: a server, the SMTP server its mail goes
    through, a browser of their own on that server and an address nobody used yet."""

    servers: dict[str, Server]
    smtp: SMTPServer
    new_user_agent: Callable[[str], httpx.Client]
    server: Server
    browser: httpx.Client
    address: str

    def on(self, name: str) -> MailSignin:
        """The same person on ``servers[name]``, with a browser of their own there."""
        server = self.servers[name]
        return replace(self, server=server, browser=self.new_user_agent(server.url))

    def stranger(self) -> httpx.Client:
        """Another browser on the same server, with an empty cookie jar."""
        return self.new_user_agent(self.server.url)

    def ask(
        self, email: str | None = None, headers: dict[str, str] | None = None
    ) -> httpx.Response:
        """Ask for a link in this browser, for this address unless ``email`` is given."""
        return ask_for_link(self.browser, self.address if email is None else email, headers)

    def mail(self, address: str | None = None) -> EmailMessage:
        """The sign-in mail to this address (or ``address``), once it arrives."""
        return self.smtp.mailbox.wait_for(self.address if address is None else address)

    def link_in_mail(self) -> str:
        return signin_link_in(self.mail())

    def mailed_link(self) -> str:
        """Ask in this browser, then read the link from the mail."""
        return mailed_link(self.browser, self.smtp, self.address)


@pytest.fixture
def mail_signin(
    servers: dict[str, Server],
    smtp_server: SMTPServer,
    new_user_agent: Callable[[str], httpx.Client],
) -> MailSignin:
    """A fresh browser and address on the "mail" server (``.on(name)`` for another)."""
    server = servers["mail"]
    return MailSignin(
        servers, smtp_server, new_user_agent, server, new_user_agent(server.url), new_address()
    )


# --- the path that works ----------------------------------------------------------------


def test_a_new_address_gets_a_link_that_signs_in_and_makes_an_account(
    mail_signin: MailSignin,
) -> None:
    browser, address = mail_signin.browser, mail_signin.address

    asked = mail_signin.ask(address.upper())

    assert asked.status_code == 200, asked.text
    assert 'id="signin-email-sent"' in asked.text
    mail = mail_signin.mail()
    assert mail["Subject"] == "Your anonbox sign-in link"
    assert mail["From"] == "anonbox <me@anonbox.test>"
    assert mail_signin.smtp.mailbox.logins, "anonbox did not log in to the SMTP server"
    link = signin_link_in(mail)
    assert link.startswith(f"{mail_signin.server.url}/signin/email?token=")  # development

    followed = browser.get(link)

    assert followed.status_code == 303, followed.text
    assert followed.headers["location"] == "/dashboard"
    token = session_token(followed)
    assert token is not None
    dashboard = browser.get("/dashboard")
    assert dashboard.status_code == 200
    assert 'id="inbox"' in dashboard.text
    me = profile(browser, token)
    assert me["email"] == address
    assert me["link_id"]


def test_google_and_email_with_one_address_reach_one_account(
    mail_signin: MailSignin, provider: Provider
) -> None:
    by_google = sign_in(mail_signin.stranger(), provider.new_user(email=mail_signin.address))
    google_account = profile(by_google.user_agent, by_google.access_token)

    browser = mail_signin.browser
    mail_signin.ask()
    followed = browser.get(mail_signin.link_in_mail())
    token = session_token(followed)
    assert token is not None

    assert profile(browser, token)["user_id"] == google_account["user_id"]


def test_the_answer_is_the_same_whether_or_not_the_address_has_an_account(
    mail_signin: MailSignin,
) -> None:
    _, known = make_local_creator(mail_signin.server)
    unknown = mail_signin.address

    answers = {
        address: ask_for_link(mail_signin.stranger(), address) for address in (known, unknown)
    }

    def shape(response: httpx.Response, address: str) -> tuple[int, str, list[str]]:
        body = response.text.replace(address, "ADDRESS")
        cookies = sorted(c.split("=", 1)[0] for c in response.headers.get_list("set-cookie"))
        return response.status_code, body, cookies

    assert shape(answers[known], known) == shape(answers[unknown], unknown)
    for address in (known, unknown):
        assert mail_signin.mail(address)["Subject"] == "Your anonbox sign-in link"


def test_a_link_is_stored_only_as_its_hash(mail_signin: MailSignin) -> None:
    mail_signin.ask()
    token = mail_signin.link_in_mail().rsplit("=", 1)[1]

    # The asked row, and the mailed link's own row (minted when the mail was written).
    rows = query(
        mail_signin.server.database_url,
        "SELECT * FROM email_signin_tokens WHERE email = $1",
        mail_signin.address,
    )
    assert [r for r in rows if hashlib.sha256(token.encode()).hexdigest() in r.values()]
    assert not any(token in str(value) for row in rows for value in row.values())


# --- links that must not sign anyone in -------------------------------------------------


def test_a_link_works_once(mail_signin: MailSignin) -> None:
    server = mail_signin.server
    binding = cookie_attributes(set_cookies(mail_signin.ask(), EMAIL_COOKIE)[0])
    link = mail_signin.link_in_mail()
    assert mail_signin.browser.get(link).status_code == 303

    # Again, from the same browser with its binding cookie still there (the success
    # answer deletes it, but a copy of the cookie must not make a second session).
    with http_client(server.url, headers={"Cookie": f"{EMAIL_COOKIE}={binding['value']}"}) as b:
        again = b.get(link)

    assert again.status_code == 400
    assert "text/html" in again.headers["content-type"]
    assert "already used" in problem_of(again)
    assert session_token(again) is None


@pytest.mark.parametrize("round_", range(3))
def test_a_link_opened_many_times_at_once_signs_in_once(
    mail_signin: MailSignin, round_: int
) -> None:
    """The link is spent in one statement (``used_at IS NULL`` in its UPDATE): opened 15
    times at once in the browser that asked (a double click, a prefetch, tabs restored),
    one opening signs in and every other is the "already used" page, with one session."""
    server, address = mail_signin.server, mail_signin.address
    binding = cookie_attributes(set_cookies(mail_signin.ask(), EMAIL_COOKIE)[0])["value"]
    link = mail_signin.link_in_mail()

    def open_link(_: int) -> httpx.Response:
        with cookie_header_client(server.url, {EMAIL_COOKIE: binding}) as browser:
            return browser.get(link)

    opened = race(RACERS, open_link)

    assert Counter(o.status_code for o in opened) == {303: 1, 400: RACERS - 1}
    [signed_in] = [o for o in opened if o.status_code == 303]
    token = session_token(signed_in)
    assert token is not None
    for refused in (o for o in opened if o.status_code == 400):
        assert "already used" in problem_of(refused)
        assert session_token(refused) is None
    with http_client(server.url) as browser:
        me = profile(browser, token)
    assert me["email"] == address
    [sessions] = query(
        server.database_url,
        "SELECT count(*) AS n FROM sessions WHERE user_id = $1",
        me["user_id"],
    )
    assert sessions["n"] == 1
    [accounts] = query(
        server.database_url, "SELECT count(*) AS n FROM users WHERE email = $1", address
    )
    assert accounts["n"] == 1


@pytest.mark.parametrize(
    ("accept_language", "prompt"),
    [
        ("ja-JP,ja;q=0.9,en;q=0.8", "匿名でメッセージを送ってね\uff01"),
        ("en-US,en;q=0.9", "Send me anonymous messages!"),
        ("ko-KR,ko;q=0.9", "익명으로 메시지 보내 주세요!"),
    ],
)
def test_a_new_account_s_first_link_asks_in_the_language_of_the_browser_that_signed_up(
    mail_signin: MailSignin, accept_language: str, prompt: str
) -> None:
    """The language is the signing-up browser's (Accept-Language); a link made later
    without a prompt, through the API or the dashboard, asks in the account's language."""
    language = {"Accept-Language": accept_language}
    with http_client(mail_signin.server.url, headers=language) as browser:
        followed = browser.get(mailed_link(browser, mail_signin.smtp, mail_signin.address))
        assert followed.status_code == 303, followed.text
        token = session_token(followed)
        assert token is not None
        me = profile(browser, token)

        first = browser.get(f"/links/{me['link_id']}/public").json()["data"]
        assert first["prompt"] == prompt
        spoken = accept_language[:2]  # what the link's previews speak (issue 41)
        assert first["language"] == spoken
        send_page = browser.get(f"/{me['link_id']}")
        assert f'<h1 id="prompt" class="prompt" dir="auto">{prompt}</h1>' in send_page.text

        # Another link, asked for with no prompt: the same language, whatever the request's.
        made = browser.post(
            "/links", json={}, headers={"X-API-Key": token, "Accept-Language": "es"}
        )
        assert made.status_code == 201, made.text
        assert made.json()["data"]["prompt"] == prompt
        # ... and speaks the language of the request that made it.
        assert made.json()["data"]["language"] == "es"
        links_page = browser.get("/dashboard/links")
        created = browser.post(
            "/dashboard/links", data={"csrf_token": csrf_of(links_page.text), "prompt": " "}
        )
        assert created.status_code == 303, created.text
        listed = browser.get("/links", headers={"X-API-Key": token}).json()["data"]["items"]
        assert [link["prompt"] for link in listed] == [prompt] * 3
        assert [link["language"] for link in listed] == [spoken, "es", spoken]


def test_an_expired_link_signs_nobody_in(mail_signin: MailSignin) -> None:
    strict = mail_signin.on("strict")  # links live one second there
    binding = cookie_attributes(set_cookies(strict.ask(), EMAIL_COOKIE)[0])["value"]
    link = strict.link_in_mail()
    time.sleep(1.2)

    # With the binding cookie kept past its own lifetime: the server's clock decides.
    with http_client(strict.server.url, headers={"Cookie": f"{EMAIL_COOKIE}={binding}"}) as browser:
        late = browser.get(link)

    assert late.status_code == 400
    assert "expired" in problem_of(late)
    assert session_token(late) is None


def test_a_link_opened_in_another_browser_signs_nobody_in_and_is_not_spent(
    mail_signin: MailSignin,
) -> None:
    asking = mail_signin.browser
    link = mail_signin.mailed_link()

    elsewhere = mail_signin.stranger().get(link)  # a forwarded mail, or a mail scanner

    assert elsewhere.status_code == 400
    assert "another browser" in problem_of(elsewhere)
    assert session_token(elsewhere) is None
    assert asking.get(link).status_code == 303  # still good where it was asked for


@pytest.mark.parametrize("token", ["", "x", "A" * 43, "A" * 5000])
def test_a_made_up_link_is_a_page_and_no_session(mail_signin: MailSignin, token: str) -> None:
    answer = mail_signin.browser.get("/signin/email", params={"token": token})
    assert answer.status_code == 400
    assert "text/html" in answer.headers["content-type"]
    assert session_token(answer) is None


# --- limits -----------------------------------------------------------------------------


ATTACKERS = 20


def test_nobody_can_lock_the_owner_of_an_address_out_and_its_mail_stays_bounded(
    mail_signin: MailSignin,
) -> None:
    """ATTACKERS requests at once for one address, each from a network of its own, then
    its owner asks: the same page every time, one mail in all (ANONBOX_LIMIT_SIGNIN_ADDRESS,
    one per five minutes), and the owner signs in with the link in that mail, in their own
    browser. The same for an address with an account and one without."""
    server = mail_signin.server
    _, known = make_local_creator(server)
    unknown = mail_signin.address
    pages: dict[str, list[httpx.Response]] = {}

    for n, address in enumerate((known, unknown)):

        def attack(i: int, address: str = address, n: int = n) -> httpx.Response:
            with http_client(server.url) as attacker:
                return ask_for_link(attacker, address, {"X-Forwarded-For": f"203.0.{n}.{i + 1}"})

        asked = race(ATTACKERS, attack)

        assert [a.status_code for a in asked] == [200] * ATTACKERS, [a.text for a in asked]
        owner = mail_signin.stranger()
        mine = ask_for_link(owner, address, {"X-Forwarded-For": "198.51.100.77"})
        assert mine.status_code == 200, mine.text
        assert 'id="signin-email-sent"' in mine.text
        # The mail leaves after the answer: once none is due, exactly one went out.
        mail_signin.mail(address)
        mails_settled(server, address)
        [mail] = mail_signin.smtp.mailbox.to(address)
        link = signin_link_in(mail)
        assert mail_signin.stranger().get(link).status_code == 400  # never asked there

        followed = owner.get(link)

        assert followed.status_code == 303, followed.text
        assert followed.headers["location"] == "/dashboard"
        token = session_token(followed)
        assert token is not None
        assert profile(owner, token)["email"] == address
        pages[address] = [*asked, mine]

    def shape(response: httpx.Response, address: str) -> tuple[int, str, tuple[str, ...]]:
        body = response.text.replace(address, "ADDRESS")
        cookies = sorted(c.split("=", 1)[0] for c in response.headers.get_list("set-cookie"))
        return response.status_code, body, tuple(cookies)

    shapes = {shape(page, address) for address, sent in pages.items() for page in sent}
    assert len(shapes) == 1, "a page told the mailed request, or a known address, apart"


def test_one_network_cannot_ask_for_links_without_end(
    servers: dict[str, Server], new_user_agent: Callable[[str], httpx.Client]
) -> None:
    server = servers["strict"]  # 3 per hour per network, behind a trusted proxy
    flooding = {"X-Forwarded-For": "203.0.113.9"}
    for _ in range(3):
        assert ask_for_link(new_user_agent(server.url), new_address(), flooding).status_code == 200

    refused = ask_for_link(new_user_agent(server.url), new_address(), flooding)

    assert refused.status_code == 429
    other = {"X-Forwarded-For": "198.51.100.4"}
    assert ask_for_link(new_user_agent(server.url), new_address(), other).status_code == 200


def test_starting_google_sign_ins_is_limited_per_network_too(
    servers: dict[str, Server], new_user_agent: Callable[[str], httpx.Client]
) -> None:
    """Each start writes a row (state, verifier, nonce): without a limit, a loop of
    GET /signin/google fills the database."""
    browser = new_user_agent(servers["strict"].url)
    page = {"X-Forwarded-For": "203.0.113.61"}
    assert [browser.get("/signin/google", headers=page).status_code for _ in range(3)] == [303] * 3
    refused = browser.get("/signin/google", headers=page)
    assert refused.status_code == 429
    assert "text/html" in refused.headers["content-type"]

    api = {"X-Forwarded-For": "203.0.113.62"}
    assert [browser.get("/auth/google/url", headers=api).status_code for _ in range(3)] == [200] * 3
    refused = browser.get("/auth/google/url", headers=api)
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limited"
    assert int(refused.headers["retry-after"]) > 0


# --- what each deployment offers ----------------------------------------------------------


def test_the_signin_page_shows_only_the_ways_that_are_configured(
    servers: dict[str, Server], new_user_agent: Callable[[str], httpx.Client]
) -> None:
    both = new_user_agent(servers["mail"].url).get("/signin").text
    assert 'id="signin-email-form"' in both
    assert 'id="signin-google"' in both

    console = new_user_agent(servers["console"].url).get("/signin").text
    assert 'id="signin-email-form"' in console
    assert 'id="signin-google"' not in console

    closed = new_user_agent(servers["closed"].url)
    page = closed.get("/signin")
    assert 'id="signin-email-form"' not in page.text
    assert 'id="signin-google"' not in page.text
    assert "anonbox signin-link" in page.text
    token = "t" * 32  # the page has no form to take one from: a matching pair of our own
    closed.cookies.set("__Host-anonbox_csrf", token)  # Secure cookies there: __Host- names
    refused = closed.post("/signin/email", data={"csrf_token": token, "email": "a@b.co"})
    assert refused.status_code == 503
    assert "not offered" in refused.text
    assert "signin/email?token" not in servers["closed"].log()  # never printed elsewhere


def test_in_development_without_smtp_the_mail_is_printed_on_the_console(
    mail_signin: MailSignin,
) -> None:
    console = mail_signin.on("console")
    server, browser, address = console.server, console.browser, console.address

    asked = console.ask()

    assert asked.status_code == 200
    assert 'id="signin-console"' in asked.text
    deadline = time.monotonic() + 5
    while address not in server.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    record = next(r for r in server.log_records() if address in str(r.get("event")))
    printed = str(record["event"])
    assert "DEVELOPMENT MAIL" in printed
    link = re.search(r"http://\S+/signin/email\?token=[\w-]+", printed)
    assert link, printed
    followed = browser.get(link.group(0))
    assert followed.status_code == 303
    assert session_token(followed) is not None


def test_in_production_links_use_the_public_url_and_cookies_are_secure(
    mail_signin: MailSignin,
) -> None:
    production = mail_signin.on("production")
    server, browser, address = production.server, production.browser, production.address
    page = browser.get("/signin")
    # Sent by hand: a cookie jar keeps a Secure cookie off plain HTTP, as a browser would.
    csrf = cookie_attributes(set_cookies(page, "__Host-anonbox_csrf")[0])["value"]

    asked = browser.post(
        "/signin/email",
        data={"csrf_token": csrf, "email": address},
        headers={"Cookie": f"__Host-anonbox_csrf={csrf}"},
    )

    assert asked.status_code == 200
    link = production.link_in_mail()
    assert link.startswith(f"{PUBLIC_URL}/signin/email?token=")
    [binding] = set_cookies(asked, EMAIL_COOKIE)
    attributes = cookie_attributes(binding)
    assert {"httponly", "secure"} <= attributes.keys()
    assert attributes["samesite"].lower() == "lax"
    assert attributes["path"] == "/signin"
    # Followed where the public URL leads (here, this server), with the binding cookie.
    with http_client(server.url, headers={"Cookie": f"{EMAIL_COOKIE}={attributes['value']}"}) as b:
        followed = b.get(link.replace(PUBLIC_URL, server.url))
    assert followed.status_code == 303
    [session] = set_cookies(followed, "__Host-" + SESSION_COOKIE)
    assert "secure" in cookie_attributes(session)


# --- bad input and failures ---------------------------------------------------------------


@pytest.mark.parametrize(
    "typed",
    [
        "",
        "not-an-address",
        "@example.org",
        "person@localhost",
        "a" * 400 + "@example.org",
        "victim@example.org\r\nBcc: everyone@example.org",  # header injection
        "two words@example.org",
    ],
)
def test_an_address_that_is_not_one_gets_a_page_and_no_mail(
    mail_signin: MailSignin, typed: str
) -> None:
    mailbox = mail_signin.smtp.mailbox
    before = len(mailbox.messages)
    answer = mail_signin.ask(typed)
    assert answer.status_code == 400
    assert "e-mail address" in problem_of(answer)
    time.sleep(0.1)
    assert len(mailbox.messages) == before


def test_a_form_without_its_csrf_token_or_with_a_file_is_refused_cleanly(
    mail_signin: MailSignin,
) -> None:
    browser = mail_signin.browser
    no_token = browser.post("/signin/email", data={"email": mail_signin.address})
    assert no_token.status_code == 403
    token = csrf_of(browser.get("/signin").text)
    as_file = browser.post(
        "/signin/email",
        data={"csrf_token": token},
        files={"email": ("email.txt", b"person@example.org", "text/plain")},
    )
    assert as_file.status_code == 400


def logged(server: Server, text: str, timeout: float = 30.0) -> str:
    """The server's log once it says ``text`` (the mail leaves after the answer)."""
    deadline = time.monotonic() + timeout
    while text not in server.log():
        assert time.monotonic() < deadline, f"the log never said {text!r}"
        time.sleep(0.05)
    return server.log()


def mails_settled(server: Server, address: str, timeout: float = 30.0) -> None:
    """Wait until no sign-in mail to ``address`` is due or being sent."""
    deadline = time.monotonic() + timeout
    while query(
        server.database_url,
        "SELECT 1 FROM email_signin_tokens WHERE email = $1 AND mail_due_at IS NOT NULL",
        address,
    ):
        assert time.monotonic() < deadline, "a sign-in mail is still due"
        time.sleep(0.05)


def test_a_mail_server_that_does_not_answer_changes_nothing_in_the_answer_and_leaks_nothing(
    mail_signin: MailSignin,
) -> None:
    """The answer comes before the mail is handed over, so it is the usual page (a 503
    here, and a 200 for an ask the per-address limit held back, would tell them apart);
    the mail stays due and is tried again while its link would work."""
    down = mail_signin.on("mail_down")
    server, address = down.server, down.address

    answer = down.ask()

    assert answer.status_code == 200, answer.text
    assert 'id="signin-email-sent"' in answer.text
    assert address not in logged(server, "mail could not be sent")
    # Recorded as tried once and due again later (the mail is not lost).
    deadline = time.monotonic() + 30
    while not query(
        server.database_url,
        "SELECT 1 FROM email_signin_tokens"
        " WHERE email = $1 AND mail_attempts = 1 AND mail_due_at IS NOT NULL",
        address,
    ):
        assert time.monotonic() < deadline, "the failed mail was not kept for a retry"
        time.sleep(0.05)


def test_a_refused_recipient_gets_the_usual_page_and_the_log_does_not_quote_it(
    mail_signin: MailSignin,
) -> None:
    server = mail_signin.server
    address = f"{REFUSED_PREFIX}{uuid.uuid4().hex[:12]}@example.org"

    answer = mail_signin.ask(address)

    assert answer.status_code == 200, answer.text
    assert 'id="signin-email-sent"' in answer.text
    assert address not in logged(server, "SMTPRecipientsRefused")


def test_the_log_keeps_no_address_and_no_link(mail_signin: MailSignin) -> None:
    link = mail_signin.mailed_link()
    mail_signin.browser.get(link)

    log = mail_signin.server.log()
    assert mail_signin.address not in log
    assert link.rsplit("=", 1)[1] not in log


# --- the command line ---------------------------------------------------------------------


def test_signin_link_prints_a_one_time_link_and_makes_the_creator_if_new(
    mail_signin: MailSignin,
) -> None:
    console = mail_signin.on("console")
    server, address = console.server, console.address

    link = signin_link_command(server, address)

    assert link.startswith(f"{server.url}/signin/email?token=")
    followed = console.browser.get(link)  # any browser: there was none to bind to
    token = session_token(followed)
    assert followed.status_code == 303
    assert token is not None
    assert profile(console.stranger(), token)["email"] == address
    assert console.stranger().get(link).status_code == 400  # once


def test_signin_link_for_an_existing_creator_signs_in_to_that_account(
    mail_signin: MailSignin,
) -> None:
    console = mail_signin.on("console")
    creator, address = make_local_creator(console.server)

    followed = console.browser.get(signin_link_command(console.server, address))

    token = session_token(followed)
    assert token is not None
    assert profile(console.stranger(), token)["user_id"] == creator.user_id
