"""The account: its profile, picture, keys, export and deletion."""
