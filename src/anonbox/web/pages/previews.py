"""How a shared link previews in chats and feeds: the Open Graph and Twitter card tags of
the public pages (``templates/preview_tags.html``), with absolute URLs (crawlers do not
resolve relative ones). The send page previews as its link, an answer page as its
question and answer, each with its landscape preview picture (1200 by 630, what X's
``summary_large_image``, LINE and Discord show whole; the 1080 by 1920 story card is for
stories); the home page as the app icon. Pages a person keeps private (receipts, the
dashboard) carry none.

A link's previews speak the link's language (``PublicLink.language``: its setting, else
its creator's), whoever asks: a crawler fetches a page once, without the reader's
language, and what it keeps is shown to everyone the link is posted to, so it reads as
the creator would say it (docs/decisions.md, issue 41). The page itself stays in the
visitor's language.

A meta tag's value is plain text: no ``<bdi>`` can isolate the creator's name and texts
in it, so they are ``core.text.isolated`` (a right-to-left override in a name is closed
before "an anonymous message"). Long texts are shortened, by whole graphemes, to what a
preview shows."""

from __future__ import annotations

from dataclasses import dataclass

import regex

from anonbox.core.i18n import DEFAULT_LANGUAGE, current_language, gettext, use_locale
from anonbox.core.text import isolated
from anonbox.links.schemas import PublicLink

# The landscape preview picture (web.cards draws it; ``/…/preview.png``).
PREVIEW_WIDTH, PREVIEW_HEIGHT = 1200, 630
# og:locale for each language anonbox speaks (language_TERRITORY, as Open Graph asks).
OG_LOCALES: dict[str, str] = {
    "en": "en_US",
    "ja": "ja_JP",
    "ko": "ko_KR",
    "id": "id_ID",
    "es": "es_ES",
}
# How much of a text a preview keeps, in graphemes: a description shows about two lines,
# an alt text is read whole (X takes up to 420 characters).
_DESCRIBED_QUESTION = 90
_DESCRIBED_ANSWER = 110
_ALT_QUESTION = 140
_ALT_ANSWER = 180
_GRAPHEME = regex.compile(r"\X")


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
    locale: str = "en_US"  # og:locale


def og_locale(language: str) -> str:
    return OG_LOCALES.get(language, OG_LOCALES[DEFAULT_LANGUAGE])


def shortened(text: str, graphemes: int) -> str:
    """``text`` on one line, cut to at most ``graphemes`` grapheme clusters with "…"
    (never inside an emoji sequence or a combined letter)."""
    text = " ".join(text.split())
    clusters = _GRAPHEME.findall(text)
    if len(clusters) <= graphemes:
        return text
    return "".join(clusters[: graphemes - 1]).rstrip() + "…"


def _name(link: PublicLink) -> str:
    """The creator's name as the link's language calls them (inside ``use_locale``)."""
    return isolated(link.creator_name if link.creator_named else gettext("The creator"))


def send_page(site: str, link: PublicLink) -> Preview:
    """The send page ``/{link_id}``: "Send … an anonymous message", in the link's language."""
    with use_locale(link.language):
        name, prompt = _name(link), isolated(link.prompt)
        return Preview(
            title=gettext("Send %(name)s an anonymous message", name=name),
            description=prompt,
            url=f"{site}/{link.id}",
            image=f"{site}/{link.id}/preview.png",
            image_alt=gettext("%(name)s asks: %(prompt)s", name=name, prompt=prompt),
            width=PREVIEW_WIDTH,
            height=PREVIEW_HEIGHT,
            locale=og_locale(link.language),
        )


def answer_page(site: str, link: PublicLink, answer_id: str, question: str, answer: str) -> Preview:
    """An answer's page ``/{link_id}/a/{answer_id}``: the question and the creator's
    answer, in the link's language."""
    with use_locale(link.language):
        name = _name(link)
        return Preview(
            title=gettext("%(name)s replied to an anonymous message", name=name),
            description=gettext(
                "“%(question)s” — %(answer)s",
                question=isolated(shortened(question, _DESCRIBED_QUESTION)),
                answer=isolated(shortened(answer, _DESCRIBED_ANSWER)),
            ),
            url=f"{site}/{link.id}/a/{answer_id}",
            image=f"{site}/{link.id}/a/{answer_id}/preview.png",
            image_alt=gettext(
                "Anonymous message: “%(question)s”. %(name)s replied: “%(answer)s”",
                question=isolated(shortened(question, _ALT_QUESTION)),
                name=name,
                answer=isolated(shortened(answer, _ALT_ANSWER)),
            ),
            width=PREVIEW_WIDTH,
            height=PREVIEW_HEIGHT,
            locale=og_locale(link.language),
        )


def home_page(site: str) -> Preview:
    """The home page, in the visitor's language (it is nobody's)."""
    return Preview(
        title="anonbox",
        description=gettext("Share a link, get anonymous messages, answer the ones you like."),
        url=f"{site}/",
        image=f"{site}/static/icons/icon-512.png",
        image_alt="anonbox",
        width=512,
        height=512,
        twitter_card="summary",
        locale=og_locale(current_language()),
    )
