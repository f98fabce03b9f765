"""Telling creators what happened: the outbox of events, its relay, and live fan-out."""
