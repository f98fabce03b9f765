"""The public pages' scenarios (issue 43): what a link that goes viral is asked for.

A third creator (``PAGES_EMAIL``, named in Japanese, their link in Japanese) gets 20
messages, each answered once through the API (``setup``): the send page shows the newest
10 with their replies, and each has its answer page. Then, against anonbox (with its page
cache, as shipped, and ``anonbox-nocache``: ``ANONBOX_PAGE_CACHE=false``) and against the
floor (``floor_pages.py``), one wrk run per scenario (``page.lua``) with these clients'
headers:

- ``page_send``: the send page as a Japanese phone browser asks for it (``PHONE``);
- ``page_answer``: an answer page, the same browser;
- ``crawl_x`` and ``crawl_line``: the send page fetched for its preview by X's crawler
  (``Twitterbot/1.0``) and LINE's (``facebookexternalhit/1.1;line-poker/1.0``);
- ``card_png`` and ``preview_png``: the link's story card and its preview picture;
- ``page_304``: the send page reloaded with ``If-None-Match`` naming the ETag its first
  answer gave (``probe`` asks first; without an ETag the reload is a plain GET, and the
  run's notes say so).

``flood`` (issue 43, item 4): 95% readers of the link's two pages, 5% anonymous posts
to it (``flood.lua``), with the creator signed in and 3 live inboxes open (the dashboard's
server-sent events). Beside wrk, ``LiveProbe`` posts a numbered message every
``PROBE_EVERY`` seconds and times each from the moment it is sent to the moment each
open inbox receives it: the run's ``live`` figures (p50, p99, max, lost).
"""

# ruff: noqa: S310, RUF001

from __future__ import annotations

import asyncio
import contextlib
import gzip
import http.client
import http.cookiejar
import json
import re
import socket
import sqlite3
import statistics
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import asyncpg
from servers import Server, request, run_cli

PAGES_EMAIL = "pages@bench.example"
PAGES_NAME = "さくら"
ANSWERS = 20
PROBE_EVERY = 0.1  # seconds between two timed posts of the flood
LIVE_INBOXES = 3

PHONE = {
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "Accept-Language": "ja-JP,ja;q=0.9",
    "Accept-Encoding": "gzip, deflate, br",
    "User-Agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15"
    " (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
}
X_BOT = {"User-Agent": "Twitterbot/1.0", "Accept": "*/*", "Accept-Encoding": "gzip"}
LINE_BOT = {
    "User-Agent": "facebookexternalhit/1.1;line-poker/1.0",
    "Accept": "*/*",
    "Accept-Encoding": "gzip",
}
PICTURE = {**PHONE, "Accept": "image/webp,image/png,image/*;q=0.8,*/*;q=0.5"}

QUESTIONS = [
    "最近読んでよかった本はありますか？",
    "休みの日は何をしていますか？",
    "好きな食べ物を教えてください！",
    "今いちばん行きたい場所はどこ？",
    "朝型ですか、夜型ですか？",
]
REPLY = "ありがとう！最近は短編集をよく読んでいます。おすすめはまた今度書きますね。"


@dataclass(frozen=True)
class Page:
    path: str  # with {link} and {answer}
    headers: dict[str, str]
    media: str  # what a 200 carries


PAGES = {
    "page_send": Page("/{link}", PHONE, "text/html"),
    "page_answer": Page("/{link}/a/{answer}", PHONE, "text/html"),
    "crawl_x": Page("/{link}", X_BOT, "text/html"),
    "crawl_line": Page("/{link}", LINE_BOT, "text/html"),
    "card_png": Page("/{link}/card.png", PICTURE, "image/png"),
    "preview_png": Page("/{link}/preview.png", X_BOT, "image/png"),
    "page_304": Page("/{link}", PHONE, "text/html"),
}


def header_args(headers: dict[str, str]) -> list[str]:
    return [f"{name}: {value}" for name, value in headers.items()]


def page_args(fixture: Any, scenario: str) -> list[str]:
    """wrk's arguments for a page scenario (``page.lua``, ``flood.lua``)."""
    if scenario == "flood":
        return [fixture.pages_link, fixture.pages_answer, *header_args(PHONE)]
    page = PAGES[scenario]
    path = page.path.format(link=fixture.pages_link, answer=fixture.pages_answer)
    headers = dict(page.headers)
    if scenario == "page_304":
        # No ETag: the reload asks with one no page carries, and is answered in full.
        headers["If-None-Match"] = fixture.page_etag or '"none"'
    return [path, *header_args(headers)]


# --- the link and its answers -------------------------------------------------------------


def _named_and_answers(url: str, link: str) -> list[str]:
    """Name the creator (the page shows the name; ``creator create --name`` keeps it as
    the account's, not as the public name); the link's answer ids."""
    name = "UPDATE users SET display_name = $1 WHERE id = (SELECT user_id FROM links WHERE id = $2)"
    sql = "SELECT id FROM answers WHERE link_id = $1 ORDER BY id"
    if url.startswith("sqlite:///"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"), timeout=30)
        with conn:
            conn.execute(name.replace("$1", "?").replace("$2", "?"), (PAGES_NAME, link))
        rows = conn.execute(sql.replace("$1", "?"), (link,)).fetchall()
        conn.close()
        return [r[0] for r in rows]

    async def run() -> list[str]:
        conn = await asyncpg.connect(url)
        try:
            await conn.execute(name, PAGES_NAME, link)
            return [r["id"] for r in await conn.fetch(sql, link)]
        finally:
            await conn.close()

    return asyncio.run(run())


def setup(server: Server, fixture: Any) -> None:
    """The pages' creator, their link and its ``ANSWERS`` answered messages, through
    anonbox (``server``) as a creator would make them; sets the fixture's ``pages_*``."""
    made = json.loads(
        run_cli(
            fixture.url, "creator", "create", "--email", PAGES_EMAIL, "--name", PAGES_NAME,
            "--lang", "ja", "--json",
        )
    )  # fmt: skip
    link, key = made["link_id"], made["api_key"]
    for n in range(ANSWERS):
        text = f"{QUESTIONS[n % len(QUESTIONS)]}（{n + 1}）"
        body = json.dumps({"message_content": text}).encode()
        status, answer = request("POST", f"{server.base}/message/{link}", body=body)
        if status != 201:
            raise RuntimeError(f"posting to the pages' link: {status} {answer!r:.300}")
        message = answer["data"]["id"]
        body = json.dumps({"message_content": REPLY}).encode()
        status, answer = request(
            "POST", f"{server.base}/message/{link}/{message}", key=key, body=body
        )
        if status != 201:
            raise RuntimeError(f"replying on the pages' link: {status} {answer!r:.300}")
    answers = _named_and_answers(fixture.url, link)
    if len(answers) != ANSWERS:
        raise RuntimeError(f"{len(answers)} answers published, not {ANSWERS}")
    fixture.pages_link, fixture.pages_key, fixture.pages_answer = link, key, answers[0]


# --- one request by hand --------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes  # decompressed


def get(base: str, path: str, headers: dict[str, str]) -> Answer:
    req = urllib.request.Request(base + path, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as got:
            status, head, raw = got.status, dict(got.headers.items()), got.read()
    except urllib.error.HTTPError as err:
        status, head, raw = err.code, dict(err.headers.items()), err.read()
    if head.get("Content-Encoding", head.get("content-encoding")) == "gzip":
        raw = gzip.decompress(raw)
    return Answer(status, {k.lower(): v for k, v in head.items()}, raw)


def _words(body: bytes) -> list[bytes]:
    return [w for w in (PAGES_NAME.encode(), REPLY.encode()) if w in body]


def probe_page(server: Server, fixture: Any, scenario: str) -> Answer:
    """One request of a page scenario: it must succeed before wrk measures it. For
    ``page_304``, the first answer's ETag is what the reload names (``fixture.page_etag``,
    empty when the page has none)."""
    page = PAGES["page_send" if scenario in ("page_304", "flood") else scenario]
    path = page.path.format(link=fixture.pages_link, answer=fixture.pages_answer)
    got = get(server.base, path, page.headers)
    if got.status != 200 or not got.headers.get("content-type", "").startswith(page.media):
        raise RuntimeError(f"{server.app} {scenario} {path}: {got.status} {got.body[:300]!r}")
    if page.media == "text/html" and not {PAGES_NAME.encode(), REPLY.encode()} <= set(
        _words(got.body)
    ):
        raise RuntimeError(f"{server.app} {scenario}: no creator's name or answer on the page")
    if scenario == "page_304":
        fixture.page_etag = got.headers.get("etag", "")
        if fixture.page_etag:
            again = get(server.base, path, {**page.headers, "If-None-Match": fixture.page_etag})
            if again.status != 304:
                raise RuntimeError(f"{server.app} page_304: {again.status} for its own ETag")
    return got


_TITLE = re.compile(rb"<title>(.*?)</title>", re.S)


def seen(answer: Answer) -> dict[str, Any]:
    """What a person would notice of one answer, to compare the apps by: its status, its
    media type, and for a page its title and how many answers it shows, for a picture
    its size in pixels (a PNG's header)."""
    media = answer.headers.get("content-type", "").split(";")[0]
    found: dict[str, Any] = {"status": answer.status, "media": media}
    if media == "text/html":
        title = _TITLE.search(answer.body)
        found["title"] = title.group(1).decode().strip() if title else None
        found["answers"] = answer.body.count(REPLY.encode())
    elif media == "image/png":
        found["pixels"] = [int.from_bytes(answer.body[16:20]), int.from_bytes(answer.body[20:24])]
    return found


def disagreements(probes: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """Scenarios whose first request anonbox, anonbox-nocache and the floor answered
    differently (``probes``: scenario → app → ``seen``)."""
    return [
        f"{scenario}: {apps}"
        for scenario, apps in probes.items()
        if len({json.dumps(v, sort_keys=True) for v in apps.values()}) > 1
    ]


# --- the live inboxes during the flood ------------------------------------------------------


def signed_in_cookie(server: Server, fixture: Any) -> str:
    """The creator's dashboard session, as a browser holds it after the sign-in link."""
    url = run_cli(fixture.url, "signin-link", "--email", PAGES_EMAIL, "--base-url", server.base)
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with opener.open(url.strip(), timeout=30) as answer:
        answer.read()
    if not len(jar):
        raise RuntimeError("the sign-in link set no cookie")
    return "; ".join(f"{c.name}={c.value}" for c in jar)


class LiveInbox(threading.Thread):
    """One open live inbox: when each message arrived (monotonic seconds), by its text."""

    def __init__(self, server: Server, link: str, cookie: str) -> None:
        super().__init__(daemon=True)
        parts = urlsplit(server.base)
        self.conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
        self.conn.request(
            "GET",
            f"/dashboard/links/{link}/events",
            headers={"Cookie": cookie, "Accept": "text/event-stream"},
        )
        self.sock = self.conn.sock  # kept: a streamed answer's connection lets go of it
        self.answer = self.conn.getresponse()
        if self.answer.status != 200:
            raise RuntimeError(f"live inbox: {self.answer.status} {self.answer.read(300)!r}")
        self.arrived: dict[str, float] = {}
        self.connected = threading.Event()

    def run(self) -> None:
        event = ""
        try:
            for raw in self.answer:
                line = raw.decode().rstrip("\r\n")
                if line.startswith(":"):
                    self.connected.set()
                elif line.startswith("event:"):
                    event = line.split(":", 1)[1].strip()
                elif line.startswith("data:") and event == "message":
                    text = json.loads(line[5:])["message_content"]
                    self.arrived.setdefault(text, time.monotonic())
                elif not line:
                    event = ""
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            return  # closed (from the other side, or by close() under the read)

    def close(self) -> None:
        """Hang up, so the server's stream ends now rather than at its next keep-alive."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.conn.close()


class LiveProbe(threading.Thread):
    """Sends a numbered message every ``PROBE_EVERY`` s while the flood runs, each from a
    pool of senders (a slow answer does not hold back the next post): when each was sent,
    by its text."""

    def __init__(self, server: Server, link: str) -> None:
        super().__init__(daemon=True)
        self.server, self.link = server, link
        self.sent: dict[str, float] = {}
        self.failed = 0
        self.stop = threading.Event()
        self.pool = ThreadPoolExecutor(max_workers=16)

    def _post(self, text: str) -> None:
        body = json.dumps({"message_content": text}).encode()
        self.sent[text] = time.monotonic()
        status, _ = request("POST", f"{self.server.base}/message/{self.link}", body=body)
        if status != 201:
            self.failed += 1
            del self.sent[text]

    def run(self) -> None:
        n = 0
        while not self.stop.wait(PROBE_EVERY):
            n += 1
            self.pool.submit(self._post, f"いま届いた？ #{n} {time.monotonic_ns()}")
        self.pool.shutdown(wait=True)


@dataclass
class Live:
    """The live inboxes of a flood, open around a run."""

    server: Server
    fixture: Any

    def __enter__(self) -> Live:
        cookie = signed_in_cookie(self.server, self.fixture)
        self.inboxes = [
            LiveInbox(self.server, self.fixture.pages_link, cookie) for _ in range(LIVE_INBOXES)
        ]
        for inbox in self.inboxes:
            inbox.start()
        for inbox in self.inboxes:
            if not inbox.connected.wait(10):
                raise RuntimeError("a live inbox did not connect")
        self.probe = LiveProbe(self.server, self.fixture.pages_link)
        return self

    def start(self) -> None:
        """Start the timed posts (``load.measure`` calls it as the warm-up begins)."""
        self.probe.start()

    def __exit__(self, *exc: object) -> None:
        self.probe.stop.set()
        if self.probe.is_alive():
            self.probe.join()
        time.sleep(5)  # the last posts on their way: later than this counts as lost
        for inbox in self.inboxes:
            inbox.close()

    def figures(self) -> dict[str, Any]:
        """Post sent → event received, over every timed post and every open inbox (ms)."""
        delays, lost = [], 0
        for message, sent in self.probe.sent.items():
            for inbox in self.inboxes:
                arrived = inbox.arrived.get(message)
                if arrived is None:
                    lost += 1
                else:
                    delays.append((arrived - sent) * 1000)
        delays.sort()

        def pct(q: float) -> float:
            return delays[min(len(delays) - 1, int(q * len(delays)))] if delays else 0.0

        return {
            "posts": len(self.probe.sent),
            "post_failures": self.probe.failed,
            "inboxes": len(self.inboxes),
            "deliveries": len(delays),
            "lost": lost,
            "p50_ms": round(statistics.median(delays), 1) if delays else None,
            "p99_ms": round(pct(0.99), 1),
            "max_ms": round(delays[-1], 1) if delays else None,
        }
