"""What an ingest shows while it embeds: a bar on a terminal, a log line otherwise.

On a terminal (stderr is a tty) a tqdm bar counts chunks and documents and
moves after every embedding batch (tens of chunks), not once per write.
When stderr is not a terminal (a log file, ``nohup``, CI) a plain line is
written every ``every`` seconds, never with a carriage return, and a last one
with the final counts when the run ends::

    thresher: indexing 1,234/3,023 chunks (41%), 412/1,000 documents, 5.2 chunks/s, 5m 44s left

A run shorter than ``every`` seconds writes nothing. Disabled (``--no-progress``,
``--json``, or a library caller's ``progress=False``), nothing is shown at all.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["IngestProgress", "LOG_EVERY_S", "duration"]

LOG_EVERY_S = 10.0
"""Seconds between two progress lines when stderr is not a terminal."""


def duration(seconds: float) -> str:
    """``seconds`` as ``42s``, ``5m 44s`` or ``2h 03m``."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60:02d}s"
    return f"{s // 3600}h {s % 3600 // 60:02d}m"


class IngestProgress:
    """Counts the chunks and documents an ingest has written and shows it.

    Args:
        chunks: the chunks to write in all.
        documents: the documents they belong to.
        enabled: show anything at all.
        stream: where to show it (default ``sys.stderr``, read when created).
        every: seconds between two log lines when ``stream`` is not a terminal
            (default :data:`LOG_EVERY_S`).
        clock: a monotonic clock in seconds (tests pass their own).
    """

    def __init__(
        self,
        chunks: int,
        documents: int,
        *,
        enabled: bool = True,
        stream: TextIO | None = None,
        every: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.chunks_total, self.documents_total = chunks, documents
        self.chunks = self.documents = 0
        self._stream = stream or sys.stderr
        self._clock = clock
        self._every = LOG_EVERY_S if every is None else every
        self._started = self._last = clock()
        self._shown_line: str | None = None
        terminal = enabled and self._stream.isatty()
        self._log = enabled and not terminal and chunks > 0
        self._bar: Any = None
        if terminal:
            from tqdm import tqdm

            self._bar = tqdm(total=chunks, unit="chunk", desc="indexing", file=self._stream)

    def advance(self, chunks: int = 0, documents: int = 0) -> None:
        """Count ``chunks`` more chunks embedded and ``documents`` more documents written."""
        self.chunks += chunks
        self.documents += documents
        if self._bar is not None:
            self._bar.set_postfix_str(f"{self.documents}/{self.documents_total} docs", False)
            self._bar.update(chunks)
            return
        now = self._clock()
        if self._log and now - self._last >= self._every:
            self._last = now
            self._write_line(now)

    def _write_line(self, now: float) -> None:
        self._shown_line = self.line(now - self._started)
        print(self._shown_line, file=self._stream, flush=True)

    def line(self, elapsed: float) -> str:
        """The log line after ``elapsed`` seconds: counts, rate and time left."""
        rate = self.chunks / elapsed if elapsed > 0 else 0.0
        left = (self.chunks_total - self.chunks) / rate if rate > 0 else None
        share = 100 * self.chunks // max(self.chunks_total, 1)
        eta = f", {duration(left)} left" if left is not None else ""
        return (
            f"thresher: indexing {self.chunks:,}/{self.chunks_total:,} chunks ({share}%), "
            f"{self.documents:,}/{self.documents_total:,} documents, {rate:.1f} chunks/s{eta}"
        )

    def close(self) -> None:
        """Close the bar; off a terminal, end a log that showed progress with the final
        counts (documents are counted as their chunks are written, so the last
        periodic line may lag them)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self._log and self._shown_line is not None:
            if self.line(self._clock() - self._started) != self._shown_line:
                self._write_line(self._clock())
            self._log = False

    def __enter__(self) -> IngestProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
