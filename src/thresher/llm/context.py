"""The server's context size, read where each server says it.

* vLLM: ``GET /v1/models`` lists each model with ``max_model_len``;
* llama.cpp: ``GET /v1/models`` lists ``meta.n_ctx`` (the context it was started
  with, ``-c``) and ``meta.n_ctx_train``; ``GET /props`` (at the server root) has
  ``default_generation_settings.n_ctx``.

The smallest of what is said for the model wins (``n_ctx`` before
``n_ctx_train``: a server started with ``-c 4096`` gives 4096 whatever the
model was trained for). Everything here is pure; the client does the I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ContextSize", "context_from_listing", "context_from_props"]


@dataclass(frozen=True, slots=True)
class ContextSize:
    """Tokens of context a request may fill (prompt and reply), and where that was read."""

    tokens: int
    source: str


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def context_from_listing(body: dict[str, Any], model: str) -> ContextSize | None:
    """The context size ``/v1/models`` gives for ``model`` (else its first entry), or None."""
    data = body.get("data")
    entries = [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []
    if not entries:
        return None
    entry = next((e for e in entries if e.get("id") == model), entries[0])
    vllm = _int(entry.get("max_model_len"))
    if vllm is not None:
        return ContextSize(vllm, "/v1/models max_model_len")
    held = entry.get("meta")
    meta: dict[str, Any] = held if isinstance(held, dict) else {}
    for key in ("n_ctx", "n_ctx_train"):
        n = _int(meta.get(key))
        if n is not None:
            return ContextSize(n, f"/v1/models meta.{key}")
    return None


def context_from_props(body: dict[str, Any]) -> ContextSize | None:
    """The context size llama.cpp's ``/props`` gives, or None."""
    settings = body.get("default_generation_settings")
    n = _int(settings.get("n_ctx")) if isinstance(settings, dict) else None
    return ContextSize(n, "/props default_generation_settings.n_ctx") if n else None
