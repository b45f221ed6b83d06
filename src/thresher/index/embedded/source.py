"""One generation's files opened for reading: the embedded index's chunk source.

:func:`open_generation` checks what the commit recorded (every file there with its
size, the BM25 id map's checksums: :mod:`thresher.index.embedded.checksums`), then
opens BM25 (``bm25/``), the grep side index (``grep.sqlite3``), the chunk records
(``records.sqlite3``) and the vectors (``vectors.npy``, ``ann.faiss``) in place:
every file is written once, at commit, and only read afterwards, so readers share
them without copies or locks, and a read-only folder reads like any other.
:class:`FolderSource` answers a store's reads and searches from them
(:class:`~thresher.index.view.ChunkSource`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from thresher.corpus.document import Chunk
from thresher.errors import IndexDamagedError
from thresher.index.bm25 import Bm25Index
from thresher.index.embedded import checksums
from thresher.index.embedded.records_file import RECORDS, RecordsFile
from thresher.index.embedded.vectors import Vectors
from thresher.index.exact_dense import ExactDense
from thresher.index.grep import side_index as grep_index
from thresher.index.grep.side_index import GrepIndex, scan_texts
from thresher.index.id_table import positions_of
from thresher.index.view import IndexView

__all__ = ["FolderSource", "open_generation"]


def _damaged(
    generation: Path, what: str, exc: BaseException | None = None, state: str = "is unreadable"
) -> IndexDamagedError:
    index_dir = generation.parent
    detail = ""
    if exc is not None:
        text = str(exc).strip()
        detail = f" ({text.splitlines()[0] if text else type(exc).__name__})"
    return IndexDamagedError(
        f"the index at {index_dir} is damaged: {generation.name}/{what} {state}"
        f"{detail}; rebuild it with `thresher index PATH --index {index_dir}`"
    )


class FolderSource:
    """The :class:`~thresher.index.view.ChunkSource` over one generation's files."""

    local = True

    def __init__(
        self,
        ids: Sequence[str],
        positions: Mapping[str, int],
        records: RecordsFile,
        grep: GrepIndex,
        vectors: Vectors,
    ) -> None:
        self.ids = ids  # corpus order: ids[row] is the chunk of vector row ``row``
        self.positions = positions
        self.records = records
        self.grep = grep
        self.vectors = vectors

    def chunks(self, ids: Sequence[str]) -> dict[str, Chunk]:
        return self.records.chunks(ids)

    def document(self, doc_id: str) -> list[Chunk]:
        return self.records.document(doc_id)

    def matching(self, where: Mapping[str, Any]) -> set[str]:
        return self.records.matching(where)

    def nearest(
        self, vector: np.ndarray, n: int, ids: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        if ids is None and self.vectors.has_ann:
            return [(self.ids[row], sim) for row, sim in self.vectors.nearest(vector, n)]
        if ids is None:
            rows = list(range(len(self.ids)))
        else:
            rows = [r for r in positions_of(self.positions, ids) if r is not None]
        scored = zip(rows, self.vectors.scores(vector, rows), strict=True)
        best = sorted(((self.ids[r], s) for r, s in scored), key=lambda p: (-p[1], p[0]))
        return best[:n]

    def embeddings(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        rows = dict(zip(ids, positions_of(self.positions, ids), strict=True))
        return {
            c: np.asarray(self.vectors.matrix[r], dtype=np.float32)
            for c, r in rows.items()
            if r is not None
        }

    def regex_ids(self, rust_pattern: str, pattern: str) -> list[str]:
        return scan_texts(self.grep, self.ids, pattern)

    def all_vectors(self) -> ExactDense:
        return ExactDense(list(self.ids), np.asarray(self.vectors.matrix, dtype=np.float32))


def open_generation(generation: Path) -> IndexView:
    """The view of ``generation`` (committed, format of this thresher) over its files.

    Raises:
        IndexDamagedError: a file is missing, of another size than committed,
            unreadable, or its id map not the one written.
    """
    files = checksums.read_files(generation)
    if files is None:
        raise _damaged(generation, checksums.FILES, state="is missing")
    checksums.check_sizes(generation, files)
    checksums.verify(generation, files, checksums.ID_MAP)
    try:
        bm25 = Bm25Index.load(generation / "bm25")
    except (OSError, ValueError, EOFError, KeyError) as exc:
        raise _damaged(generation, "bm25", exc) from exc
    count = len(bm25)
    grep = GrepIndex.open(generation / grep_index.FILE, count)
    if grep is None:
        raise _damaged(generation, grep_index.FILE)
    records = RecordsFile.open(generation / RECORDS, count)
    if records is None:
        raise _damaged(generation, RECORDS)
    try:
        vectors = Vectors(generation)
    except (OSError, ValueError, EOFError) as exc:
        raise _damaged(generation, "vectors.npy", exc) from exc
    if vectors.matrix.ndim != 2 or vectors.matrix.shape[0] != count:
        raise _damaged(generation, "vectors.npy")
    source = FolderSource(bm25.id_list, bm25.positions, records, grep, vectors)
    return IndexView.of(source, bm25, grep)
