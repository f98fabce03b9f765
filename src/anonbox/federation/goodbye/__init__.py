"""A followable link's goodbye: ``Delete`` of its actor to its followers, then 410 Gone."""
