"""SQLite's live feed (``fanout.TailFeed``) hears a stream overlay's change even when the
write that made it commits after the tail has looked: a change's time is taken inside its
transaction, and a tail that followed the clock moved past it before it was visible."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from anonbox.core.clock import now_us
from anonbox.core.database import connect
from anonbox.outbox.fanout import TAIL_SECONDS, Hub, TailFeed
from anonbox.stream import repository as overlays
from tests.server import anonbox_command_on


def test_a_change_committed_after_the_tail_looked_is_still_heard(
    database_url_factory: Callable[..., str],
) -> None:
    url = database_url_factory("sqlite")
    made = anonbox_command_on(url, ["creator", "create", "--email", "t@x.org", "--json"])
    made.check_returncode()
    user_id = json.loads(made.stdout)["user_id"]

    async def scenario() -> bool:
        db = await connect(url)
        hub = Hub()
        tail = asyncio.create_task(TailFeed(db, hub).run())
        try:
            await asyncio.sleep(2 * TAIL_SECONDS)  # the tail runs, as it does from start-up
            with hub.subscription(f"stream:{user_id}") as heard:
                async with db.transaction() as tx:
                    await overlays.put_overlay(
                        tx, user_id=user_id, nonce="n", token_hash="h" * 64, at=now_us()
                    )
                    # The tail looks (at least) twice while this change is not committed.
                    await asyncio.sleep(3 * TAIL_SECONDS)
                try:
                    await asyncio.wait_for(heard.wait(), timeout=10 * TAIL_SECONDS)
                except TimeoutError:
                    return False
                return True
        finally:
            tail.cancel()
            await db.close()

    assert asyncio.run(scenario()), "the overlay's change was never published"
