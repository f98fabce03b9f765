"""anonbox: an anonymous message service."""

__version__ = "0.1.0"
