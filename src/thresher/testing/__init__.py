"""Test tools that ship with the package (a replay server for OpenAI-compatible clients)."""
