"""A link under a flood, as its people see it: a flood from many addresses (through a
trusted proxy) passes the link's rate; a real sender on the send page still gets through,
their browser proving itself in a Web Worker, while a scripted sender without the proof
does not."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

from altcha.v1 import Challenge, solve_challenge
from playwright.sync_api import BrowserContext, expect

from tests.actions import inbox_texts
from tests.browser.conftest import PHONE, Screenshot, off_the_loop, own_server, signs_in_new
from tests.conftest import make_creator_in
from tests.server import Server
from tests.support.http import loopback_client

LINK_RATE = 5


flooded = own_server(
    "flooded",
    {"ANONBOX_TRUSTED_PROXIES": "127.0.0.1/32", "ANONBOX_LIMIT_LINK": f"{LINK_RATE}/60"},
)


def flood(server: Server, link_id: str, posts: int) -> list[int]:
    """Posts from ``posts`` different addresses, none of them proving anything."""
    with loopback_client(base_url=server.url, timeout=30) as api:
        return [
            api.post(
                f"/message/{link_id}",
                json={"message_content": f"flood {n}"},
                headers={"X-Forwarded-For": f"198.18.{n // 200}.{n % 200 + 1}"},
            ).status_code
            for n in range(posts)
        ]


def test_a_person_gets_through_a_flood_that_a_script_does_not(
    flooded: Server, new_context: Callable[..., BrowserContext], screenshot: Screenshot
) -> None:
    creator = off_the_loop(make_creator_in, flooded.database_url)
    statuses = flood(flooded, creator.link_id, 3 * LINK_RATE)
    assert statuses[:LINK_RATE] == [201] * LINK_RATE
    assert set(statuses[LINK_RATE:]) == {429}

    # A scripted sender that does not solve the challenge stays out.
    with loopback_client(base_url=flooded.url, timeout=30) as script:
        answer = script.post(
            f"/message/{creator.link_id}",
            json={"message_content": "a script's message"},
            headers={"X-Forwarded-For": "198.19.0.1"},
        )
    assert answer.status_code == 429
    assert answer.json()["error"]["code"] == "proof_of_work_required"

    page = new_context(viewport=PHONE).new_page()
    page.goto(f"{flooded.url}/{creator.link_id}")
    page.locator("#message").fill("A real person, in the middle of a flood")
    page.locator("#send").click()
    expect(page.locator("#status")).to_contain_text("Sent!", timeout=60_000)
    expect(page.locator("#message")).to_have_value("")
    screenshot(page, "send-page-during-a-flood")

    texts = inbox_texts(flooded.url, creator)
    assert texts[0] == "A real person, in the middle of a flood"
    assert "a script's message" not in texts
    assert len(texts) == LINK_RATE + 1


def test_without_javascript_a_flooded_link_says_so_and_keeps_the_text(
    flooded: Server, new_context: Callable[..., BrowserContext]
) -> None:
    creator = off_the_loop(make_creator_in, flooded.database_url)
    flood(flooded, creator.link_id, LINK_RATE)
    page = new_context(viewport=PHONE, java_script_enabled=False).new_page()
    page.goto(f"{flooded.url}/{creator.link_id}")
    page.locator("#message").fill("no scripts here")
    page.locator("#send").click()
    expect(page.locator("#error")).to_contain_text("flood of messages")
    expect(page.locator("#message")).to_have_value("no scripts here")
    assert "no scripts here" not in inbox_texts(flooded.url, creator)


def proved_post(server: Server, link_id: str, text: str, address: str) -> int:
    """A post that solves the challenge it is given, as any ALTCHA client would."""
    with loopback_client(base_url=server.url, timeout=30) as api:
        headers = {"X-Forwarded-For": address}
        path = f"/message/{link_id}"
        asked = api.post(path, json={"message_content": text}, headers=headers)
        assert asked.status_code == 429, asked.text
        c = asked.json()["error"]["challenge"]
        challenge = Challenge(
            c["algorithm"], c["challenge"], c["maxnumber"], c["salt"], c["signature"]
        )
        solution = solve_challenge(challenge)
        assert solution is not None
        proof = base64.b64encode(json.dumps({**c, "number": solution.number}).encode()).decode()
        return api.post(
            path, json={"message_content": text}, headers={**headers, "X-Altcha": proof}
        ).status_code


def test_the_creator_sees_the_flood_and_blocks_the_network_it_comes_from(
    flooded: Server, new_context: Callable[..., BrowserContext], screenshot: Screenshot
) -> None:
    page = new_context(viewport=PHONE).new_page()
    signs_in_new(page, flooded, "flooded")
    expect(page.locator("#inbox-title")).to_be_visible()
    expect(page.locator("#flood")).to_have_count(0)  # no flood, no notice
    link_id = page.locator("#inbox").get_attribute("data-link-id")
    assert link_id

    statuses = flood(flooded, link_id, LINK_RATE + 7)  # all from 198.18.0.0/24
    assert statuses.count(429) == 7
    page.reload()
    expect(page.locator("#flood")).to_contain_text(
        "Your link is under a flood: 7 messages refused in the last hour"
    )
    screenshot(page, "dashboard-under-a-flood")

    # The flood's messages come from one /24: blocking its network drops the rest of it.
    newest = page.locator(".message-row").first
    expect(newest.locator(".message-content")).to_have_text(f"flood {LINK_RATE - 1}")
    newest.get_by_role("link").click()
    page.wait_for_url("**/messages/*")  # loaded, with its in-place script
    page.get_by_role("link", name="Block their network…").click()  # asks first, in place
    page.locator("#confirm").click()
    expect(page.locator("#toast p")).to_contain_text("Network blocked")
    page.get_by_role("link", name="← Inbox").click()
    expect(page.locator("#inbox-title")).to_be_visible()
    assert proved_post(flooded, link_id, "more of the flood", "198.18.0.250") == 201
    assert proved_post(flooded, link_id, "someone else", "198.51.100.7") == 201
    page.reload()
    contents = page.locator(".message-row .message-content").all_text_contents()
    assert contents[0] == "someone else"
    assert "more of the flood" not in contents

    page.goto(f"{flooded.url}/dashboard/account")
    expect(page.locator("#blocked-senders li")).to_have_count(1)
    expect(page.locator("#blocked-senders li")).to_contain_text("whole network")
