"""SQL that the delivery channels share: each keeps one row per delivery in a table of its
own (``status``, ``next_attempt_at``), claimed the same way."""

from __future__ import annotations

from typing import Literal

from anonbox.core.database import Connection

DeliveryTable = Literal["webhook_deliveries", "crosspost_deliveries", "federation_deliveries"]


async def claim_delivery(
    conn: Connection, table: DeliveryTable, *, delivery_id: str, seen_at: int, until: int
) -> bool:
    """Take a pending delivery for one attempt (until ``until``) by moving its
    ``next_attempt_at`` on; False if another instance has meanwhile."""
    claimed = await conn.execute(
        f"UPDATE {table} SET next_attempt_at = $3"  # noqa: S608 - one of DeliveryTable
        " WHERE id = $1 AND status = 'pending' AND next_attempt_at = $2",
        delivery_id,
        seen_at,
        until,
    )
    return claimed == 1
