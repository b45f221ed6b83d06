"""Crash safety under repeated kills, two writers on one index, readers during a write.

Ingest processes (real embedder, real index on disk) are SIGKILLed at random
points; after each kill the index must open and hold exactly the last committed
corpus, with chromadb, the BM25 side index and the manifest in step, and the
next run must complete it. The kill loop is ``bench/bench_kills.py``'s (which
runs 100 kills); here 20 embedded kills and a few on a real ``chroma run``.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
KILLS = 20
SERVER_KILLS = 3


def _bench():
    spec = importlib.util.spec_from_file_location("bench_kills", BENCH / "bench_kills.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bk = _bench()


@pytest.fixture(scope="module")
def runs() -> list:
    return bk.corpora(0)


@pytest.fixture
def zygote(tmp_path):
    z = bk.Zygote(tmp_path)
    yield z
    z.close()


def test_twenty_kills_leave_the_last_commit_and_a_rerun_completes(
    tmp_path, zygote, runs, embedder
) -> None:
    index = tmp_path / "index"
    state = lambda: bk.embedded_state(index, embedder)  # noqa: E731
    assert state() is None  # no index yet: a typed IndexNotFoundError for readers
    tally = bk.kill_loop(zygote, str(index), runs, KILLS, random.Random(13), state, 3.0)
    assert tally.kills >= KILLS
    assert (tally.lost, tally.inconsistent) == (0, 0), tally.notes
    assert bk.rerun(str(index), runs[-1], state)
    generations = sorted(p.name for p in index.iterdir() if p.name.startswith("gen-"))
    assert len(generations) == 1  # the leftovers of killed runs are gone


@pytest.mark.server
def test_kills_of_a_server_ingest_are_completed_by_the_rerun(
    tmp_path, zygote, runs, embedder
) -> None:
    from index.chroma_server import ChromaProcess, chroma_executable

    if chroma_executable() is None:
        pytest.skip("no chroma executable")
    with ChromaProcess(tmp_path / "chroma") as chroma:
        url = f"{chroma.url}/kills"
        state = lambda: bk.server_state(url, embedder, tmp_path / "cache")  # noqa: E731
        tally = bk.kill_loop(zygote, url, runs, SERVER_KILLS, random.Random(5), state, 1.5)
        assert tally.kills >= SERVER_KILLS
        assert tally.inconsistent == 0, tally.notes
        assert bk.rerun(url, runs[-1], state)


def _blocked_on(lock: Path, pid: int) -> bool:
    """Whether ``pid`` waits for a flock on ``lock`` (a ``->`` line of /proc/locks)."""
    inode = os.stat(lock).st_ino
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "->" in fields and str(pid) in fields and fields[-3].endswith(f":{inode}"):
            return True
    return False


def test_a_second_writer_waits_for_the_first(tmp_path, runs, embedder) -> None:
    from thresher.index.backends import ingest

    index = tmp_path / "index"
    ingest(runs[0], index, bk.CONFIG, embedder=embedder, progress=False)
    before = bk.embedded_state(index, embedder)
    folder = tmp_path / "docs"
    folder.mkdir()
    for i, doc in enumerate(runs[1]):
        (folder / f"d{i:02d}.txt").write_text(f"{doc.title}\n\n{doc.text}\n")
    lock = index / "ingest.lock"
    with lock.open("a+") as held:  # this test is the first writer
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        cmd = [sys.executable, "-m", "thresher.cli.main", "index", str(folder)]
        second = subprocess.Popen(
            [*cmd, "--index", str(index), "--no-progress", "--set", "chunking.max_tokens=48"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while not _blocked_on(lock, second.pid):
                assert second.poll() is None, second.communicate()
                assert time.monotonic() < deadline, "the second writer never reached the lock"
                time.sleep(0.05)
            assert bk.embedded_state(index, embedder) == before  # nothing written meanwhile
        finally:
            fcntl.flock(held.fileno(), fcntl.LOCK_UN)
        out, err = second.communicate(timeout=300)
    assert second.returncode == 0, err
    after = bk.embedded_state(index, embedder)
    assert after is not None and {f"d{i:02d}.txt" for i in range(len(runs[1]))} <= set(after)


def test_readers_during_a_write_see_a_committed_state(tmp_path, zygote, runs, embedder) -> None:
    from thresher.index.backends import ingest
    from thresher.index.embedded.store import EmbeddedStore

    index = tmp_path / "index"
    ingest(runs[0], index, bk.CONFIG, embedder=embedder, progress=False)
    seen: list[tuple[int, int]] = []
    errors: list[BaseException] = []
    done = threading.Event()

    def read(store: EmbeddedStore) -> None:
        try:
            while not done.is_set():
                stats = store.stats()
                seen.append((stats.documents, stats.chunks))
                store.hybrid_search("annual report", k=5)
        except BaseException as exc:  # reported below
            errors.append(exc)

    with EmbeddedStore(index, bk.CONFIG, embedder=embedder) as store:
        old = (store.stats().documents, store.stats().chunks)
        reader = threading.Thread(target=read, args=(store,), daemon=True)
        reader.start()
        assert not zygote.finish(zygote.run(str(index), runs[1]), 300)  # runs to the end
        new = (store.stats().documents, store.stats().chunks)
        time.sleep(0.2)
        done.set()
        reader.join(60)
    assert errors == []
    assert seen and set(seen) <= {old, new}
    assert new != old and new[0] == len(runs[1])
