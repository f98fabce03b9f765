"""What the benchmark measures: its configuration, the scenarios and their wrk scripts, the
seeded fixture each scenario's requests point at, one run's result, the phases in which
the apps take turns, and one request of each scenario checked by hand (``probe``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pages  # the public pages' scenarios (issue 43), beside this module
from layout import DATA
from servers import Server, request

BODY = b'{"message_content": "What are you reading these days? Anything you would recommend?"}'
REPLY_BODY = b'{"message_content": "Thanks for asking! Lately a lot of short stories."}'
# Search queries on the seeded inbox (seeded_rows): a word in about two messages of three,
# found among the newest; and the number of one message, old enough that only the index
# finds it (with --quick, #42424 alone; at 1,000,000 also #424240 to #424249).
SEARCH_COMMON = "recommend"
SEARCH_RARE = "#42424"


# --- configuration ------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    warmup_s: int
    duration_s: int
    messages: int
    depth: int
    recent_elsewhere: int
    dbs: tuple[str, ...]
    rounds: int
    out: Path
    complete: bool  # both databases, default sizes and durations: the committed results
    only: frozenset[str] = frozenset()
    fresh: bool = False
    check_sql: bool = True
    command: str = ""


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    script: str


# In the order; the first six are also run by the floor.
SCENARIOS = [
    Scenario("write", "POST /message/{link_id} (anonymous write)", "post.lua"),
    Scenario("reply", "POST /message/{link_id}/{message_id} (the creator's reply)", "reply.lua"),
    Scenario("like", "PUT …/like on one hot message (creator)", "like.lua"),
    Scenario("inbox_first", "GET inbox, first page (creator)", "inbox.lua"),
    Scenario("inbox_deep", "GET inbox, a page deep in it (creator)", "inbox.lua"),
    Scenario("mixed", "90% posts, 10% creator first-page reads", "mixed.lua"),
    Scenario("search", "GET …/search, a word in most messages (creator)", "search.lua"),
    Scenario("search_rare", "GET …/search, a text in a few old messages", "search.lua"),
    # The public pages (bench/pages.py): run by anonbox, anonbox-nocache and the floor.
    Scenario("page_send", "GET /{link} with 20 answers, a Japanese phone browser", "page.lua"),
    Scenario("page_answer", "GET /{link}/a/{answer_id}, the same browser", "page.lua"),
    Scenario("crawl_x", "GET /{link} by X's crawler (Twitterbot/1.0)", "page.lua"),
    Scenario("crawl_line", "GET /{link} by LINE's crawler", "page.lua"),
    Scenario("card_png", "GET /{link}/card.png (story card)", "page.lua"),
    Scenario("preview_png", "GET /{link}/preview.png (og:image)", "page.lua"),
    Scenario("page_304", "GET /{link} again with If-None-Match", "page.lua"),
    Scenario("flood", "95% page reads, 5% posts, 3 live inboxes open", "flood.lua"),
]
SCENARIO = {s.name: s for s in SCENARIOS}
FLOOR_SCENARIOS = ("write", "reply", "like", "inbox_first", "inbox_deep", "mixed")
PAGE_SCENARIOS = tuple(pages.PAGES)  # also run by the floor, and by anonbox without its cache
# The page requests whose SQL --check-sql compares, anonbox's taken with its cache off (with
# it, a kept page sends only its version read: nothing to compare with a render's).
PAGE_SQL_SCENARIOS = ("page_send", "page_answer", "card_png")
# The requests whose SQL --check-sql compares (mixed is write and inbox_first together).
SQL_SCENARIOS = ("write", "reply", "like", "inbox_first", "inbox_deep")


@dataclass
class Fixture:
    """What the seeded database holds, for the scripts' arguments."""

    url: str
    inbox_link: str
    inbox_key: str
    write_link: str
    write_key: str
    hot_message: str
    deep_cursor: str
    reply_targets: list[str]
    seeded: int
    seed_seconds: float
    seeded_at: str
    cached: bool = False
    # The pages' link, made for each run (pages.setup), and the ETag page_304 names.
    pages_link: str = ""
    pages_key: str = ""
    pages_answer: str = ""
    page_etag: str = ""

    @property
    def targets_file(self) -> Path:
        return DATA / f"reply-targets-{'sqlite' if self.url.startswith('sqlite') else 'pg'}.txt"

    def args(self, scenario: str) -> list[str]:
        if scenario in PAGE_SCENARIOS or scenario == "flood":
            return pages.page_args(self, scenario)
        return {
            "write": [self.write_link],
            "reply": [self.inbox_link, self.inbox_key, str(self.targets_file)],
            "like": [self.inbox_link, self.hot_message, self.inbox_key],
            "inbox_first": [self.inbox_link, self.inbox_key],
            "inbox_deep": [self.inbox_link, self.inbox_key, self.deep_cursor],
            "mixed": [self.inbox_link, self.inbox_key],
            "search": [self.inbox_link, self.inbox_key, quote(SEARCH_COMMON)],
            "search_rare": [self.inbox_link, self.inbox_key, quote(SEARCH_RARE)],
        }[scenario]


@dataclass
class Result:
    scenario: str
    db: str
    app: str
    round: int
    requests: int
    duration_s: float
    errors: dict[str, int]
    latency_us: dict[str, Any]
    rss_max_mib: float
    cpu_percent: float
    db_cpu_percent: float | None
    processes: int = 1  # server processes whose CPU is counted (a supervisor and workers)
    live: dict[str, Any] | None = None  # flood: post sent → live inbox event (pages.Live)

    @property
    def rps(self) -> float:
        return self.requests / self.duration_s

    def pct_ms(self, q: str) -> float:
        return float(self.latency_us["percentiles"][q]) / 1000

    @property
    def per_cpu_second(self) -> float:
        """Requests per second of the server's CPU (its processes, not the database's)."""
        return self.rps / (self.cpu_percent / 100) if self.cpu_percent else 0.0

    @property
    def socket_errors(self) -> int:
        """wrk's connect, read, write and timeout errors."""
        return sum(v for k, v in self.errors.items() if k != "status")

    @property
    def http_errors(self) -> int:
        """Answers with a status of 400 or more (wrk's "Non-2xx or 3xx responses")."""
        return self.errors.get("status", 0)


# --- the order of the runs ----------------------------------------------------------------


# Reads first, by every app, on exactly the seeded rows; then the scenarios that add rows.
# Otherwise a later app would read a table an earlier app's writes have changed (which
# link holds the newest rows decides how PostgreSQL runs the first page; see --help).
# Within a phase the apps take turns, round after round.
Phase = list[tuple[str, tuple[str, ...]]]


def phases(db: str, pooled: bool = False) -> list[Phase]:
    reads: Phase = [
        ("anonbox", ("like", "inbox_first", "inbox_deep")),
        ("floor", ("like", "inbox_first", "inbox_deep")),
    ]
    if db == "postgresql":  # SQLite has one writer: a second worker scales nothing there
        reads.append(("anonbox-2w", ("inbox_first",)))
    return [
        reads,
        # anonbox only: the floor has no search (its SQL would be anonbox's two steps again).
        [("anonbox", ("search", "search_rare"))],
        # The public pages of a link made for them (pages.setup, before the SQL check: 20
        # rows newer than the inbox's, 20 more index entries for PostgreSQL's backward walk
        # to the inbox's first page to pass): anonbox as shipped, anonbox without its page
        # cache, the floor.
        [
            ("anonbox", PAGE_SCENARIOS),
            ("anonbox-nocache", PAGE_SCENARIOS),
            ("floor", PAGE_SCENARIOS),
        ],
        [
            ("anonbox", ("write", "reply", "mixed")),
            ("floor", ("write", "reply", "mixed")),
            ("anonbox-normal", ("write",)),
            # Each post checked against a full list of muted words (none of them in it),
            # muted for its turn only: no other app's write carries them.
            ("anonbox-muted", ("write",)),
            *([("anonbox-pooled", ("write", "reply"))] if db == "postgresql" and pooled else []),
        ],
        # Its endpoints stay, and every later write of its creator would carry deliveries.
        [("anonbox-hooked", ("write",))],
        # Last, as its posts (thousands, to the pages' link) would be newer rows than the
        # inbox link's for every later read: the flood (anonbox only: the floor has no live
        # inbox). Its posts are to the pages' creator, who has no webhooks.
        [("anonbox", ("flood",)), ("anonbox-nocache", ("flood",))],
    ]


def probe(server: Server, fixture: Fixture, scenario: str) -> dict[str, Any]:
    """One request of the scenario by hand: it must succeed before wrk measures it."""
    if scenario in PAGE_SCENARIOS or scenario == "flood":
        return pages.seen(pages.probe_page(server, fixture, scenario))
    base, link, key = server.base, fixture.inbox_link, fixture.inbox_key
    target = fixture.reply_targets[0]
    calls: list[tuple[str, str, str | None, bytes | None, int]] = {
        "write": [("POST", f"/message/{fixture.write_link}", None, BODY, 201)],
        "reply": [("POST", f"/message/{link}/{target}", key, REPLY_BODY, 201)],
        "like": [("PUT", f"/message/{link}/{fixture.hot_message}/like", key, None, 200)],
        "inbox_first": [("GET", f"/message/{link}?limit=20", key, None, 200)],
        "inbox_deep": [
            ("GET", f"/message/{link}?limit=20&cursor={fixture.deep_cursor}", key, None, 200)
        ],
        "mixed": [
            ("POST", f"/message/{link}", None, BODY, 201),
            ("GET", f"/message/{link}?limit=20", key, None, 200),
        ],
        "search": [("GET", f"/message/{link}/search?q={quote(SEARCH_COMMON)}", key, None, 200)],
        "search_rare": [("GET", f"/message/{link}/search?q={quote(SEARCH_RARE)}", key, None, 200)],
    }[scenario]
    last: dict[str, Any] = {}
    for method, path, credential, body, expected in calls:
        status, answer = request(method, base + path, key=credential, body=body)
        if status != expected:
            hint = " (a cached seed with stale credentials? try --fresh)" if status == 401 else ""
            raise RuntimeError(f"{server.app} {method} {path}: {status} {answer!r:.300}{hint}")
        last = answer["data"]
    if scenario in {"inbox_first", "inbox_deep", "search"} and len(last["items"]) != 20:
        raise RuntimeError(f"{server.app} {scenario}: {len(last['items'])} items, not 20")
    if scenario == "search_rare" and not last["items"]:
        raise RuntimeError(f"{server.app} {scenario}: nothing found")
    if scenario == "reply" and last["message_id"] != target:
        raise RuntimeError(f"{server.app} reply: {last!r}")
    return last
