"""SQL for the creator's likes: many toggles flipped in one statement, for the group
commit that batches them (``messages.service.like_writer``). Like every statement on a
creator's messages, it names the whole chain link → message and checks the owner."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import msgspec

from anonbox.core.database import Connection
from anonbox.messages.repository import LINK_OWNED_BY


class Toggle(NamedTuple):
    """One flip of the creator's like on a message, named with its link and the user who
    says the link is theirs (the statement flips it only if it is, and in use)."""

    message_id: str
    link_id: str
    owner_id: str


# Many toggles in one statement, as many messages are inserted in one
# (``messages.repository._INSERT_MANY``): each message named once, with how many times it
# flips; an even count leaves it as it was.
_TOGGLE_MANY = {
    "sqlite": (
        "UPDATE messages SET like_by_creator = like_by_creator <> ((t.value ->> 3) % 2 = 1)"  # noqa: S608 - constants
        " FROM json_each($1) t"
        " WHERE messages.id = t.value ->> 0 AND messages.link_id = t.value ->> 1"
        " AND "
        + LINK_OWNED_BY.format(link="messages.link_id", owner="t.value ->> 2")
        # SQLite's RETURNING cannot name the FROM table: the owner is read back instead.
        + " RETURNING id, link_id, like_by_creator,"
        " (SELECT user_id FROM links WHERE links.id = messages.link_id) AS owner_id"
    ),
    "postgresql": (
        "UPDATE messages SET like_by_creator = messages.like_by_creator <> (t.flips % 2 = 1)"  # noqa: S608 - constants
        " FROM unnest($1::text[], $2::text[], $3::text[], $4::int[])"
        " AS t(id, link_id, owner_id, flips)"
        " WHERE messages.id = t.id AND messages.link_id = t.link_id"
        " AND "
        + LINK_OWNED_BY.format(link="messages.link_id", owner="t.owner_id")
        + " RETURNING messages.id, messages.link_id, messages.like_by_creator, t.owner_id"
    ),
}


async def toggle_likes(conn: Connection, toggles: Sequence[Toggle]) -> list[bool | None]:
    """Flip each like in the order given, all in one statement (no read-modify-write);
    for each toggle, the like as it left it, or None when the message is not under that
    link.

    A message flipped n times ends as it was when n is even. Each toggle's answer is the
    one it would have had run alone in that order: the k-th flip of a message that ends
    at ``final`` after n left it at ``final`` flipped n - k more times.
    """
    flips: dict[Toggle, int] = {}
    for toggle in toggles:
        flips[toggle] = flips.get(toggle, 0) + 1
    rows = [(*toggle, n) for toggle, n in flips.items()]
    sql = _TOGGLE_MANY[conn.dialect]
    if conn.dialect == "sqlite":
        found = await conn.fetch(sql, msgspec.json.encode(rows).decode())
    else:
        found = await conn.fetch(sql, *(list(c) for c in zip(*rows, strict=True)))
    final = {
        Toggle(row["id"], row["link_id"], row["owner_id"]): bool(row["like_by_creator"])
        for row in found
    }
    answers: list[bool | None] = []
    done: dict[Toggle, int] = {}
    for toggle in toggles:
        done[toggle] = k = done.get(toggle, 0) + 1
        last = final.get(toggle)
        answers.append(None if last is None else last != ((flips[toggle] - k) % 2 == 1))
    return answers
