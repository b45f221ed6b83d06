"""Writing one generation's files: the chunks kept from the live one plus the new ones.

An ingest or a deletion names the new generation's chunks in corpus order; each
chunk is either new (embedded in this run: :class:`NewChunks`, filled by
:func:`thresher.index.ingest.common.write_chunks`) or kept from the live generation,
whose record and vector are copied as they are (never re-embedded). From them
:func:`write_generation` writes the records, the vectors (and the HNSW graph of a
large index), the BM25 index and the grep index (layout in
:mod:`thresher.index.embedded.layout`); the caller commits.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from thresher.errors import IndexNotFoundError
from thresher.index.bm25 import Bm25Index
from thresher.index.embedded.records_file import RECORDS, RecordsFile, Row, write_records
from thresher.index.embedded.vectors import Vectors, write_vectors
from thresher.index.grep import side_index as grep_index
from thresher.index.grep.side_index import GrepIndex
from thresher.index.ingest.common import text_key
from thresher.index.records import indexed_text

__all__ = ["NewChunks", "OldGeneration", "write_generation"]

_READ = 5000


class NewChunks:
    """The chunks embedded in this run: what :func:`~thresher.index.ingest.common.write_chunks`
    writes (its ``collection``: this object's :meth:`add`), kept until the generation is
    written."""

    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}
        self.vectors: dict[str, np.ndarray] = {}

    def add(
        self,
        ids: Sequence[str],
        documents: Sequence[str],
        metadatas: Sequence[Mapping[str, Any]],
        embeddings: np.ndarray,
    ) -> None:
        """Keep these chunks (their texts, flat metadata and vectors)."""
        for i, (cid, text, meta) in enumerate(zip(ids, documents, metadatas, strict=True)):
            self.rows[cid] = (cid, str(meta.get("doc_id", "")), text, json.dumps(dict(meta)))
            self.vectors[cid] = np.array(embeddings[i], dtype=np.float32)


class OldGeneration:
    """The live generation an ingest or a deletion starts from (its chunk ids in corpus
    order, as its manifest lists them)."""

    def __init__(self, generation: Path, ids: Sequence[str]) -> None:
        records = RecordsFile.open(generation / RECORDS, len(ids))
        if records is None:
            raise IndexNotFoundError(
                f"{generation}/{RECORDS} is missing or damaged; rebuild the index "
                f"with `thresher index PATH --index {generation.parent}`"
            )
        self.records = records
        self.matrix = Vectors(generation).matrix
        self.row = {cid: i for i, cid in enumerate(ids)}

    def reusable(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The vectors of these chunks keyed by :func:`~thresher.index.ingest.common.text_key`
        of their indexed text (a re-chunked document reuses those of unchanged texts)."""
        out: dict[str, np.ndarray] = {}
        for start in range(0, len(ids), _READ):
            for cid, _doc, text, meta in self.records.rows(ids[start : start + _READ]):
                title = str(json.loads(meta).get("title", ""))
                out[text_key(indexed_text(title, text))] = np.array(
                    self.matrix[self.row[cid]], dtype=np.float32
                )
        return out


def write_generation(
    generation: Path,
    ids: Sequence[str],
    new: NewChunks,
    old: OldGeneration | None,
    dimension: int,
    *,
    ann: bool,
) -> None:
    """Write the files of ``generation`` holding the chunks ``ids`` (corpus order): each
    from ``new`` when it is there, else kept from ``old``.

    Raises:
        IndexNotFoundError: a chunk is in neither (the live generation lost it).
    """
    matrix = np.zeros((len(ids), dimension), dtype=np.float32)
    rows: list[Row | None] = [None] * len(ids)
    kept: list[int] = []
    for i, cid in enumerate(ids):
        if cid in new.rows:
            rows[i] = new.rows[cid]
            matrix[i] = new.vectors[cid]
        else:
            kept.append(i)
    if kept and old is not None:
        for start in range(0, len(kept), _READ):
            part = kept[start : start + _READ]
            found = {r[0]: r for r in old.records.rows([ids[i] for i in part])}
            for i in part:
                row = found.get(ids[i])
                if row is not None:
                    rows[i] = row
                    matrix[i] = old.matrix[old.row[ids[i]]]
    lost = [ids[i] for i, r in enumerate(rows) if r is None]
    if lost:
        raise IndexNotFoundError(
            f"index copy lost {len(lost)} chunks (first: {lost[0]}); rebuild the index"
        )
    done = [r for r in rows if r is not None]
    write_records(generation / RECORDS, done)
    write_vectors(generation, matrix, ann=ann)
    titles = [str(json.loads(meta).get("title", "")) for _, _, _, meta in done]
    Bm25Index.build(
        list(ids), [indexed_text(t, text) for t, (_, _, text, _) in zip(titles, done, strict=True)]
    ).save(generation / "bm25")
    GrepIndex.build(generation / grep_index.FILE, (text for _, _, text, _ in done))
