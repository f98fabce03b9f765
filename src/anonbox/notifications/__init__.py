"""Telling creators what happened: the channels the outbox's relay hands events to
(``webhooks``, ``push``, ``email``, ``crosspost``), whose deliveries one shared worker makes
(``courier``, ``worker``). The outbox is ``anonbox.outbox``; the destination check
``core.egress``."""
