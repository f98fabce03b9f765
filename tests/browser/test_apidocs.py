"""``/docs``: Swagger UI renders the API from anonbox alone, under the pages' CSP."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

from playwright.sync_api import BrowserContext, expect

from tests.browser.conftest import Screenshot, Site, Watch


def test_docs_list_the_operations_without_leaving_the_machine(
    site: Site,
    new_context: Callable[..., BrowserContext],
    watch: Watch,
    screenshot: Screenshot,
) -> None:
    page = new_context().new_page()
    opened = page.goto(f"{site.url}/docs")
    assert opened is not None
    assert opened.ok
    policy = opened.headers["content-security-policy"]  # the pages' strict policy, unchanged
    assert "script-src 'self';" in policy
    assert "unsafe" not in policy

    send = page.locator(".opblock-summary", has_text="Send an anonymous message to a link")
    expect(send).to_be_visible()
    expect(send.locator(".opblock-summary-path")).to_have_text("/message/{link_id}")
    expect(page.locator(".opblock-tag", has_text="messages")).to_be_visible()

    send.click()  # expanding an operation renders its schemas and examples: more UI, more CSP
    expect(page.locator(".opblock.is-open .responses-table").first).to_be_visible()
    page.locator(".opblock.is-open .opblock-summary").click()
    screenshot(page, "api-docs", full_page=False)  # Swagger UI is very long

    assert not watch.outside_requests, watch.outside_requests  # not even attempted
    hosts = {urlsplit(url).netloc for url in watch.requests}
    assert hosts == {urlsplit(site.url).netloc}, hosts
    assert f"{site.url}/openapi.json" in watch.requests
