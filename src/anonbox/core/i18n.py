"""What a person reads, in their language, and when things happened, in their words.

Catalogs are gettext ``.po`` files under ``anonbox/locale/<lang>/LC_MESSAGES/``, compiled to
``.mo`` by ``make compile-messages`` (``make install`` runs it; the Docker image too).
Strings are marked with ``gettext``/``ngettext`` (aliased ``_``) in Python and with
``_()``, ``ngettext()`` and ``{% trans %}`` in templates: whole sentences, named
placeholders (``_("Hello %(name)s", name=…)``), plural forms through ``ngettext`` with
``num``. Module-level texts are marked with ``N_`` and translated where they are shown.

The language and time zone of what is being rendered live in context variables: a page
request sets them (``web.infra.locale``) from the creator's settings on their pages, or from the
switcher's cookie and ``Accept-Language`` on public pages; an e-mail sets them from its
recipient's settings with ``use_locale``. JSON ``message`` texts never pass through here:
they stay English, and clients translate ``error.code``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from datetime import UTC, datetime, tzinfo
from functools import cache
from pathlib import Path
from typing import Any
from zoneinfo import TZPATH, ZoneInfo, ZoneInfoNotFoundError, available_timezones

from babel import Locale, UnknownLocaleError
from babel.dates import format_date, format_datetime, format_timedelta
from babel.numbers import format_decimal
from babel.support import NullTranslations, Translations

LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
DEFAULT_LANGUAGE = "en"
# The languages anonbox speaks, with their own names (what the switcher shows).
LANGUAGES: dict[str, str] = {
    "en": "English",
    "ja": "日本語",
    "ko": "한국어",
    "id": "Bahasa Indonesia",
    "es": "Español",
}
DEFAULT_TIME_ZONE = "UTC"
# Older than this, a time reads as a date rather than "… ago".
_RELATIVE_FOR_SECONDS = 7 * 24 * 3600

_language: ContextVar[str] = ContextVar("anonbox_language", default=DEFAULT_LANGUAGE)
_time_zone: ContextVar[str] = ContextVar("anonbox_time_zone", default=DEFAULT_TIME_ZONE)


def N_(message: str) -> str:
    """Mark a text for extraction; translated later, where it is shown."""
    return message


@cache
def translations(language: str) -> NullTranslations:
    """The compiled catalog of ``language`` (English: the texts as written)."""
    if language not in LANGUAGES or language == DEFAULT_LANGUAGE:
        return NullTranslations()
    return Translations.load(str(LOCALE_DIR), [language], domain="messages")


def current_language() -> str:
    return _language.get()


def current_time_zone() -> str:
    return _time_zone.get()


def set_locale(language: str, time_zone: str | None = None) -> None:
    """For the rest of this request (its task): read in ``language``, times in ``time_zone``."""
    _language.set(language if language in LANGUAGES else DEFAULT_LANGUAGE)
    if time_zone is not None:
        _time_zone.set(valid_time_zone(time_zone) or DEFAULT_TIME_ZONE)


@contextlib.contextmanager
def use_locale(language: str | None, time_zone: str | None = None) -> Iterator[None]:
    """Within the block, texts in ``language`` and times in ``time_zone`` (an e-mail to a
    creator, rendered outside any request of theirs)."""
    lang = _language.set(language if language in LANGUAGES else DEFAULT_LANGUAGE)
    zone = _time_zone.set(valid_time_zone(time_zone or "") or DEFAULT_TIME_ZONE)
    try:
        yield
    finally:
        _language.reset(lang)
        _time_zone.reset(zone)


def gettext(message: str, **variables: Any) -> str:
    text = translations(_language.get()).gettext(message)
    return text % variables if variables else text


def ngettext(singular: str, plural: str, n: int, /, **variables: Any) -> str:
    """``n`` picks the plural form and fills ``%(num)d`` (unless ``num`` is given, say as
    a formatted number), with any other placeholders."""
    text = translations(_language.get()).ngettext(singular, plural, n)
    return text % {"num": n, **variables}


_ = gettext


def negotiate(accept_language: str | None) -> str:
    """The best of LANGUAGES for an ``Accept-Language`` header (English if none fits)."""
    if not accept_language:
        return DEFAULT_LANGUAGE
    wanted: list[tuple[float, int, str]] = []
    for position, part in enumerate(accept_language.split(",")[:20]):
        tag, _sep, params = part.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            name, _eq, value = param.strip().partition("=")
            if name == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if tag and quality > 0:
            wanted.append((-quality, position, tag.strip().lower()))
    for _q, _p, tag in sorted(wanted):
        primary = tag.split("-")[0]
        if primary == "in":  # the old code for Indonesian
            primary = "id"
        if primary in LANGUAGES:
            return primary
    return DEFAULT_LANGUAGE


_REGIONS = (
    "Africa/",
    "America/",
    "Antarctica/",
    "Asia/",
    "Atlantic/",
    "Australia/",
    "Europe/",
    "Indian/",
    "Pacific/",
)


@cache
def time_zones() -> tuple[str, ...]:
    """The IANA zones the account page offers, sorted: those of every country in the time zone
    database (``zone.tab``) where the machine has it, else every zone of a region,
    never the old aliases (``US/Eastern``, ``Etc/GMT+5``); and UTC."""
    known = available_timezones()
    for directory in TZPATH:
        table = Path(directory) / "zone.tab"
        if table.is_file():
            lines = table.read_text(encoding="utf-8").splitlines()
            names = {line.split("\t")[2] for line in lines if line and not line.startswith("#")}
            return tuple(sorted((names & known) | {"UTC"}))
    return tuple(sorted({z for z in known if z.startswith(_REGIONS)} | {"UTC"}))


def valid_time_zone(name: str) -> str | None:
    if name == DEFAULT_TIME_ZONE:
        return name
    if not name or len(name) > 64 or name not in time_zones():
        return None
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None
    return name


def _zone(name: str) -> tzinfo:
    """UTC needs no time zone database (a machine may have none)."""
    return UTC if name == DEFAULT_TIME_ZONE else ZoneInfo(name)


def number(value: int) -> str:
    """``1,234`` as the current language writes it."""
    return format_decimal(value, locale=_locale())


def _locale() -> Locale:
    try:
        return Locale.parse(_language.get())
    except (UnknownLocaleError, ValueError):
        return Locale.parse(DEFAULT_LANGUAGE)


def parse_time(iso: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def exact_time(iso: str) -> str:
    """The moment in full, in the current time zone and language (``title`` of ``<time>``)."""
    moment = parse_time(iso)
    if moment is None:
        return iso
    zone = _zone(_time_zone.get())
    return format_datetime(moment, "long", tzinfo=zone, locale=_locale())


def relative_time(iso: str, now: datetime | None = None) -> str:
    """ "3 minutes ago" (or "in 2 days") in the current language; a date when long ago."""
    moment = parse_time(iso)
    if moment is None:
        return iso
    now = now or datetime.now(UTC)
    delta = moment - now
    if abs(delta.total_seconds()) > _RELATIVE_FOR_SECONDS:
        zone = _zone(_time_zone.get())
        return format_date(moment.astimezone(zone), "medium", locale=_locale())
    if abs(delta.total_seconds()) < 45:
        return gettext("just now")
    return format_timedelta(delta, add_direction=True, threshold=1, format="long", locale=_locale())
