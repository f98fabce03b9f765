"""Stream mode: the question a creator shows on a live stream, at a secret address."""
