"""index."""
