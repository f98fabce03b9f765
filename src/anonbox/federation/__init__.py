"""Federation: links as ActivityPub actors that remote servers can follow."""
