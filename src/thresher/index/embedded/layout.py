"""The embedded index folder on disk: generations, ``CURRENT`` and the manifest.

::

    INDEX_DIR/
      CURRENT            one line: the name of the live generation ("gen-000003")
      ingest.lock        held (flock) by the one ingest allowed at a time
      gen-000003/
        manifest.json    format, versions, embedder, chunking, documents (corpus order)
        files.json       size and SHA-256 of every other file, written at commit
        records.sqlite3  every chunk: id, document id, text, metadata (embedded.records_file)
        vectors.npy      every chunk's vector, corpus order (embedded.vectors)
        ann.faiss      an HNSW graph over them, above retrieval.exact_dense_max_chunks
        bm25/            the BM25 index (Bm25Index.save)
        grep.sqlite3     the grep index: texts and trigrams (thresher.index.grep.side_index)

Every file of a generation is written once, before its commit, and only read
afterwards: readers open what ``CURRENT`` names in place and never write. An
ingest writes a new generation folder beside the live one, fsyncs it and then
replaces ``CURRENT`` atomically (write a temporary file, ``os.replace``), so a
process killed at any point leaves the last committed generation live and
complete. A folder written in an older format (``format_version`` below
:data:`~thresher.index.manifest.FOLDER_FORMAT`: format 1 kept its chunks in a
chromadb folder) is refused by readers with the command that rebuilds it, and an
ingest into it builds a new generation from its input.
Folders that ``CURRENT`` does not name are leftovers, removed by the next ingest,
except one a reader still holds (:mod:`thresher.index.embedded.holds`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thresher.errors import IndexNotFoundError, IndexVersionError, InputError
from thresher.index.manifest import FOLDER_FORMAT, DocEntry

__all__ = [
    "Manifest",
    "current_generation",
    "GENERATION_NAME",
    "read_manifest",
    "Summary",
    "read_summary",
    "write_manifest",
    "next_generation_name",
    "new_generation",
    "commit_generation",
    "ingest_lock",
    "fsync_tree",
    "read_format",
]

CURRENT = "CURRENT"
MANIFEST = "manifest.json"
#: A generation folder's name (its number in group 1).
GENERATION_NAME = re.compile(r"gen-(\d{6})")


@dataclass(slots=True)
class Manifest:
    """The description of one generation (``manifest.json``).

    ``documents`` is ordered: its order (then chunk position) is the corpus order.
    ``roots``: label -> real path of the folders its file documents were read
    under (see :mod:`thresher.index.ingest.roots`); None in an index written
    before they were recorded.
    """

    format_version: int
    thresher_version: str
    embedder: str
    dimension: int
    chunking: dict[str, Any]
    documents: dict[str, DocEntry] = field(default_factory=dict)
    sanitized: dict[str, int] = field(default_factory=dict)
    created_at: str = ""
    updated_at: str = ""
    roots: dict[str, str] | None = None

    @property
    def chunk_count(self) -> int:
        return sum(len(d.chunk_ids) for d in self.documents.values())

    def chunk_ids(self) -> list[str]:
        """Every chunk id in corpus order."""
        return [cid for d in self.documents.values() for cid in d.chunk_ids]

    def to_dict(self) -> dict[str, Any]:
        return {
            "format_version": self.format_version,
            "thresher_version": self.thresher_version,
            "embedder": {"name": self.embedder, "dimension": self.dimension},
            "chunking": self.chunking,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "counts": {"documents": len(self.documents), "chunks": self.chunk_count},
            "sanitized": self.sanitized,
            **({"roots": self.roots} if self.roots is not None else {}),
            "documents": [
                {"doc_id": doc_id, "content_hash": d.content_hash, "chunk_ids": d.chunk_ids,
                 "ingested_at": d.ingested_at, "sanitized": d.sanitized,
                 **({"origin": d.origin} if d.origin else {})}
                for doc_id, d in self.documents.items()
            ],
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Manifest:
        return cls(
            format_version=int(data["format_version"]),
            thresher_version=str(data.get("thresher_version", "?")),
            embedder=str(data["embedder"]["name"]),
            dimension=int(data["embedder"]["dimension"]),
            chunking=dict(data.get("chunking", {})),
            documents={
                d["doc_id"]: DocEntry(
                    d["content_hash"], list(d["chunk_ids"]), d.get("ingested_at", ""),
                    dict(d.get("sanitized", {})), str(d.get("origin", "")),
                )
                for d in data.get("documents", [])
            },
            sanitized=dict(data.get("sanitized", {})),
            created_at=str(data.get("created_at", "")),
            updated_at=str(data.get("updated_at", "")),
            roots=dict(data["roots"]) if isinstance(data.get("roots"), dict) else None,
        )  # fmt: skip


def current_generation(index_dir: Path) -> Path:
    """The live generation folder of ``index_dir``.

    Raises:
        IndexNotFoundError: no committed index there.
    """
    pointer = index_dir / CURRENT
    try:
        name = pointer.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        name = ""
    except OSError as exc:
        raise IndexNotFoundError(f"cannot read {pointer}: {exc.strerror}") from exc
    generation = index_dir / name
    if not GENERATION_NAME.fullmatch(name) or not (generation / MANIFEST).is_file():
        raise IndexNotFoundError(
            f"no index at {index_dir}; build one with `thresher index PATH --index {index_dir}`"
        )
    return generation


def read_manifest(generation: Path) -> Manifest:
    """Read and version-check ``generation/manifest.json``.

    Raises:
        IndexVersionError: written in a newer format than this thresher reads.
        IndexNotFoundError: the manifest is unreadable.
    """
    path = generation / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        int(data["format_version"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise IndexNotFoundError(f"index manifest {path} is unreadable: {exc}") from exc
    _check_version(data, generation)
    return Manifest.from_dict(data)


@dataclass(frozen=True, slots=True)
class Summary:
    """Everything in a manifest but its per-document entries (cheap to read at any size)."""

    format_version: int
    thresher_version: str
    embedder: str
    dimension: int
    chunking: dict[str, Any]
    documents: int
    chunks: int
    sanitized: dict[str, int]
    created_at: str
    updated_at: str


_DOCUMENTS_KEY = '\n "documents": ['  # how write_manifest starts the entries (indent=1, last key)


def read_summary(generation: Path) -> Summary:
    """The head of ``generation/manifest.json`` (counts, embedder, chunking), without
    parsing its per-document entries: a million-chunk manifest is ~200 MB of JSON.

    Raises:
        IndexVersionError: written in a newer format than this thresher reads.
        IndexNotFoundError: the manifest is unreadable.
    """
    path = generation / MANIFEST
    head = ""
    try:
        with path.open(encoding="utf-8") as fh:
            while _DOCUMENTS_KEY not in head and (piece := fh.read(1 << 16)):
                head += piece
    except OSError as exc:
        raise IndexNotFoundError(f"index manifest {path} is unreadable: {exc}") from exc
    cut = head.find(_DOCUMENTS_KEY)
    try:
        data = json.loads(head[:cut].rstrip().rstrip(",") + "}") if cut >= 0 else None
        counts = data["counts"] if data is not None else None
    except (ValueError, KeyError, TypeError):
        data = counts = None
    if data is None or counts is None:  # another writer's layout: read it all
        m = read_manifest(generation)
        return Summary(m.format_version, m.thresher_version, m.embedder, m.dimension,
                       m.chunking, len(m.documents), m.chunk_count, m.sanitized,
                       m.created_at, m.updated_at)  # fmt: skip
    _check_version(data, generation)
    return Summary(
        format_version=int(data["format_version"]),
        thresher_version=str(data.get("thresher_version", "?")),
        embedder=str(data["embedder"]["name"]),
        dimension=int(data["embedder"]["dimension"]),
        chunking=dict(data.get("chunking", {})),
        documents=int(counts["documents"]),
        chunks=int(counts["chunks"]),
        sanitized=dict(data.get("sanitized", {})),
        created_at=str(data.get("created_at", "")),
        updated_at=str(data.get("updated_at", "")),
    )


def _check_version(data: dict[str, Any], generation: Path) -> None:
    version = int(data["format_version"])
    written = f"thresher {data.get('thresher_version', '?')} (format {version})"
    if version > FOLDER_FORMAT:
        raise IndexVersionError(
            f"index at {generation.parent} was written by {written}; this thresher reads "
            f"format {FOLDER_FORMAT}: upgrade thresher"
        )
    if version < FOLDER_FORMAT:
        raise IndexVersionError(
            f"index at {generation.parent} was written by {written}, which this thresher "
            f"no longer reads (format {FOLDER_FORMAT}); rebuild it with "
            f"`thresher index PATH --index {generation.parent}`"
        )


def read_format(generation: Path) -> int:
    """The ``format_version`` of ``generation``'s manifest, unchecked.

    Raises:
        IndexNotFoundError: the manifest is unreadable.
    """
    path = generation / MANIFEST
    try:
        with path.open(encoding="utf-8") as fh:
            head = fh.read(1 << 12)
        match = re.search(r'"format_version":\s*(\d+)', head)
        if match is None:
            return int(json.loads(path.read_text(encoding="utf-8"))["format_version"])
        return int(match.group(1))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise IndexNotFoundError(f"index manifest {path} is unreadable: {exc}") from exc


def write_manifest(generation: Path, manifest: Manifest) -> None:
    """Write ``manifest.json`` into ``generation`` and fsync it."""
    path = generation / MANIFEST
    with path.open("w", encoding="utf-8") as fh:
        json.dump(manifest.to_dict(), fh, indent=1, ensure_ascii=False)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())


def next_generation_name(index_dir: Path) -> str:
    """The name after every generation folder present (numbers are never reused)."""
    numbers = [
        int(m.group(1)) for p in index_dir.iterdir() if (m := GENERATION_NAME.fullmatch(p.name))
    ]
    return f"gen-{max(numbers, default=0) + 1:06d}"


def new_generation(index_dir: Path, name: str | None = None) -> Path:
    """Create the empty generation folder ``name`` (default: :func:`next_generation_name`)."""
    generation = index_dir / (name or next_generation_name(index_dir))
    generation.mkdir()
    return generation


def commit_generation(index_dir: Path, generation: Path) -> None:
    """Make ``generation`` the live one: list its files (``files.json``,
    :mod:`~thresher.index.embedded.checksums`), fsync it, then replace ``CURRENT``
    atomically."""
    from thresher.index.embedded.checksums import record_files

    record_files(generation)  # sizes and checksums, checked when the generation is read
    fsync_tree(generation)
    temp = index_dir / f"{CURRENT}.tmp"
    with temp.open("w", encoding="utf-8") as fh:
        fh.write(generation.name + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(temp, index_dir / CURRENT)
    _fsync_dir(index_dir)


@contextlib.contextmanager
def ingest_lock(index_dir: Path, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold the index's writer lock (blocks while another ingest runs).

    ``on_wait`` is called once, before blocking, when another ingest holds the
    lock (so a person can be told why nothing happens).
    """
    try:
        fh = (index_dir / "ingest.lock").open("a+")
    except OSError as exc:
        raise InputError(
            f"cannot lock index folder {index_dir}: {exc.strerror}; an ingest needs a folder "
            "it can write (searching works on a read-only one)"
        ) from exc
    with fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait()
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def fsync_tree(root: Path) -> None:
    """fsync every file and folder under ``root`` (and ``root`` itself)."""
    for folder, _dirs, files in os.walk(root):
        for name in files:
            fd = os.open(os.path.join(folder, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        _fsync_dir(Path(folder))


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
