"""The notifications page, as a creator uses it: add a webhook, copy its secret, see its
deliveries arrive, send a test event. The receiver is a real HTTP server on loopback
that checks every signature with the secret the page showed."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import BrowserContext, expect
from standardwebhooks import Webhook

from tests.browser.conftest import DESKTOP, Screenshot, own_server, signs_in_new
from tests.notifications.test_webhooks import Receiver, wait_for
from tests.notifications.test_webhooks import receiver as receiver  # the same fixture
from tests.server import Server
from tests.support.http import loopback_client

hooked = own_server(
    "hooked", {"ANONBOX_WEBHOOK_ALLOW_PRIVATE": "true", "ANONBOX_WEBHOOK_RETRY_SECONDS": "0.2"}
)


def test_a_creator_adds_a_webhook_and_watches_it_deliver(
    hooked: Server,
    receiver: Receiver,
    new_context: Callable[..., BrowserContext],
    screenshot: Screenshot,
) -> None:
    page = new_context(viewport=DESKTOP).new_page()
    signs_in_new(page, hooked, "hooks")
    link_id = page.locator("#inbox").get_attribute("data-link-id")
    page.get_by_role("link", name="Notifications").click()
    expect(page.locator("#webhooks")).to_contain_text("None.")

    page.get_by_label("Webhook URL").fill(receiver.url)
    page.get_by_role("button", name="Add webhook").click()
    secret = page.locator("#new-webhook-secret").inner_text()
    assert secret.startswith("whsec_")

    with loopback_client(base_url=hooked.url, timeout=30) as api:
        sent = api.post(f"/message/{link_id}", json={"message_content": "hello, webhook"})
        assert sent.status_code == 201, sent.text
    wait_for(lambda: len(receiver.received) >= 1)
    # The receiver has the event a moment before the delivery is recorded as done: the
    # creator reloads until the page says so.
    newest = page.locator("#webhooks tbody tr").first

    def delivered() -> bool:
        page.goto(f"{hooked.url}/dashboard/notifications")
        return "delivered" in newest.inner_text()

    wait_for(delivered)
    expect(page.locator("#new-webhook-secret")).to_have_count(0)  # shown once

    page.get_by_role("button", name="Send test event").click()
    wait_for(lambda: len(receiver.received) >= 2)
    page.reload()
    expect(page.locator("#webhooks tbody tr").first).to_contain_text(
        "Test event"
    )  # a label, not the event name
    screenshot(page, "dashboard-notifications")

    hook = Webhook(secret)
    types = [hook.verify(body, headers)["type"] for headers, body in receiver.received]
    assert types == ["message.created", "webhook.test"]

    page.get_by_role("button", name="Remove webhook").click()
    expect(page.locator("#webhooks")).to_contain_text("None.")


def test_a_reload_adds_no_second_webhook_and_a_refused_url_stays_in_the_form(
    hooked: Server, receiver: Receiver, new_context: Callable[..., BrowserContext]
) -> None:
    page = new_context(viewport=DESKTOP).new_page()
    signs_in_new(page, hooked, "hooks")
    page.goto(f"{hooked.url}/dashboard/notifications")

    page.get_by_label("Webhook URL").fill(receiver.url)
    page.get_by_role("button", name="Add webhook").click()
    expect(page.locator("#new-webhook-secret")).to_have_count(1)
    page.reload()  # the browser sends the form again
    expect(page.locator("#webhook-problem")).to_contain_text("already have a webhook")
    expect(page.locator("#webhooks li.webhook")).to_have_count(1)

    page.get_by_label("Webhook URL").fill("ftp://example.org/hook")
    page.get_by_role("button", name="Add webhook").click()
    expect(page.locator("#webhook-problem")).to_contain_text("http:// or https://")
    expect(page.get_by_label("Webhook URL")).to_have_value("ftp://example.org/hook")
    expect(page.locator("#webhooks li.webhook")).to_have_count(1)
