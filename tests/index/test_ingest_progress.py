"""Ingest progress: a line every few seconds off a terminal, a bar that moves per batch on one."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from thresher.config import Config
from thresher.corpus.document import Document
from thresher.index.backends import ingest
from thresher.index.ingest import progress as ingest_progress
from thresher.index.ingest.progress import IngestProgress
from thresher.index.ingest.progress import duration as eta_text


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class _FakeEmbedder:
    """Deterministic vectors, counting calls (no model needed)."""

    name = "fake"
    dimension = 8
    batch_size = 4

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        rows = np.ones((len(texts), self.dimension), dtype=np.float32)
        rows[:, 0] = [len(t) for t in texts]
        out: np.ndarray = rows / np.linalg.norm(rows, axis=1, keepdims=True)
        return out


def test_off_a_terminal_a_plain_line_every_few_seconds() -> None:
    stream, clock = io.StringIO(), _Clock()
    shown = IngestProgress(1000, 100, stream=stream, every=10.0, clock=clock)
    clock.now += 4
    shown.advance(40, 4)
    assert stream.getvalue() == ""  # before the first interval: nothing
    clock.now += 6
    shown.advance(60, 6)
    clock.now += 1
    shown.advance(10, 1)  # within the next interval: no second line
    (line,) = stream.getvalue().splitlines()
    assert line == (
        "thresher: indexing 100/1,000 chunks (10%), 10/100 documents, 10.0 chunks/s, 1m 30s left"
    )
    assert "\r" not in stream.getvalue()
    clock.now += 10
    shown.advance(0)
    assert len(stream.getvalue().splitlines()) == 2
    assert eta_text(7325) == "2h 02m" and eta_text(42.4) == "42s"  # formatting only


def test_a_log_that_showed_progress_ends_with_the_final_counts() -> None:
    stream, clock = io.StringIO(), _Clock()
    with IngestProgress(20, 3, stream=stream, every=10.0, clock=clock) as shown:
        clock.now += 10
        shown.advance(20)  # every chunk embedded, no document written yet
        shown.advance(0, 3)  # the write that ends the three documents
    last = stream.getvalue().splitlines()[-1]
    assert "20/20 chunks (100%), 3/3 documents" in last


def test_a_run_shorter_than_the_interval_logs_nothing_at_its_end() -> None:
    stream, clock = io.StringIO(), _Clock()
    with IngestProgress(20, 3, stream=stream, every=10.0, clock=clock) as shown:
        clock.now += 1
        shown.advance(20, 3)
    assert stream.getvalue() == ""


def test_disabled_progress_shows_nothing() -> None:
    stream, clock = _Terminal(), _Clock()
    with IngestProgress(10, 1, enabled=False, stream=stream, every=0.0, clock=clock) as shown:
        clock.now += 5
        shown.advance(10, 1)
    assert stream.getvalue() == ""


def test_on_a_terminal_the_bar_counts_documents() -> None:
    stream = _Terminal()
    with IngestProgress(10, 2, stream=stream) as shown:
        shown.advance(5, 1)
        shown.advance(5, 1)
    assert "10/10" in stream.getvalue() and "2/2 docs" in stream.getvalue()


def test_ingest_off_a_terminal_logs_progress_and_embeds_in_small_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(ingest_progress, "LOG_EVERY_S", 0.0)  # a line at every step
    docs = [
        Document(f"d{i}", f"doc {i}", f"Paragraph number {i} about topic {i}.", source="test")
        for i in range(10)
    ]
    emb = _FakeEmbedder()
    report = ingest(docs, tmp_path / "idx", Config(), embedder=emb, progress=True)
    assert report.chunks_added == 10
    assert emb.calls == 3  # 10 texts in one write, embedded 4 at a time
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(x.startswith("thresher: indexing ") for x in lines)
    assert lines[-1].startswith("thresher: indexing 10/10 chunks (100%), 10/10 documents")
    ingest(docs[:3], tmp_path / "idx2", Config(), embedder=_FakeEmbedder(), progress=False)
    assert capsys.readouterr().err == ""
