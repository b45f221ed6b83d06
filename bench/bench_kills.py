"""Crash safety under repeated kills: SIGKILL ingestion at random points, check what is left.

An ingest runs as its own process (real embedder, real index on disk, many
small writes) and is killed with SIGKILL after a random delay, alternating
between a fresh ingest and incremental updates (documents edited, dropped and
added). After each kill the index is checked as a reader finds it:

* embedded: it opens (or, before any commit, is a typed ``IndexNotFoundError``),
  and holds exactly the last committed corpus: the manifest's documents and
  content hashes are those of one corpus given to an ingest that had committed,
  the chunk records and the vectors hold exactly the manifest's chunk ids, the
  BM25 index holds them in the same order, and the store's counts agree; a
  search returns only those chunks;
* Chroma server (``--server-kills``): the index opens, and the rerun that
  follows completes it to exactly the corpus given (the server's weaker
  guarantee: no atomic switch, a killed run is redone).

Every next ingest starts from what the kill left (the rerun), and the last one
runs to completion. Prints the kills, how many runs completed before their
kill, and the count of lost or inconsistent states (must be 0). Used by
``tests/hardening/test_kills.py`` at a smaller count.

Usage::

    .venv/bin/python bench/bench_kills.py [--kills 100] [--server-kills 10] [--seed 0]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from thresher.config import Config
from thresher.corpus.document import Document
from thresher.errors import IndexNotFoundError

#: chunks of at most this many tokens, so that each run makes many writes
CHUNK_TOKENS = 48
CONFIG = Config().override({"chunking.max_tokens": CHUNK_TOKENS})
#: kills of server ingests land within this many seconds of the start (runs are short)
SERVER_MAX_DELAY_S = 1.5

_ZYGOTE = """
import json, os, sys, traceback
from thresher.corpus.document import Document
from thresher.index.embedded import ingest as ingest_module
from thresher.index.server import ingest as server_ingest
from thresher.index.backends import ingest
from bench_kills import CONFIG
ingest_module._EMBED_BATCH = server_ingest._EMBED_BATCH = 2  # many small writes
# warm what every ingest loads lazily; nothing here starts a thread (fork stays safe)
import bm25s, numpy, onnxruntime, Stemmer
import chromadb.api.client, chromadb.api.models.Collection, chromadb.api.rust
from thresher.tokens import get_counter
get_counter(CONFIG.chunking.tokenizer).count("warm up")
import threading
assert threading.active_count() == 1, "the zygote must not fork with threads running"
print("READY", flush=True)
for line in sys.stdin:
    command, *args = line.split()
    if command == "RUN":
        location, docs_file, log = args
        documents = [Document(**d) for d in json.load(open(docs_file))]
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                ingest(documents, location, CONFIG, progress=False)
            except BaseException:
                open(log, "w").write(traceback.format_exc())
                code = 1
            os._exit(code)
        print(f"PID {pid}", flush=True)
    elif command == "WAIT":
        _, status = os.waitpid(int(args[0]), 0)
        print(f"STATUS {os.waitstatus_to_exitcode(status)}", flush=True)
"""


class Zygote:
    """A process that has imported thresher and forks one ingest process per run.

    Forking a warm process (one thread, no ONNX session yet: each child loads
    the embedder itself) makes a kill cost the ingest, not Python's start-up,
    so many kills fit in CI time. The ingest processes are its children; the
    caller kills them by pid and asks the zygote to reap them.
    """

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path])}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _ZYGOTE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, env=env,
        )  # fmt: skip
        if self._line() != "READY":
            raise RuntimeError("the ingest zygote did not start")
        self.runs = 0

    def _line(self) -> str:
        assert self.proc.stdout is not None
        return self.proc.stdout.readline().strip()

    def _send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def run(self, location: str, documents: Sequence[Document]) -> int:
        """Fork an ingest of ``documents`` into ``location``; returns its pid."""
        self.runs += 1
        docs_file = self.workdir / f"docs-{self.runs}.json"
        docs_file.write_text(json.dumps([dataclasses.asdict(d) for d in documents]))
        self._send(f"RUN {location} {docs_file} {self.workdir / f'error-{self.runs}.txt'}")
        return int(self._line().split()[1])

    def finish(self, pid: int, delay: float) -> bool:
        """SIGKILL ingest ``pid`` after ``delay`` seconds unless it ended; True when killed."""
        deadline = time.monotonic() + delay
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(min(0.01, max(deadline - time.monotonic(), 0)))
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        self._send(f"WAIT {pid}")
        code = int(self._line().split()[1])
        if code not in (0, -signal.SIGKILL):
            error = self.workdir / f"error-{self.runs}.txt"
            raise RuntimeError(f"ingest process failed ({code}): {error.read_text()[-2000:]}")
        return code == -signal.SIGKILL

    def close(self) -> None:
        """Stop the zygote."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def corpora(seed: int, n_docs: int = 10) -> list[list[Document]]:
    """Corpora the runs alternate between: a base, then edits, drops and additions of it
    (short documents of a fictional world, a few chunks each)."""
    from thresher.synth.world import build_world_docs

    docs = [
        Document(d.path, d.title, d.visible, source=d.path, metadata={"domain": d.domain})
        for d in build_world_docs(seed, "small").docs
        if d.visible.strip() and len(d.visible) < 1200
    ]
    rng = random.Random(seed)
    rng.shuffle(docs)
    base, extra = docs[:n_docs], docs[n_docs : n_docs + 12]
    out = [base]
    for k in range(3):
        edited = [
            dataclasses.replace(d, text=f"{d.text}\n\nRevision {k}: amended.") if i % 5 == k else d
            for i, d in enumerate(base)
        ]
        out.append(edited[k + 1 :] + extra[4 * k : 4 * k + 4])
    return out


def corpus_key(documents: Sequence[Document]) -> dict[str, str]:
    """What an index holding exactly ``documents`` lists: doc id -> content hash."""
    from thresher.index.ingest.common import document_hash

    return {d.doc_id: document_hash(d) for d in documents}


def embedded_state(index_dir: Path, embedder: object) -> dict[str, str] | None:
    """The committed state of an embedded index as a reader sees it (None: no commit yet).

    Raises ``AssertionError`` naming any inconsistency between the manifest, the
    chunk records, the vectors, the BM25 index and the store.
    """
    from thresher.index.bm25 import Bm25Index
    from thresher.index.embedded import layout
    from thresher.index.embedded.records_file import RECORDS, RecordsFile
    from thresher.index.embedded.store import EmbeddedStore
    from thresher.index.embedded.vectors import Vectors

    try:
        generation = layout.current_generation(index_dir)
    except IndexNotFoundError:
        try:
            EmbeddedStore(index_dir, CONFIG, embedder=embedder)  # type: ignore[arg-type]
        except IndexNotFoundError:
            return None
        raise AssertionError("a store opened an index that has no committed generation") from None
    manifest = layout.read_manifest(generation)
    ids = manifest.chunk_ids()
    bm25 = Bm25Index.load(generation / "bm25")
    assert bm25.ids == ids, "BM25 side index out of step with the manifest"
    records = RecordsFile.open(generation / RECORDS, len(ids))
    assert records is not None, "chunk records missing or of another count"
    stored = [r[0] for r in records.rows(ids)]
    assert sorted(stored) == sorted(ids), "chunk records out of step with the manifest"
    assert Vectors(generation).matrix.shape[0] == len(ids), "vectors out of step"
    with EmbeddedStore(index_dir, CONFIG, embedder=embedder) as store:  # type: ignore[arg-type]
        stats = store.stats()
        assert (stats.documents, stats.chunks) == (len(manifest.documents), len(ids))
        hits = store.hybrid_search("annual report of the company", k=10)
        assert {h.chunk.chunk_id for h in hits} <= set(ids), "search returned a foreign chunk"
    return {d: e.content_hash for d, e in manifest.documents.items()}


@dataclasses.dataclass
class Tally:
    """What a kill loop saw."""

    kills: int = 0
    completed: int = 0
    lost: int = 0
    inconsistent: int = 0
    notes: list[str] = dataclasses.field(default_factory=list)


def kill_loop(
    zygote: Zygote,
    location: str,
    runs: Sequence[Sequence[Document]],
    kills: int,
    rng: random.Random,
    state: Callable[[], dict[str, str] | None],
    max_delay: float,
) -> Tally:
    """Kill ``kills`` ingests of the ``runs`` corpora in turn; check ``state()`` after each.

    The committed state must be the last corpus whose ingest committed, or (when
    the kill came after the commit) the one just given; anything else is lost
    (an older state) or inconsistent (no corpus at all, or a failed check).
    """
    tally = Tally()
    committed = state()
    keys = [corpus_key(r) for r in runs]
    took: dict[int, float] = {}
    attempt = 0
    while tally.kills < kills and attempt < kills * 3:
        target = keys[attempt % len(keys)]
        pid = zygote.run(location, runs[attempt % len(runs)])
        attempt += 1
        index = (attempt - 1) % len(runs)
        began = time.monotonic()
        killed = zygote.finish(pid, rng.uniform(0.0, took.get(index, max_delay)))
        if not killed:  # kills of the next runs of this corpus land within its duration
            took[index] = time.monotonic() - began
        tally.kills += killed
        tally.completed += not killed
        try:
            now = state()
        except AssertionError as exc:
            tally.inconsistent += 1
            tally.notes.append(f"kill {tally.kills}: {exc}")
            continue
        if now == target or (killed and now in (committed, WRITING)):
            committed = now if now != WRITING else committed
        elif now in keys:
            tally.lost += 1
            tally.notes.append(f"kill {tally.kills}: an older committed state came back")
        else:
            tally.inconsistent += 1
            tally.notes.append(f"kill {tally.kills}: the index holds no corpus that was given")
        if not killed and now != target:
            tally.notes.append(f"run {attempt}: completed but the index is not its corpus")
            tally.inconsistent += 1
    return tally


def rerun(location: str, documents: Sequence[Document], state: Callable[[], object]) -> bool:
    """Ingest ``documents`` in this process to the end; True when the index then holds them."""
    from thresher.index.backends import ingest

    ingest(list(documents), location, CONFIG, progress=False)
    return state() == corpus_key(documents)


#: what a server index mid-run (header ``state=writing``) is, for :func:`kill_loop`
WRITING = {"(state)": "writing"}


def server_state(url: str, embedder: object, cache: Path) -> dict[str, str] | None:
    """A server index as a reader opening it finds it: doc id -> content hash (None: no index;
    :data:`WRITING` when a killed run left it mid-run, which the next run completes).

    When the header says ``ready``, the chunk collection, the manifest collection and
    the reader's BM25 side index must hold the same chunk ids.
    """
    from thresher.index.server import layout as sl
    from thresher.index.server.store import ServerStore

    try:
        store = ServerStore(url, config=CONFIG, embedder=embedder, cache_dir=cache)  # type: ignore[arg-type]
    except IndexNotFoundError:
        return None
    with store:
        stats = store.stats()
        where = sl.parse_location(url)
        client = sl.connect(where)
        try:
            entries = sl.read_entries(client.get_collection(sl.manifest_name(where.collection)))
            chunk_ids = client.get_collection(where.collection).get(include=[])["ids"]
        finally:
            client.close()
        if stats.extra["state"] == "writing":
            return WRITING
        if stats.extra["state"] == "ready":
            wanted = sorted(c for e, _ in entries.values() for c in e.chunk_ids)
            assert sorted(chunk_ids) == wanted, "server chunks out of step with the manifest"
            assert stats.chunks == len(chunk_ids), "reader's BM25 out of step with the server"
        return {d: e.content_hash for d, (e, _) in entries.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=100, help="SIGKILLs of embedded ingests")
    parser.add_argument("--server-kills", type=int, default=10, help="of Chroma server ingests")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from thresher.index.embed.embedder import get_embedder

    embedder = get_embedder(CONFIG.retrieval.embedder)  # the one the ingest processes use
    rng = random.Random(args.seed)
    runs = corpora(args.seed)
    with tempfile.TemporaryDirectory(prefix="bench-kills-") as tmp:
        root = Path(tmp)
        index = root / "index"
        zygote = Zygote(root)
        try:
            started = time.perf_counter()
            zygote.finish(zygote.run(str(root / "probe"), runs[0]), 600)
            full = time.perf_counter() - started
            check = lambda: embedded_state(index, embedder)  # noqa: E731
            tally = kill_loop(zygote, str(index), runs, args.kills, rng, check, full)
            if args.server_kills:
                server_lost = _server(zygote, args.server_kills, runs, rng, root, embedder)
        finally:
            zygote.close()
        ok = rerun(str(index), runs[-1], lambda: embedded_state(index, embedder))
        print(
            f"embedded: {tally.kills} kills ({tally.completed} runs finished before their kill), "
            f"a full fresh ingest takes {full:.1f} s; rerun to the full corpus: "
            f"{'ok' if ok else 'FAILED'}"
        )
        lost = tally.lost + tally.inconsistent + (not ok)
        for note in tally.notes:
            print(f"  {note}")
        lost += server_lost if args.server_kills else 0
    print(f"lost or inconsistent states: {lost}")
    return 1 if lost else 0


def _server(zygote: Zygote, kills: int, runs: list[list[Document]], rng: random.Random,
            root: Path, embedder: object) -> int:  # fmt: skip
    """The server variant: returns its count of lost or inconsistent states."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from index.chroma_server import ChromaProcess

    with ChromaProcess(root / "chroma-data") as chroma:
        url = f"{chroma.url}/kills"
        check = lambda: server_state(url, embedder, root / "cache")  # noqa: E731
        tally = kill_loop(zygote, url, runs, kills, rng, check, SERVER_MAX_DELAY_S)
        ok = rerun(url, runs[-1], check)
    print(
        f"server: {tally.kills} kills ({tally.completed} runs finished before their kill); "
        f"rerun to the full corpus: {'ok' if ok else 'FAILED'}"
    )
    for note in tally.notes:
        print(f"  {note}")
    return tally.inconsistent + (not ok)


if __name__ == "__main__":
    sys.exit(main())
