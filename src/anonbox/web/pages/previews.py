"""How a shared link previews in chats and feeds: the Open Graph and Twitter card tags of
the public pages (``templates/preview_tags.html``), with absolute URLs (crawlers do not
resolve relative ones). The send page previews as its link card; the home page as the
app icon. Pages a person keeps private (receipts, the dashboard) carry none.

A meta tag's value is plain text: no ``<bdi>`` can isolate the creator's name and prompt
in it, so they are ``core.text.isolated`` (a right-to-left override in a name is closed
before "an anonymous message")."""

from __future__ import annotations

from dataclasses import dataclass

from anonbox.core.text import isolated
from anonbox.web.cards.draw import HEIGHT, WIDTH


@dataclass(frozen=True)
class Preview:
    title: str
    description: str
    url: str
    image: str
    image_alt: str
    width: int
    height: int
    twitter_card: str = "summary_large_image"


def send_page(site: str, link_id: str, name: str, prompt: str) -> Preview:
    """The send page ``/{link_id}``: its link card, "Send me anonymous messages"."""
    name, prompt = isolated(name), isolated(prompt)
    return Preview(
        title=f"Send {name} an anonymous message",
        description=prompt,
        url=f"{site}/{link_id}",
        image=f"{site}/{link_id}/card.png",
        image_alt=f"{name} asks: {prompt}",
        width=WIDTH,
        height=HEIGHT,
    )


def home_page(site: str) -> Preview:
    return Preview(
        title="anonbox",
        description="Share a link, get anonymous messages, answer the ones you like.",
        url=f"{site}/",
        image=f"{site}/static/icons/icon-512.png",
        image_alt="anonbox",
        width=512,
        height=512,
        twitter_card="summary",
    )
