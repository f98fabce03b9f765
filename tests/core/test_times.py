"""Times as people read them (``core.i18n.exact_time``): one instant in each language and
zone, in the language's own form, without seconds, with "UTC" only when the zone is UTC,
and the year only when it is not this year's. The pages that show them are tested in
tests/web/test_times.py."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from anonbox.core.i18n import exact_time, relative_time, time_zone_choices, use_locale

INSTANT = "2026-11-29T10:32:34.000Z"  # a Sunday
THIS_YEAR = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
NEXT_YEAR = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)

EXPECTED = {
    ("en", "Asia/Tokyo"): "Sun, Nov 29, 7:32 PM",
    ("ja", "Asia/Tokyo"): "11月29日(日) 19:32",
    ("ko", "Asia/Seoul"): "11월 29일 (일) 오후 7:32",
    ("id", "Asia/Jakarta"): "Min, 29 Nov 17.32",
    ("es", "Asia/Tokyo"): "dom, 29 nov, 19:32",
    ("en", "UTC"): "Sun, Nov 29, 10:32 AM UTC",
    ("ja", "UTC"): "11月29日(日) 10:32 UTC",
    ("ko", "UTC"): "11월 29일 (일) 오전 10:32 UTC",
    ("id", "UTC"): "Min, 29 Nov 10.32 UTC",
    ("es", "UTC"): "dom, 29 nov, 10:32 UTC",
}


@pytest.mark.parametrize(("language", "zone"), sorted(EXPECTED))
def test_an_instant_reads_in_the_languages_form_and_the_zone(language: str, zone: str) -> None:
    with use_locale(language, zone):
        shown = exact_time(INSTANT, now=THIS_YEAR)
    assert shown == EXPECTED[language, zone]
    assert ":34" not in shown  # no seconds
    assert ".34" not in shown
    assert ("UTC" in shown) == (zone == "UTC")


@pytest.mark.parametrize(
    ("language", "zone", "expected"),
    [
        ("en", "Asia/Tokyo", "Sun, Nov 29, 2026, 7:32 PM"),
        ("ja", "Asia/Tokyo", "2026年11月29日(日) 19:32"),
        ("ko", "Asia/Seoul", "2026년 11월 29일 (일) 오후 7:32"),
        ("id", "Asia/Jakarta", "Min, 29 Nov 2026 17.32"),
        ("es", "UTC", "dom, 29 nov 2026, 10:32 UTC"),
    ],
)
def test_the_year_shows_only_when_it_is_not_this_years(
    language: str, zone: str, expected: str
) -> None:
    with use_locale(language, zone):
        assert exact_time(INSTANT, now=NEXT_YEAR) == expected


def test_the_year_is_the_zones() -> None:
    """New Year's Eve in UTC is already next year in Tokyo: a time then is this year's there."""
    eve = datetime(2026, 12, 31, 16, 0, tzinfo=UTC)  # 2027-01-01 01:00 in Tokyo
    with use_locale("ja", "Asia/Tokyo"):
        assert exact_time("2027-01-01T03:00:00Z", now=eve) == "1月1日(金) 12:00"
    with use_locale("ja", "UTC"):
        assert exact_time("2027-01-01T03:00:00Z", now=eve) == "2027年1月1日(金) 3:00 UTC"


def test_a_date_long_ago_has_its_year_only_when_another_years() -> None:
    with use_locale("ko", "Asia/Seoul"):
        assert relative_time("2026-01-02T03:04:05Z", now=THIS_YEAR) == "1월 2일"
        assert relative_time("2025-01-02T03:04:05Z", now=THIS_YEAR) == "2025년 1월 2일"


def test_the_pickers_choices_say_each_zones_offset() -> None:
    labels = dict(time_zone_choices())
    assert labels["UTC"] == "UTC"
    assert labels["Asia/Tokyo"] == "Asia/Tokyo (UTC+9)"
    assert labels["Asia/Kolkata"] == "Asia/Kolkata (UTC+5:30)"
    assert labels["America/Argentina/Buenos_Aires"] == "America/Argentina/Buenos Aires (UTC-3)"
    assert next(iter(labels)) == "Africa/Abidjan"
