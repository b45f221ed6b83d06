"""Readers of a generation share one read copy, made at commit: opening copies nothing,
the committed generation is never written, a read-only index folder is read like any
other, and a killed reader leaves nothing behind.

The index holds 1200 chunks: past chromadb's HNSW ``sync_threshold`` (1000), so its
segment is persisted and shareable (a smaller one gets private copies, as
``test_read_only.py`` checks). Vectors come from a deterministic hashing embedder:
no model is loaded.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from thresher.config import Config
from thresher.corpus.document import Document
from thresher.index.backends import ingest
from thresher.index.embedded import layout
from thresher.index.embedded.read_copy import copies_root, make_read_copy
from thresher.index.embedded.store import EmbeddedStore

from .hash_embedder import HashEmbedder
from .test_read_only import _files, _read_only_runner

_HERE = Path(__file__).resolve().parent


def _docs(n: int, start: int = 0) -> list[Document]:
    return [
        Document(f"d{i:05d}", f"Town {i}", f"Town {i} keeps a mill built in {1700 + i % 300}.",
                 "test")
        for i in range(start, start + n)
    ]  # fmt: skip


@pytest.fixture
def index_dir(tmp_path, copies) -> Path:
    where = tmp_path / "index"
    ingest(_docs(1200), where, Config(), embedder=HashEmbedder(), progress=False)
    return where


def _shared(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith("thresher-gen-"))


def _others(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if not p.name.startswith("thresher-gen-"))


def _settled(chroma: Path) -> bool:
    """Whether every segment of a chroma folder has applied the whole log."""
    db = sqlite3.connect(f"file:{chroma / 'chroma.sqlite3'}?immutable=1", uri=True)
    try:
        (last,) = db.execute("SELECT max(seq_id) FROM embeddings_queue").fetchone()
        return {seq for _, seq in db.execute("SELECT * FROM max_seq_id")} == {last}
    finally:
        db.close()


def _free(copy: Path) -> bool:
    """Whether no reader holds a shared copy (its reader lock can be taken exclusively)."""
    fd = os.open(copy / "users.lock", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def test_readers_open_the_copy_made_at_commit_and_never_write_the_generation(index_dir, copies):
    assert len(_shared(copies)) == 1  # made by the commit, before any reader
    made = copies / _shared(copies)[0]
    before = _files(index_dir)
    stamp = (made / "chroma" / "chroma.sqlite3").stat().st_ino
    hnsw = {k: v for k, v in _files(made / "chroma").items() if not k.startswith("chroma.sqlite3")}
    assert _settled(made / "chroma")  # the log tail is persisted: no reader replays it
    with (
        EmbeddedStore(index_dir, Config(), embedder=HashEmbedder()) as first,
        EmbeddedStore(index_dir, Config(), embedder=HashEmbedder()) as second,
    ):
        assert first.hybrid_search("mill built in 1742", k=3)
        assert second.dense_search("Town 12", k=3)
        assert first.get(["d00012#0"])[0].doc_id == "d00012"
        assert first.stats().chunks == 1200
        assert not _free(made)  # held while open
        assert _shared(copies) == [made.name] and _others(copies) == []  # nothing copied
    assert (made / "chroma" / "chroma.sqlite3").stat().st_ino == stamp  # the same copy
    after = {k: v for k, v in _files(made / "chroma").items() if not k.startswith("chroma.sqlite3")}
    assert after == hnsw  # readers only read its HNSW files
    assert _files(index_dir) == before  # same files, same bytes, same mtimes
    assert _free(made)  # released at close, kept for the next reader


def test_a_new_generation_retires_the_old_copy_once_no_reader_holds_it(index_dir, copies):
    old = copies / _shared(copies)[0]
    reader = EmbeddedStore(index_dir, Config(), embedder=HashEmbedder())
    other = EmbeddedStore(index_dir, Config(), embedder=HashEmbedder())
    assert reader.hybrid_search("mill", k=3)
    more = _docs(1200) + _docs(20, start=5000)
    ingest(more, index_dir, Config(), embedder=HashEmbedder(), progress=False)
    assert old.is_dir() and len(_shared(copies)) == 2  # still read: kept
    assert reader.stats().chunks == 1220  # the reader moved to the new generation
    assert reader.hybrid_search("Town 5003", k=3)
    assert old.is_dir()  # the other reader still reads the old generation
    other.close()  # its last reader removes it
    assert not old.exists() and len(_shared(copies)) == 1
    reader.close()
    assert len(_shared(copies)) == 1  # the live generation's: kept for the next reader
    with EmbeddedStore(index_dir, Config(), embedder=HashEmbedder()) as store:
        assert store.stats().chunks == 1220


def test_a_retired_generations_copy_goes_when_its_store_moves_on(index_dir, copies):
    old = copies / _shared(copies)[0]
    with EmbeddedStore(index_dir, Config(), embedder=HashEmbedder()) as reader:
        assert reader.hybrid_search("mill", k=3)
        more = _docs(1200) + _docs(20, start=5000)
        ingest(more, index_dir, Config(), embedder=HashEmbedder(), progress=False)
        assert old.is_dir()
        assert reader.stats().chunks == 1220  # switched: nothing reads the old one
        assert not old.exists() and len(_shared(copies)) == 1 and _others(copies) == []


_READER = textwrap.dedent(f"""
    import sys, time
    sys.path.insert(0, {str(_HERE)!r})
    from hash_embedder import HashEmbedder
    from thresher.config import Config
    from thresher.index.embedded.store import EmbeddedStore
    store = EmbeddedStore(sys.argv[1], Config(), embedder=HashEmbedder())
    assert store.hybrid_search("mill built in 1742", k=3)
    print("ready", flush=True)
    time.sleep(600)
""")


def test_a_killed_reader_leaves_no_litter(index_dir, copies, tmp_path):
    made = copies / _shared(copies)[0]
    before = _files(index_dir)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    (copies / f"thresher-make-{gone}-halfway" / "chroma").mkdir(parents=True)  # a killed maker
    child = subprocess.Popen([sys.executable, "-c", _READER, str(index_dir)],
                             stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        assert not _free(made)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    assert _free(made)  # the kernel dropped the dead reader's lock
    with EmbeddedStore(index_dir, Config(), embedder=HashEmbedder()) as store:
        assert store.hybrid_search("Town 7", k=3)
    assert _others(copies) == [] and _shared(copies) == [made.name]
    assert _files(index_dir) == before


def test_a_read_only_index_folder_is_read_through_the_shared_copy(tmp_path, copies):
    where = tmp_path / "index"
    ingest(_docs(1200), where, Config(), embedder=HashEmbedder(), progress=False)
    for entry in list(copies.iterdir()):  # start with no copy: the reader makes it
        shutil.rmtree(entry)
    prefix = _read_only_runner(where)
    before = _files(where)
    script = _READER.replace("time.sleep(600)", "store.close()")
    env = {**os.environ, "THRESHER_READ_COPIES": str(copies)}
    for _ in range(2):  # the first reader makes the copy, the second uses it
        done = subprocess.run([*prefix, sys.executable, "-c", script, str(where)], env=env,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "readonly" not in done.stderr
    assert len(_shared(copies)) == 1 and _others(copies) == []
    assert _files(where) == before
    if not prefix:
        for folder, _, _ in os.walk(where):
            os.chmod(folder, 0o755)


def test_a_small_generation_gets_a_private_copy_removed_at_release(tmp_path, copies):
    where = tmp_path / "index"
    ingest(_docs(30), where, Config(), embedder=HashEmbedder(), progress=False)
    chroma = layout.current_generation(where) / "chroma"
    copy = make_read_copy(chroma)  # HNSW never persisted: chromadb rewrites it on load
    assert not copy.shared and copy.path.is_dir() and copies_root() == copies
    assert _shared(copies) == []
    copy.release()
    assert list(copies.iterdir()) == []


def test_an_index_built_again_in_the_same_folder_drops_the_old_copy(index_dir, copies):
    old = _shared(copies)
    shutil.rmtree(index_dir)  # the same folder, built again: gen-000001 once more
    ingest(_docs(1200, start=1), index_dir, Config(), embedder=HashEmbedder(), progress=False)
    assert len(_shared(copies)) == 1 and _shared(copies) != old  # swept by the commit
    with EmbeddedStore(index_dir, Config(), embedder=HashEmbedder()) as store:
        assert store.get(["d01200#0"])[0].doc_id == "d01200"


def test_exact_dense_search_reads_the_vectors_saved_with_the_shared_copy(
    index_dir, copies, monkeypatch
):
    from thresher.index.embedded.exact_dense import ExactDense

    made = copies / _shared(copies)[0]
    assert (made / "vectors.npy").is_file() and (made / "vector_ids.json").is_file()
    reading = ExactDense.from_collection

    def refuse(collection):
        raise AssertionError("paged the vectors out of chromadb")

    monkeypatch.setattr(ExactDense, "from_collection", refuse)
    with EmbeddedStore(index_dir, Config(), embedder=HashEmbedder()) as store:
        saved = [(h.chunk.chunk_id, h.score) for h in store.dense_search("Town 12 mill", k=8)]
    monkeypatch.setattr(ExactDense, "from_collection", reading)
    (made / "vectors.npy").unlink()  # none saved: read from the collection, same answer
    with EmbeddedStore(index_dir, Config(), embedder=HashEmbedder()) as store:
        paged = [(h.chunk.chunk_id, h.score) for h in store.dense_search("Town 12 mill", k=8)]
    assert saved == paged and len(saved) == 8
