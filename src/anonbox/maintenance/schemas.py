"""Maintenance's value types: what a copy reports, and how it says no."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from anonbox.core.errors import AnonboxError


class MaintenanceError(AnonboxError):
    """A backup, restore or move that cannot go ahead; nothing was changed."""

    status_code = 400
    code = "bad_request"


class DriverRefused(MaintenanceError):
    """What the database driver refused (a damaged file, a row the target will not take)."""


class Progress(Protocol):
    """Told how many rows a copy will write, then as each batch of them is written."""

    def begin(self, total: int) -> None: ...

    def advance(self, rows: int) -> None: ...


class NoProgress:
    def begin(self, total: int) -> None:
        pass

    def advance(self, rows: int) -> None:
        pass


@dataclass(frozen=True)
class Copied:
    """What a copy wrote: rows per table (every table of the schema, empty ones too)."""

    counts: dict[str, int]

    @property
    def rows(self) -> int:
        return sum(self.counts.values())
