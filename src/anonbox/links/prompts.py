"""What a link asks senders when its creator has not written it: the default prompt and
the presets the dashboard offers, each in the creator's language.

A prompt is stored as text, in the language it was chosen in: a link made by a Japanese
browser asks in Japanese, and keeps asking so if the creator later switches to English
(they wrote it, in effect, by choosing it). The texts are English msgids in the gettext
catalogs (``core.i18n``); a language without a translation gets the English text.
"""

from __future__ import annotations

from anonbox.core.i18n import N_, gettext, use_locale

DEFAULT_PROMPT = N_("Send me anonymous messages!")

# The presets a creator can pick instead of writing a prompt, by a stable key (what a
# form sends): the default first.
PRESETS: dict[str, str] = {
    "default": DEFAULT_PROMPT,
    "anything": N_("Ask me anything!"),
    "honest": N_("What do you really think of me? Be honest."),
    "secret": N_("Tell me a secret. I will never know it was you."),
    "advice": N_("Need advice? Ask me anonymously."),
}


def translated(text: str, language: str | None) -> str:
    """``text`` (an English msgid) in ``language`` (English when None or unknown)."""
    with use_locale(language):
        return gettext(text)


def default_prompt(language: str | None) -> str:
    return translated(DEFAULT_PROMPT, language)


def preset_prompt(key: str, language: str | None) -> str | None:
    """The preset ``key`` in ``language``; None for a key that is no preset."""
    text = PRESETS.get(key)
    return None if text is None else translated(text, language)


def presets(language: str | None) -> list[tuple[str, str]]:
    """Every preset as (key, text in ``language``), in the order they are offered."""
    return [(key, translated(text, language)) for key, text in PRESETS.items()]
