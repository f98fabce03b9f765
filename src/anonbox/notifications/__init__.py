"""Telling creators what happened: the outbox of events (``outbox``: its relay, and live
fan-out), and the channels it hands them to (``webhooks``, ``push``, ``email``), whose
deliveries one shared worker makes (``courier``, ``worker``, ``destinations``)."""
