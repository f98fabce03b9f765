"""ANONBOX_ACCOUNT_ERASE_DAYS: 30 by default; a positive number of days (fractions allowed)
up to ten years; anything else stops the service at start with a message naming it."""

from __future__ import annotations

import pytest

from anonbox.core.settings import ConfigurationError, Settings


def test_the_grace_period_is_30_days_unless_set() -> None:
    assert Settings.from_env({}).account_erase_days == 30
    assert Settings.from_env({"ANONBOX_ACCOUNT_ERASE_DAYS": "7"}).account_erase_days == 7
    assert Settings.from_env({"ANONBOX_ACCOUNT_ERASE_DAYS": "0.5"}).account_erase_days == 0.5


@pytest.mark.parametrize("raw", ["0", "-1", "thirty", "nan", "inf", "3651", "1e308"])
def test_a_bad_grace_period_is_refused_by_name(raw: str) -> None:
    with pytest.raises(ConfigurationError, match="ANONBOX_ACCOUNT_ERASE_DAYS"):
        Settings.from_env({"ANONBOX_ACCOUNT_ERASE_DAYS": raw})
