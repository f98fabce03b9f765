"""Browser fixtures: headless Chromium driven by Playwright, against the real server.

Chromium is Debian's ``chromium-headless-shell`` package
(``/usr/bin/chromium-headless-shell``, or ``ANONBOX_TEST_CHROMIUM``), not Playwright's
download, which cannot be fetched here. It is the same Chromium (version and Blink) as the
``chromium`` package, built without the desktop browser around it, as Playwright's own
headless runs use: the suite's browser tests cost half the CPU they cost in the full
browser's headless mode (docs/decisions.md, "The suite in parallel"). ``.ci/run`` and
``make test`` (as root) install it when missing; without it these tests skip locally and
fail with CI=true.

Every page is watched: a Content Security Policy violation reported in the console, an
uncaught script error, or a request to anything but loopback fails the test (requests
elsewhere are also aborted, so a CDN reference cannot hang or pass by luck).
Screenshots of the main pages go to ``test-artifacts/screenshots/``.

``axe`` checks a page with axe-core (the npm package's ``axe.min.js``, pinned, fetched
once from the npm registry with its ``integrity`` checked, kept under ``.venv/``).

Playwright's sync API keeps an event loop running on the test thread while it is open,
so ``asyncio.run`` there fails: Playwright is package-scoped (closed before other
packages' tests run), and setup that runs ``asyncio.run`` (creating a PostgreSQL
database) runs on a worker thread.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import json
import os
import sys
import tarfile
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Page,
    Route,
    WebError,
    expect,
    sync_playwright,
)
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Request as BrowserRequest

from tests.auth.conftest import Provider, signin_env
from tests.auth.conftest import provider as provider  # the same fixture, re-exported here
from tests.conftest import Creator
from tests.server import Server, anonbox_command_on
from tests.support import servers
from tests.support.http import loopback_client
from tests.support.services import IN_CI
from tests.support.signin import signin_link_command

CHROMIUM = Path(os.environ.get("ANONBOX_TEST_CHROMIUM", "/usr/bin/chromium-headless-shell"))
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 412, "height": 915}
T = TypeVar("T")

# Pages wait on a live stream polled each second and on Swagger UI parsing a large
# document: give slow CI machines room beyond Playwright's 5 s default.
expect.set_options(timeout=10_000)


def account_pages(base: str) -> list[tuple[str, str]]:
    """The pages every signed-in creator (an admin here) has, named as screenshots name
    them; ``base`` is the dashboard of one of their links."""
    return [
        ("filtered", f"{base}/filtered"),
        ("links", "/dashboard/links"),
        ("confirm-unanswered", f"{base}/unanswered/delete"),
        ("account", "/dashboard/account"),
        ("confirm-account-delete", "/dashboard/account/delete"),
        ("notifications", "/dashboard/notifications"),
        ("push", "/dashboard/push"),
        ("admin-queue", "/admin"),
        ("admin-phrases", "/admin/phrases"),
        ("admin-audit", "/admin/log"),
    ]


def off_the_loop(function: Callable[..., T], *args: Any) -> T:
    """Call ``function`` on a fresh thread, where ``asyncio.run`` works while Playwright is open."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(function, *args).result()


# --- Chromium --------------------------------------------------------------------------


def _require_chromium() -> None:
    if CHROMIUM.exists():
        return
    reason = (
        f"Chromium not found at {CHROMIUM}: `apt-get install chromium-headless-shell` "
        "(make test does it when run as root), or set ANONBOX_TEST_CHROMIUM"
    )
    if IN_CI:
        pytest.fail(f"{reason}; the browser tests are required when CI=true")
    pytest.skip(reason)


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    _require_chromium()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        yield launched
        launched.close()


# --- watching what pages do ------------------------------------------------------------


@dataclass
class Watch:
    """What the pages of one test did that they should not have."""

    csp_violations: list[str] = field(default_factory=list)
    script_errors: list[str] = field(default_factory=list)
    outside_requests: list[tuple[str, str]] = field(default_factory=list)  # (page, request)
    requests: list[str] = field(default_factory=list)
    not_ours: list[str] = field(default_factory=list)  # origins whose pages may reach out

    def allow_outside_requests_from(self, origin: str) -> None:
        """Pages of ``origin`` (not anonbox's) may reference the internet; still aborted."""
        self.not_ours.append(origin.rstrip("/") + "/")  # the slash: port 80 is not 8000

    def outside_requests_from_our_pages(self) -> list[tuple[str, str]]:
        return [
            (page, url)
            for page, url in self.outside_requests
            if not any(page.startswith(origin) for origin in self.not_ours)
        ]

    def on_console(self, message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text:
            self.csp_violations.append(message.text)

    def on_request(self, request: BrowserRequest) -> None:
        self.requests.append(request.url)

    def on_script_error(self, error: WebError) -> None:
        self.script_errors.append(f"{error.page.url if error.page else '?'}: {error.error}")

    def on_route(self, route: Route) -> None:
        try:
            page = route.request.frame.url
        except PlaywrightError:  # not from a frame (a worker)
            page = "?"
        self.outside_requests.append((page, route.request.url))
        route.abort("blockedbyclient")


def _leaves_loopback(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in {"http", "https", "ws", "wss"} and parts.hostname not in LOOPBACK


@pytest.fixture
def watch() -> Watch:
    return Watch()


@pytest.fixture
def new_context(browser: Browser, watch: Watch) -> Iterator[Callable[..., BrowserContext]]:
    """Browser contexts (each its own cookies, like a separate person) that report into
    ``watch``; ``new_context(java_script_enabled=False, viewport=PHONE)`` and so on.
    At the end of the test, CSP violations, script errors and requests from our pages to
    anywhere but loopback fail it."""
    contexts: list[BrowserContext] = []

    def make(**options: Any) -> BrowserContext:
        context = browser.new_context(
            **{"viewport": DESKTOP, "color_scheme": "light", "locale": "en-GB", **options}
        )
        context.set_default_timeout(10_000)
        context.on("console", watch.on_console)
        context.on("request", watch.on_request)
        context.on("weberror", watch.on_script_error)
        context.route(_leaves_loopback, watch.on_route)
        contexts.append(context)
        return context

    yield make
    for context in contexts:
        with contextlib.suppress(PlaywrightError):  # already gone with the browser
            context.close()
    assert not watch.csp_violations, f"CSP violations: {watch.csp_violations}"
    assert not watch.script_errors, f"uncaught script errors: {watch.script_errors}"
    outside = watch.outside_requests_from_our_pages()
    assert not outside, f"requests beyond loopback (page, request): {outside}"


class Screenshot(Protocol):
    def __call__(self, page: Page, name: str, *, full_page: bool = True) -> Path: ...


@pytest.fixture
def screenshot() -> Screenshot:
    """Keep a PNG of ``page`` as ``test-artifacts/screenshots/<name>.png``."""

    def take(page: Page, name: str, *, full_page: bool = True) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=full_page, animations="disabled")
        return path

    return take


# --- the service -----------------------------------------------------------------------


@dataclass(frozen=True)
class Site:
    """anonbox, configured to sign in through ``provider`` with browser redirects."""

    server: Server
    provider: Provider
    backend: str

    @property
    def url(self) -> str:
        return self.server.url

    def new_creator(self) -> Creator:
        """A creator made as ``anonbox creator create --json`` makes one."""
        email = f"browser-{uuid.uuid4().hex[:10]}@example.org"
        made = anonbox_command_on(
            self.server.database_url, ["creator", "create", "--email", email, "--json"]
        )
        made.check_returncode()
        document = json.loads(made.stdout)
        return Creator(document["user_id"], document["link_id"], document["api_key"])

    def api(self) -> httpx.Client:
        return loopback_client(base_url=self.url, timeout=30)

    def post_message(self, link_id: str, text: str) -> str:
        """An anonymous message sent through the API; its id."""
        with self.api() as api:
            sent = api.post(f"/message/{link_id}", json={"message_content": text})
        assert sent.status_code == 201, sent.text
        return str(sent.json()["data"]["id"])


def confirm_after_a_cancel(page: Page, opener: str, title: str, rows: str, count: int) -> None:
    """The confirmation page alone changes nothing (a prefetch or a link scanner): the link
    ``opener`` leads to a page titled ``title``; Cancel, and ``rows`` still number ``count``;
    the link again, and Confirm."""
    page.get_by_role("link", name=opener).click()
    expect(page.locator("#confirm-title")).to_have_text(title)
    page.get_by_role("link", name="Cancel").click()
    expect(page.locator(rows)).to_have_count(count)
    page.get_by_role("link", name=opener).click()
    page.locator("#confirm").click()


def signs_in_new(page: Page, server: Server, name: str) -> str:
    """``page`` signs in, by a link the CLI makes, as a new account ``name-…@example.org``;
    the address."""
    email = f"{name}-{uuid.uuid4().hex[:10]}@example.org"
    page.goto(off_the_loop(signin_link_command, server, email))
    return email


def as_a_stranger(
    site: Site, new_context: Callable[..., BrowserContext], paths: tuple[str, ...]
) -> tuple[Page, str]:
    """A creator of no concern to the test, signed in on a desktop page, opens each of
    ``paths`` (another's) and is refused (403); the page, back on its own dashboard, and
    the form token it has there."""
    page = new_context(viewport=DESKTOP).new_page()
    signs_in_new(page, site.server, "stranger")
    for path in paths:
        answer = page.goto(f"{site.url}{path}")
        assert answer is not None
        assert answer.status == 403, path
    page.goto(f"{site.url}/dashboard")
    return page, page.locator("input[name=csrf_token]").first.get_attribute("value") or ""


def own_server(name: str, env: dict[str, str], **options: Any) -> Any:
    """A browser test module's own server fixture (``tests.support.servers.own_server``),
    skipped with the other browser tests when there is no Chromium."""
    return servers.own_server(name, env, before=_require_chromium, **options)


@contextlib.contextmanager
def new_file_server(
    name: str, smtp_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """A server on a brand-new SQLite file, as ``make run`` starts one, that sends its
    mail to ``smtp_url``."""
    where: Path = tmp_path_factory.mktemp(name)
    server = Server(
        f"sqlite:///{where / 'anonbox.db'}",
        where / f"{name}.log",
        env={"ANONBOX_SMTP_URL": smtp_url},
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def site(
    request: pytest.FixtureRequest,
    provider: Provider,
    database_url_factory: Callable[[str], str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Site]:
    _require_chromium()  # before starting anything
    backend = str(request.param)
    database_url = off_the_loop(database_url_factory, backend)
    server = Server(database_url, tmp_path_factory.mktemp("logs") / f"browser-{backend}.log")
    # The provider sends the browser back to this server, so the redirect names its port.
    server.extra_env.update(
        signin_env(provider.url, ANONBOX_GOOGLE_REDIRECT_URI=f"{server.url}/auth/google/callback")
    )
    server.start()
    yield Site(server, provider, backend)
    server.stop()


# --- axe-core ----------------------------------------------------------------------------

AXE_VERSION = "4.14.1"
# The registry's ``dist.integrity`` of that version: the tarball must hash to it.
AXE_INTEGRITY = (
    "sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37Ogud"
    "VGtQ=="
)
AXE_TARBALL = f"https://registry.npmjs.org/axe-core/-/axe-core-{AXE_VERSION}.tgz"
AXE_FILE = Path(sys.prefix) / f"axe-core-{AXE_VERSION}" / "axe.min.js"


def axe_source() -> str:
    """axe-core's ``axe.min.js``, from the cache under ``.venv/`` or the registry."""
    if not AXE_FILE.exists():
        with urllib.request.urlopen(AXE_TARBALL, timeout=60) as answer:
            tarball = answer.read()
        algorithm, _, expected = AXE_INTEGRITY.partition("-")
        digest = base64.b64encode(hashlib.new(algorithm, tarball).digest()).decode()
        if digest != expected:
            raise AssertionError(f"{AXE_TARBALL} does not match its integrity {AXE_INTEGRITY}")
        with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
            member = archive.extractfile("package/axe.min.js")
            assert member is not None
            script = member.read()
        AXE_FILE.parent.mkdir(parents=True, exist_ok=True)
        partial = AXE_FILE.with_suffix(".part")
        partial.write_bytes(script)
        partial.replace(AXE_FILE)
    return AXE_FILE.read_text(encoding="utf-8")


class Axe(Protocol):
    def __call__(self, page: Page, *, exclude: tuple[str, ...] = ()) -> list[str]: ...


@pytest.fixture(scope="session")
def axe() -> Axe:
    """``axe(page)``: axe-core's violations on ``page`` as it is now, every rule axe runs
    by default (WCAG 2 A and AA, colour contrast among them, and its best practices), one
    line each: rule, impact, the elements; ``exclude`` leaves out elements by selector (no
    page uses it: Swagger UI's markup is checked too). Loaded through the DevTools
    protocol, which the page's CSP does not govern, as an extension would."""
    source = axe_source()

    def check(page: Page, *, exclude: tuple[str, ...] = ()) -> list[str]:
        if not page.evaluate("() => typeof window.axe === 'object'"):
            page.evaluate(source)
        violations: list[dict[str, Any]] = page.evaluate(
            """async (exclude) => (await axe.run(
                 exclude.length ? {exclude: exclude.map((s) => [s])} : document,
                 {resultTypes: ['violations']})).violations""",
            list(exclude),
        )
        return [
            f"{v['id']} ({v['impact']}): {v['help']} at "
            + "; ".join(
                f"{' '.join(node['target'])}: {node.get('failureSummary', '')!r}"
                for node in v["nodes"][:5]
            )
            for v in violations
        ]

    return check
