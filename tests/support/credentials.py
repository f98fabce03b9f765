"""Credentials a creator-only route must refuse with a 401, each a ``pytest.param`` under a
stable id, so that a test of such a route names the ones it tries in one line."""

from __future__ import annotations

from typing import Any

import pytest

REFUSED: dict[str, dict[str, str]] = {
    "no-credential": {},
    "unknown-key": {"X-API-Key": "anb_" + "0" * 40},
    "unknown-token": {"X-API-Key": "anbs_" + "0" * 40},
    "garbage-key": {"X-API-Key": "not-a-key"},
    "empty-key": {"X-API-Key": ""},
    "unknown-bearer": {"Authorization": "Bearer anb_" + "y" * 40},
    "basic-scheme": {"Authorization": "Basic dXNlcjpwYXNz"},
}


def refused_credentials(*names: str) -> list[Any]:
    """The credentials ``names`` (keys of ``REFUSED``), as parameters of a test."""
    return [pytest.param(REFUSED[name], id=name) for name in names]
