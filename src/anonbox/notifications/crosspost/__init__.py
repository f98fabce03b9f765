"""Answers posted to the creator's own Mastodon or Misskey account."""
