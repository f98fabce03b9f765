"""GET /metrics: Prometheus text, counted by route template, with the database's gauges.

Counts are read as differences around the requests a test makes: the server is shared by
the session, and nothing else talks to it while one test runs.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from anonbox.core.database import connect
from tests.actions import assert_error, post_message
from tests.conftest import Creator, make_creator_in
from tests.server import Server
from tests.support.http import loopback_client
from tests.support.metrics import Labels, scrape, value
from tests.support.servers import own_server

MESSAGE_ROUTE = "/message/{link_id}"
REPLY_ROUTE = "/message/{link_id}/{message_id}"


def requests_counted(
    samples: dict[tuple[str, Labels], float], route: str, method: str, status: int
) -> float:
    return value(
        samples, "anonbox_http_requests_total", route=route, method=method, status=str(status)
    )


def timed_counted(
    samples: dict[tuple[str, Labels], float], route: str, method: str, status: int
) -> float:
    name = "anonbox_http_request_duration_seconds_count"
    return value(samples, name, route=route, method=method, status=str(status))


def test_metrics_are_prometheus_text_outside_the_api_description(api: httpx.Client) -> None:
    response = api.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    assert response.headers["x-request-id"]
    families = {family.name for family in text_string_to_metric_families(response.text)}
    assert {
        "anonbox_http_requests",
        "anonbox_http_request_duration_seconds",
        "anonbox_rate_limited",
        "anonbox_workers",
    } <= families
    assert "/metrics" not in api.get("/openapi.json").json()["paths"]


def test_requests_are_counted_by_route_template_method_and_status(
    api: httpx.Client, creator: Creator
) -> None:
    before = scrape(api)
    message_id = post_message(api, creator.link_id, "counted")
    post_message(api, creator.link_id, "counted again")
    listed = api.get(f"/message/{creator.link_id}", headers=creator.headers)
    assert listed.status_code == 200, listed.text
    assert_error(api.get(f"/message/{creator.link_id}/{message_id}"), 404)  # unanswered
    after = scrape(api)

    for route, method, status, count in [
        (MESSAGE_ROUTE, "POST", 201, 2),
        (MESSAGE_ROUTE, "GET", 200, 1),
        (REPLY_ROUTE, "GET", 404, 1),
    ]:
        moved = requests_counted(after, route, method, status)
        assert moved - requests_counted(before, route, method, status) == count, route
        timed = timed_counted(after, route, method, status)
        assert timed - timed_counted(before, route, method, status) == count, route
    # The template, never the path: no link or message id becomes a label.
    text = api.get("/metrics").text
    assert creator.link_id not in text
    assert message_id not in text


def unknown_path() -> str:
    """A path no route matches (one segment alone could be a link's public page)."""
    return f"/no/such-route/{uuid.uuid4().hex}/here"


def test_a_path_that_is_no_route_is_counted_as_unmatched(api: httpx.Client) -> None:
    before = scrape(api)
    unknown = unknown_path()
    assert_error(api.get(unknown), 404)
    assert_error(api.get(f"{unknown}/deeper"), 404)
    after = scrape(api)
    count = requests_counted(after, "unmatched", "GET", 404)
    assert count - requests_counted(before, "unmatched", "GET", 404) == 2
    assert unknown not in api.get("/metrics").text


def test_every_database_gauge_is_exported(api: httpx.Client, server: Server) -> None:
    async def keys() -> list[str]:
        db = await connect(server.database_url)
        try:
            return list(db.stats())
        finally:
            await db.close()

    samples = scrape(api)
    for key in asyncio.run(keys()):
        assert (f"anonbox_db_{key}", frozenset()) in samples, key
    assert value(samples, "anonbox_db_connections_max") >= 1
    in_use = value(samples, "anonbox_db_connections_in_use")
    assert 0 <= in_use <= value(samples, "anonbox_db_connections_max")
    assert value(samples, "anonbox_workers") == 1


# Every background job the service runs on a server like the tests' (which can mail, and does
# not federate), each declared by its package's tasks.py and run by wiring's one runner: a
# declaration lost, or a runner that leaves a job out, leaves its series missing here.
JOBS = {
    "account erasure",
    "purging expired receipts",
    "resuming ended pauses",
    "federating changes",
    "forgetting spent signatures",
    "purging old filtered messages",
}
DELIVERIES = {
    "the outbox relay",
    "Webhook deliveries",
    "Web Push deliveries",
    "E-mail notice deliveries",
    "Posted answer deliveries",
    "Sign-in mail deliveries",
}
LAST_RUN = "anonbox_job_last_run_timestamp_seconds"
JOB_WAIT_SECONDS = 30.0


def last_runs(samples: dict[tuple[str, Labels], float]) -> dict[str, float]:
    return {
        dict(labels)["job"]: seen for (name, labels), seen in samples.items() if name == LAST_RUN
    }


def test_every_background_job_runs_and_shows_its_last_run_and_backlog(api: httpx.Client) -> None:
    deadline = time.monotonic() + JOB_WAIT_SECONDS
    first = last_runs(scrape(api))
    while not set(first) >= (JOBS | DELIVERIES) and time.monotonic() < deadline:
        time.sleep(0.1)
        first = last_runs(scrape(api))
    assert sorted((JOBS | DELIVERIES) - set(first)) == []
    # The deliveries look for work twice a second: their last run moves on.
    later = first
    while any(later[job] <= first[job] for job in DELIVERIES) and time.monotonic() < deadline:
        time.sleep(0.1)
        later = last_runs(scrape(api))
    assert [job for job in DELIVERIES if later[job] <= first[job]] == []
    samples = scrape(api)
    for job in DELIVERIES:  # what each found waiting at its last look
        assert ("anonbox_job_backlog", frozenset({("job", job)})) in samples, job
        assert value(samples, "anonbox_job_backlog", job=job) >= 0


# --- a server with small limits, behind a trusted proxy, that lets few clients scrape ---------

SCRAPER = "192.0.2.9"  # the only network allowed to read /metrics on that server


@pytest.fixture(scope="module")
def guarded(
    database_url_factory: Callable[[str], str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    env = {
        "ANONBOX_TRUSTED_PROXIES": "127.0.0.1/32",
        "ANONBOX_LIMIT_SENDER_LINK": "2/60",
        "ANONBOX_METRICS_ALLOW": "192.0.2.0/24",
    }
    logs = tmp_path_factory.mktemp("metrics-logs")
    server = Server(database_url_factory("sqlite"), logs / "guarded.log", env=env).start()
    yield server
    server.stop()


def scraped_by(api: httpx.Client, address: str) -> dict[tuple[str, Labels], float]:
    response = api.get("/metrics", headers={"X-Forwarded-For": address})
    assert response.status_code == 200, response.text
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def test_rate_limited_answers_are_counted_by_route(guarded: Server) -> None:
    creator = make_creator_in(guarded.database_url)
    sender = {"X-Forwarded-For": f"198.51.100.{uuid.uuid4().int % 250 + 1}"}
    with loopback_client(base_url=guarded.url, timeout=30) as api:
        before = scraped_by(api, SCRAPER)
        statuses = []
        for _ in range(5):
            sent = api.post(
                f"/message/{creator.link_id}", json={"message_content": "hi"}, headers=sender
            )
            statuses.append(sent.status_code)
        assert statuses == [201, 201, 429, 429, 429]
        after = scraped_by(api, SCRAPER)

    def limited(samples: dict[tuple[str, Labels], float]) -> float:
        return value(samples, "anonbox_rate_limited_total", route=MESSAGE_ROUTE)

    assert limited(after) - limited(before) == 3
    assert (
        requests_counted(after, MESSAGE_ROUTE, "POST", 429)
        - requests_counted(before, MESSAGE_ROUTE, "POST", 429)
        == 3
    )


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({}, id="loopback-itself"),
        pytest.param({"X-Forwarded-For": "203.0.113.5"}, id="a-client-through-the-proxy"),
    ],
)
def test_metrics_answer_only_the_allowed_networks(guarded: Server, headers: dict[str, Any]) -> None:
    with loopback_client(base_url=guarded.url, timeout=30) as api:
        refused = api.get("/metrics", headers=headers)
        unknown = api.get(unknown_path(), headers=headers)
    assert refused.status_code == 404
    assert refused.json()["error"] == unknown.json()["error"]  # as if there were no /metrics
    assert "anonbox_" not in refused.text


metrics_off = own_server("metrics_off", {"ANONBOX_METRICS": "off"}, backends=("sqlite",))


def test_metrics_can_be_switched_off(metrics_off: Server) -> None:
    with loopback_client(base_url=metrics_off.url, timeout=30) as api:
        assert api.get("/healthz").status_code == 200
        assert_error(api.get("/metrics"), 404, "not_found")
