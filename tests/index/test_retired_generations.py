"""A generation an ingest retired is released as soon as nothing reads it: at once when
no pinned store holds it, else when the last pinned store on it is dropped; closing the
store releases every generation still open. Released: no longer in
``EmbeddedStore.open_generations()``, its hold (a file descriptor on its manifest)
closed, and its folder no longer held against the next ingest, which removes it (a
held one it leaves). Vectors come from a deterministic hashing embedder: no model is
loaded.
"""

from __future__ import annotations

import contextlib
import gc
import os
from pathlib import Path

import pytest

from thresher.config import Config
from thresher.corpus.document import Document
from thresher.errors import BackendUnavailableError, UnknownIdError
from thresher.index.backends import ingest
from thresher.index.embedded.store import EmbeddedStore
from thresher.index.filters import DocFilter
from thresher.index.store import Store

from .hash_embedder import HashEmbedder


def _docs(n: int, start: int = 0) -> list[Document]:
    return [
        Document(f"d{i:03d}", f"Town {i}", f"Town {i} keeps a mill built in {1700 + i}.", "test")
        for i in range(start, start + n)
    ]


def _commit(index_dir: Path, extra: int) -> None:
    """Commit a new generation: the 30 documents and ``extra`` more (d500 on)."""
    ingest(_docs(30) + _docs(extra, start=500), index_dir, Config(), embedder=HashEmbedder(),
           progress=False)  # fmt: skip


def _generations(index_dir: Path) -> list[str]:
    return sorted(p.name for p in index_dir.iterdir() if p.name.startswith("gen-"))


def _holds(index_dir: Path) -> list[str]:
    """The generations of ``index_dir`` this process holds (one entry per hold)."""
    gc.collect()
    held = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith(str(index_dir)) and target.endswith("manifest.json"):
                held.append(Path(target).parent.name)
    return sorted(held)


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    where = tmp_path / "index"
    _commit(where, 0)
    return where


@pytest.fixture
def store(index_dir: Path):
    s = EmbeddedStore(index_dir, Config(), embedder=HashEmbedder())
    yield s
    s.close()


def _live(store: EmbeddedStore) -> str:
    """The store's live generation (switching to the last one committed)."""
    return str(store.stats().extra["generation"])


def _docs_found(found: list) -> set[str]:
    return {h.chunk.doc_id for h in found}


def _reads_its_generation(pinned: Store) -> None:
    """``pinned`` answers from the first generation (30 documents, no d5xx)."""
    assert pinned.stats().chunks == 30
    assert pinned.hybrid_search("Town 7 mill", k=3)
    assert "d007" in _docs_found(pinned.bm25_search("Town 7 mill 1707", k=5))
    assert "d503" not in _docs_found(pinned.bm25_search("Town 503 mill 2203", k=5))
    assert pinned.read_document("d007")[0].doc_id == "d007"
    with pytest.raises(UnknownIdError):
        pinned.read_document("d503")
    assert [h.chunk.doc_id for h in pinned.grep("built in 1707").hits] == ["d007"]
    assert pinned.grep("built in 2203").total == 0


def test_a_store_releases_each_generation_it_leaves(index_dir, store) -> None:
    first = store.open_generations()
    assert len(first) == 1 and len(_holds(index_dir)) == 1
    for extra in (5, 10):
        left = store.open_generations()
        _commit(index_dir, extra)
        assert store.stats().chunks == 30 + extra  # switched: the one left is released
        assert store.open_generations() == [_live(store)] != first
        assert len(_holds(index_dir)) == 1  # only the live generation is held
        # the folder the store held while the ingest committed goes with the next ingest
        assert _generations(index_dir) == [*left, _live(store)]
    assert "d509" in _docs_found(store.bm25_search("Town 509 mill 2209", k=3))
    store.close()
    assert store.open_generations() == [] and _holds(index_dir) == []


def test_a_pinned_generation_stays_open_until_its_pin_is_dropped(index_dir, store):
    pinned = store.pinned()
    name = _live(store)
    for extra in (5, 10):
        _commit(index_dir, extra)
        assert store.stats().chunks == 30 + extra
    live = _live(store)
    assert store.open_generations() == [name, live]  # the one in between is released
    assert len(_holds(index_dir)) == 2
    assert name in _generations(index_dir)  # the ingests left the pinned one
    _reads_its_generation(pinned)
    assert [h.chunk.doc_id for h in store.grep("built in 2203").hits] == ["d503"]
    del pinned
    gc.collect()
    assert store.open_generations() == [live]
    assert len(_holds(index_dir)) == 1  # its hold went with it
    assert store.read_document("d509")[0].doc_id == "d509"
    _commit(index_dir, 15)  # and the next ingest removes its folder
    assert name not in _generations(index_dir)


def test_a_generation_pinned_twice_stays_until_both_pins_are_gone(index_dir, store):
    first, second = store.pinned(), store.pinned()
    name = _live(store)
    _commit(index_dir, 5)
    live = _live(store)
    del first
    gc.collect()
    assert store.open_generations() == [name, live]
    _reads_its_generation(second)
    del second
    gc.collect()
    assert store.open_generations() == [live] and len(_holds(index_dir)) == 1


def test_a_filter_a_pinned_store_used_does_not_keep_its_generation(index_dir, store):
    pinned = store.pinned()
    where = DocFilter.parse(None, "d00*")
    assert _docs_found(pinned.hybrid_search("mill", k=20, where=where)) <= {
        f"d00{i}" for i in range(10)
    }
    _commit(index_dir, 5)
    live = _live(store)
    assert store.hybrid_search("mill", k=3, where=where)  # the store's filter memo moves on
    del pinned
    gc.collect()
    assert store.open_generations() == [live] and len(_holds(index_dir)) == 1


def test_close_releases_every_generation_pinned_or_not(index_dir, store) -> None:
    pinned = store.pinned()
    _commit(index_dir, 5)
    assert store.stats().chunks == 35
    live_pin = store.pinned()
    assert len(store.open_generations()) == 2 and len(_holds(index_dir)) == 2
    store.close()
    assert store.open_generations() == [] and _holds(index_dir) == []
    for view in (pinned, live_pin):
        with pytest.raises(BackendUnavailableError, match="closed"):
            view.hybrid_search("mill", k=3)
    del pinned, live_pin
    gc.collect()  # releasing again (the pins' finalizers) is a no-op
    assert store.open_generations() == [] and _holds(index_dir) == []


def test_a_store_opening_as_an_ingest_removes_that_generation_opens_the_next(
    index_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``CURRENT`` read, then (before the hold) an ingest commits twice and removes the
    generation read: the store reads ``CURRENT`` again and opens the live one."""
    from thresher.index.embedded import holds

    real = holds.hold_generation
    raced: list[str] = []
    extra = [5, 6]

    def commit_first(generation: Path) -> int | None:
        if not raced:
            raced.append(generation.name)
            _commit(index_dir, extra[0])
            _commit(index_dir, extra[1])  # the second ingest removes the first's leftovers
            assert not (index_dir / generation.name).exists()
        return real(generation)

    monkeypatch.setattr(holds, "hold_generation", commit_first)
    opened = EmbeddedStore(index_dir, Config(), embedder=HashEmbedder())
    try:
        assert raced and opened.stats().chunks == 36
        assert opened.open_generations() == [_generations(index_dir)[-1]]
        raced.clear()  # the next switch races the same way
        _commit(index_dir, 7)
        extra[:] = [8, 9]
        assert opened.stats().chunks == 39 and raced
        assert opened.open_generations() == [_generations(index_dir)[-1]]
    finally:
        opened.close()
