"""The creator's whole path with the keyboard alone, in Chromium: Tab and Shift+Tab to
move, Enter and Space to act, typing to write. Sign in, hear a new message arrive (the
dashboard's aria-live region), read it, reply, like, share, delete the reply, sign out.
Every control reached on our pages shows where the focus is."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import BrowserContext, Page, expect

from tests.actions import post_message
from tests.browser.conftest import Site, Watch
from tests.browser.test_phone_sharing import FAKE_SHARE, PNG_SIGNATURE, shared

MAX_PRESSES = 120

# The focused element, as "tag#id[name]", and whether it shows a focus indicator.
FOCUSED = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return {what: 'body', name: '', action: '', visible: true};
  const style = getComputedStyle(el);
  const outlined = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2;
  const name = (el.getAttribute('aria-label') || el.innerText || el.value || el.name || '');
  return {what: el.tagName.toLowerCase() + '#' + el.id, name: name.trim(),
          action: el.getAttribute('formaction') || el.getAttribute('href') || '',
          visible: outlined || style.boxShadow !== 'none'};
}"""


def tab_to(
    page: Page,
    matches: Callable[[dict[str, str]], bool],
    *,
    back: bool = False,
    ours: bool = True,
) -> None:
    """Press Tab (Shift+Tab with ``back``) until the focused element ``matches``; on
    ``ours`` pages each element passed on the way must show that it has the focus."""
    for _ in range(MAX_PRESSES):
        page.keyboard.press("Shift+Tab" if back else "Tab")
        focused = page.evaluate(FOCUSED)
        if ours and focused["what"] != "body":
            assert focused["visible"], f"no visible focus on {focused}"
        if matches(focused):
            return
    raise AssertionError(f"{MAX_PRESSES} presses of Tab never reached it on {page.url}")


def named(name: str) -> Callable[[dict[str, str]], bool]:
    return lambda focused: focused["name"] == name


def with_formaction(ending: str) -> Callable[[dict[str, str]], bool]:
    return lambda focused: focused["action"].endswith(ending)


def with_id(element_id: str) -> Callable[[dict[str, str]], bool]:
    return lambda focused: focused["what"].endswith("#" + element_id)


def test_the_creator_path_with_the_keyboard_alone(
    site: Site, new_context: Callable[..., BrowserContext], watch: Watch
) -> None:
    watch.allow_outside_requests_from(site.provider.url)
    user = site.provider.new_user(name="Kim Keys")
    context = new_context()
    context.add_init_script("const CAN_SHARE_FILES = true;" + FAKE_SHARE)
    page = context.new_page()

    # Sign in: our sign-in page, the provider's consent form, back to the dashboard.
    page.goto(f"{site.url}/signin")
    tab_to(page, with_id("signin-google"))
    page.keyboard.press("Enter")
    page.wait_for_url(f"{site.provider.url}/**")
    tab_to(page, lambda focused: focused["what"].startswith("input"), ours=False)
    page.keyboard.type(user.sub)
    tab_to(page, named("Authorize"), ours=False)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{site.url}/dashboard**")
    link_id = page.locator("#inbox").get_attribute("data-link-id")
    assert link_id

    # A message arrives while the dashboard is open: a screen reader is told.
    live = page.locator("#live-status")
    expect(live).to_have_attribute("aria-live", "polite")
    expect(live).to_have_text("")
    with site.api() as api:
        message_id = post_message(api, link_id, "Do you read with a keyboard too?")
    expect(live).to_have_text("A new message arrived.")
    arrived = page.locator(f"#m-{message_id}")  # added live: it opens its own page
    expect(arrived.get_by_role("link")).to_have_attribute(
        "href", f"/dashboard/links/{link_id}/messages/{message_id}"
    )
    with site.api() as api:
        post_message(api, link_id, "And a second one.")
    expect(live).to_have_text("2 new messages arrived.")

    # Open it and reply: Tab to it in the list, Enter, then into its reply field.
    page.reload()
    tab_to(page, with_formaction(f"/messages/{message_id}"))
    with page.expect_navigation():
        page.keyboard.press("Enter")
    article = page.locator(f"#m-{message_id}")
    expect(article.locator(".message-content")).to_have_text("Do you read with a keyboard too?")
    tab_to(page, with_id(f"reply-{message_id}"))
    page.keyboard.type("Only with a keyboard.")
    tab_to(page, named("Send reply"))
    page.keyboard.press("Enter")  # in place: no reload, and the focus goes on to Share
    expect(article.locator(".reply-content")).to_have_text("Only with a keyboard.")
    expect(page.locator("#share")).to_be_focused()
    expect(page.locator("#toast p")).to_have_text("Reply sent. Share your answer below.")

    # Like it with Space; the button says it is pressed, and keeps the focus.
    tab_to(page, with_formaction(f"/messages/{message_id}/like"))
    page.keyboard.press("Space")
    liked = page.locator(f"#m-{message_id}").get_by_role("button", name="Unlike")
    expect(liked).to_have_attribute("aria-pressed", "true")
    expect(liked).to_be_focused()

    # Share the answer: Tab down to the pressed button, Shift+Tab back up to Share.
    tab_to(page, with_formaction(f"/messages/{message_id}/like"))
    tab_to(page, named("Share"), back=True)
    page.keyboard.press("Enter")
    [call] = shared(page)
    assert call["head"] == PNG_SIGNATURE

    # Delete the reply (above the share buttons): gone at once, back with Undo, then gone
    # for good once the toast's few seconds pass; then sign out.
    tab_to(page, named("Delete reply…"), back=True)
    page.keyboard.press("Enter")
    expect(page.locator(f"#m-{message_id} .reply-content")).to_be_hidden()
    expect(page.locator("#undo")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(f"#m-{message_id} .reply-content")).to_be_visible()
    expect(page.get_by_role("link", name="Delete reply…")).to_be_focused()  # back where it was
    page.keyboard.press("Enter")
    expect(page.locator(f"#m-{message_id} .reply-content")).to_have_count(0, timeout=10_000)
    tab_to(page, named("Sign out"))
    with page.expect_navigation():
        page.keyboard.press("Enter")
    expect(page.locator("#inbox")).to_have_count(0)
    page.goto(f"{site.url}/dashboard")
    expect(page.locator("#signin-title")).to_be_visible()  # signed out for real
