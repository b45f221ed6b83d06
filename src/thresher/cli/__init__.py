"""Command-line interface (thin; imports lazily)."""
