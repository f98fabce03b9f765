"""E-mail notices: a creator's choice and confirmed address, and the notices mailed."""
