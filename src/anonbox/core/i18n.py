"""What a person reads, in their language, and when things happened, in their words.

Catalogs are gettext ``.po`` files under ``anonbox/locale/<lang>/LC_MESSAGES/``, compiled to
``.mo`` by ``make compile-messages`` (``make install`` runs it; the Docker image too).
Strings are marked with ``gettext``/``ngettext`` (aliased ``_``) in Python and with
``_()``, ``ngettext()`` and ``{% trans %}`` in templates: whole sentences, named
placeholders (``_("Hello %(name)s", name=…)``), plural forms through ``ngettext`` with
``num``. Module-level texts are marked with ``N_`` and translated where they are shown.

The language and time zone of what is being rendered live in context variables: a page
request sets them (``web.infra.locale``) from the creator's settings on their pages, or from the
switcher's cookie and ``Accept-Language`` on public pages, whose times are in the zone of
the link's creator; an e-mail sets them from its recipient's settings with ``use_locale``.
Times read as people write them (``exact_time``): CLDR's forms, no seconds, "UTC" only
in UTC. JSON ``message`` texts never pass through here: they stay English, and clients
translate ``error.code``.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from contextvars import ContextVar
from datetime import UTC, datetime, timedelta, tzinfo
from functools import cache
from pathlib import Path
from typing import Any
from zoneinfo import TZPATH, ZoneInfo, ZoneInfoNotFoundError, available_timezones

from babel import Locale, UnknownLocaleError
from babel.dates import format_datetime, format_skeleton, format_timedelta
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
# False on a creator's page while their account has no zone yet (UTC stands in).
_zone_chosen: ContextVar[bool] = ContextVar("anonbox_zone_chosen", default=True)


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


def time_zone_chosen() -> bool:
    """Whether the current zone is one the reader has (False: UTC stands in for none)."""
    return _zone_chosen.get()


def set_locale(language: str, time_zone: str | None = None, *, zone_chosen: bool = True) -> None:
    """For the rest of this request (its task): read in ``language``, times in ``time_zone``."""
    _language.set(language if language in LANGUAGES else DEFAULT_LANGUAGE)
    if time_zone is not None:
        _time_zone.set(valid_time_zone(time_zone) or DEFAULT_TIME_ZONE)
        _zone_chosen.set(zone_chosen)


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


def time_zone_choices() -> list[tuple[str, str]]:
    """Each of ``time_zones`` with what the picker shows beside it, which typing also
    finds: its name with spaces, and its offset now ("Asia/Tokyo", "Asia/Tokyo (UTC+9)")."""
    now = datetime.now(UTC)
    choices = []
    for name in time_zones():
        offset = now.astimezone(_zone(name)).utcoffset() or timedelta(0)
        minutes = int(offset.total_seconds()) // 60
        sign = "+" if minutes >= 0 else "-"
        hours, rest = divmod(abs(minutes), 60)
        shown = f"UTC{sign}{hours}" + (f":{rest:02d}" if rest else "") if minutes else "UTC"
        label = name.replace("_", " ")
        choices.append((name, label if name == DEFAULT_TIME_ZONE else f"{label} ({shown})"))
    return choices


def valid_time_zone(name: str) -> str | None:
    """The IANA zone ``name`` names, or None: its exact name, or what a person types without
    the suggestions (no JavaScript): the name in any case, or its city alone with spaces
    ("seoul", "New York", "tokyo" → Asia/Tokyo) where only one zone has that city."""
    name = name.strip()
    if name == DEFAULT_TIME_ZONE:
        return name
    if not name or len(name) > 64:
        return None
    found = name if name in time_zones() else _typed_zones().get(name.casefold().replace(" ", "_"))
    if found is None:
        return None
    try:
        ZoneInfo(found)
    except (ZoneInfoNotFoundError, ValueError):
        return None
    return found


@cache
def _typed_zones() -> dict[str, str]:
    """Each offered zone under its name and its city, case folded; a city two zones share
    (none today, but the database may grow one) names neither."""
    typed: dict[str, str] = {}
    cities: dict[str, list[str]] = {}
    for zone in time_zones():
        typed[zone.casefold()] = zone
        cities.setdefault(zone.rsplit("/", 1)[-1].casefold(), []).append(zone)
    for city, zones in cities.items():
        if len(zones) == 1:
            typed.setdefault(city, zones[0])
    return typed


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


def _time_pattern(locale: Locale) -> str:
    """The language's short time (hours and minutes, never seconds), its day period in full:
    CLDR's short Korean one is "AM"/"PM", where Koreans write 오전/오후."""
    pattern = str(locale.time_formats["short"].pattern)
    return pattern if "'" in pattern else re.sub("a+", "aaaa", pattern)


def _date_and_time(moment: datetime, zone: tzinfo, locale: Locale, now: datetime) -> str:
    """The day with its weekday (its year only when not ``now``'s) and the time, joined as
    the language joins them."""
    local = moment.astimezone(zone)
    this_year = local.year == now.astimezone(zone).year
    skeleton = "MMMEd" if this_year else "yMMMEd"
    day = format_skeleton(skeleton, local, tzinfo=zone, locale=locale)
    time = format_datetime(local, _time_pattern(locale), tzinfo=zone, locale=locale)
    glue = str(locale.datetime_formats["short"])
    # CLDR puts a narrow no-break space before "PM"; browsers' Intl (dashboard.js) a
    # plain one: the same text on both sides.
    return glue.replace("{1}", day).replace("{0}", time).replace("\u202f", " ")


def exact_time(iso: str, now: datetime | None = None) -> str:
    """The moment as people read it, in the current time zone and language: ``Sun, Nov
    29, 7:32 PM``, ``11月29日(日) 19:32``, ``11월 29일 (일) 오후 7:32``; the year only
    when not this year's; no seconds; "UTC" after it only when the zone is UTC (the
    reader's own zone needs no name). Babel's (CLDR's) patterns for each language."""
    moment = parse_time(iso)
    if moment is None:
        return iso
    name = _time_zone.get()
    shown = _date_and_time(moment, _zone(name), _locale(), now or datetime.now(UTC))
    return f"{shown} UTC" if name == DEFAULT_TIME_ZONE else shown


def relative_time(iso: str, now: datetime | None = None) -> str:
    """ "3 minutes ago" (or "in 2 days") in the current language; a date when long ago."""
    moment = parse_time(iso)
    if moment is None:
        return iso
    now = now or datetime.now(UTC)
    delta = moment - now
    if abs(delta.total_seconds()) > _RELATIVE_FOR_SECONDS:
        zone = _zone(_time_zone.get())
        local = moment.astimezone(zone)
        this_year = local.year == now.astimezone(zone).year
        return format_skeleton(
            "MMMd" if this_year else "yMMMd", local, tzinfo=zone, locale=_locale()
        )
    if abs(delta.total_seconds()) < 45:
        return gettext("just now")
    return format_timedelta(delta, add_direction=True, threshold=1, format="long", locale=_locale())
