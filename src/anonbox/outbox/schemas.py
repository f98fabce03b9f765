"""What the outbox holds: every kind of event, who writes it and who takes it, and an
event as the relay hands it to the channels.

Every event is written in the transaction (often the very statement) of what it tells
about, through ``outbox.repository``; the outbox imports none of its writers.

==================  ==========================================  =========================
kind                written by                                  taken by
==================  ==========================================  =========================
message.created     messages: a post stored                     webhooks, push, e-mail,
                    (``repository.insert_message``,             the live dashboard
                    ``insert_posts``; one statement with the
                    messages on PostgreSQL), a message restored
                    from the filtered folder
                    (``filtered_repository.restore``)
reply.created       messages: the creator's reply               webhooks, the live
                    (``repository.add_replies``; one statement  dashboard
                    with the replies on PostgreSQL)
message.deleted     messages: the creator deletes a message     webhooks, the live
                    (``service.delete_message``), or all        dashboard (``removed``)
                    unanswered
                    (``repository.delete_unanswered``; one
                    statement with the deletion on PostgreSQL)
message.reported    moderation: someone reported one of the     webhooks, the live
                    creator's messages (``service``'s report)   dashboard
message.filtered    messages: a waiting message moved to its    the live dashboard only
                    link's filtered folder by a muted word      (``removed``)
                    added later (safety, through
                    ``filtered_repository.move_ids``; a block
                    moves nothing)
==================  ==========================================  =========================

Besides: ``account`` erases an account's events with the rest of it
(``repository.ERASE_EVENTS``), and ``auth`` wakes the live fan-out of every instance about
credentials (``credential_cache.announce``, through ``repository.notify``) without an
event. ``webhook.test`` is no event: a webhook delivery made on request only. Which kinds a
webhook may subscribe to: ``webhooks.schemas.EVENT_KINDS``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Kind(enum.StrEnum):
    """Every kind of event the outbox holds (see the module's table)."""

    MESSAGE_CREATED = "message.created"
    REPLY_CREATED = "reply.created"
    MESSAGE_DELETED = "message.deleted"
    MESSAGE_REPORTED = "message.reported"  # someone reported one of the creator's messages
    # A waiting message moved to its link's filtered folder by a muted word added later (a
    # block moves nothing). For the live dashboard only: no channel takes it (not in
    # ``EVENT_KINDS``).
    MESSAGE_FILTERED = "message.filtered"


@dataclass(frozen=True, slots=True)
class Event:
    """An event as the relay hands it to the channels."""

    seq: int
    user_id: str
    link_id: str
    kind: str
    message_id: str
    reply_id: str | None
    created_at: int
