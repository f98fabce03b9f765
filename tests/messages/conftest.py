"""Fixtures shared by the message tests."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from tests.conftest import Creator
from tests.support import strangers


@pytest.fixture
def others_message(
    api: httpx.Client, make_creator: Callable[[], Creator]
) -> strangers.OthersMessage:
    return strangers.others_message(api, make_creator)
