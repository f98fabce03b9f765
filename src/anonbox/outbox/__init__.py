"""The outbox: the ``events`` table, written in the transaction of what it tells about,
the relay that hands it to the channels, and the live fan-out that wakes dashboards."""
