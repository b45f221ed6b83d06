"""Retry arithmetic and error reading for the endpoint client (pure helpers).

``backoff_delay`` is the wait between attempts, ``parse_retry_after`` reads a
``Retry-After`` header, ``no_connection`` tells a refused connection or an
unknown host (never retried) from a dropped one, and ``error_text`` reads the
server's message out of an error response.
"""

from __future__ import annotations

import email.utils
import math
import random
import socket
import time

__all__ = ["MAX_WAIT_S", "backoff_delay", "parse_retry_after", "no_connection", "error_text"]

#: the longest single wait between attempts, in seconds
MAX_WAIT_S = 120.0


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date).

    Returns None when the header is absent or unreadable; never negative.
    """
    if value is None or not value.strip():
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value.strip())
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if math.isnan(seconds) or math.isinf(seconds):
        return None
    return max(0.0, seconds)


def backoff_delay(
    attempt: int, base_s: float, retry_after: float | None, rng: random.Random
) -> float:
    """The wait before retry number ``attempt + 1`` (``attempt`` is 0-based).

    ``base_s · 2^attempt · U(0.5, 1)``, at least ``retry_after``, at most :data:`MAX_WAIT_S`.
    """
    jittered = base_s * (2.0**attempt) * (0.5 + 0.5 * rng.random())
    return min(MAX_WAIT_S, max(jittered, retry_after or 0.0))


def no_connection(exc: BaseException) -> str | None:
    """Why no connection could be made at all (refused, unknown host), else None.

    Walks the exception's causes, since ``openai`` wraps the transport's error,
    which wraps the socket's.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError):
            return "connection refused"
        if isinstance(current, socket.gaierror):
            return "host name not found"
        current = current.__cause__ or current.__context__
    return None


def error_text(exc: Exception) -> str:
    """The server's error message from an ``APIStatusError`` (whitespace collapsed, capped)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if message:
            return " ".join(str(message).split())[:200]
    return " ".join(str(getattr(exc, "message", exc)).split())[:200]
