"""Read copies of a committed generation's chromadb folder: one per generation, shared.

The layout promises that readers never write to an index folder, but chromadb
(1.5.9) has no read-only open: starting a ``PersistentClient`` inserts a row
into its sqlite table ``acquire_write`` (``rust/sqlite/src/db.rs``), and while
an HNSW segment has never been persisted (no ``index_metadata.pickle``: fewer
records than its ``sync_threshold``) every load rebuilds it from the log and
rewrites its files in place. A reader opening the committed generation itself
would change it under every other reader, and on a read-only folder chromadb
fails with "attempt to write a readonly database".

So chromadb runs on a copy, and one copy serves every reader of a generation:

- **shared copy** (the usual case): ``thresher-gen-KEY/chroma``, made once per
  generation (at commit by :func:`prepare_read_copy`, else by the first reader)
  and opened in place by every later reader, in any process: opening costs
  chromadb's own open, not a copy of the folder (28 s at 1M chunks before).
  Readers write to it only what chromadb writes on open (one sqlite row, under
  sqlite's own locking); its persisted HNSW files are only read. Before it is
  published, the HNSW log tail is persisted in it (:func:`_settle`), so no
  reader replays it, and for an index of at most ``retrieval.exact_dense_max_chunks``
  chunks (its default) every vector is saved beside it (``vectors.npy``,
  :attr:`ReadCopy.vectors`): exact dense search reads them in milliseconds instead
  of every reader paging them out of chromadb (0.3 CPU s for 6k chunks, most of a
  CLI search's first query); so is every chunk record (``records.sqlite3``,
  :attr:`ReadCopy.records`, :mod:`~thresher.index.embedded.saved_records`), so a
  reader that only searches and reads never starts chromadb. Each reader holds a shared ``flock`` on its ``users.lock`` while open; the kernel drops it
  when a reader dies, so a killed reader leaves nothing behind.
- **private copy**: ``thresher-read-PID-…``, for a generation whose HNSW
  segment was never persisted (a small index, cheap to copy: chromadb rewrites
  those files on every load, which readers must not do to each other), or when
  the shared copy cannot be made. Removed at close; one whose process is gone
  is removed by the next open.

A shared copy whose generation is no longer what its index's ``CURRENT`` names
(or whose index is gone) is removed by the reader that releases it last, else
by the next open or commit that finds no reader holding it (a reader in
another process, or one killed). Copies live in the ``read-copies`` cache
(:func:`thresher.paths.cache_dir`), else the system temporary folder. The BM25 and grep side indexes are read in place: they are
only ever read. No library offers a read-only chromadb open.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import shutil
import tempfile
import uuid
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thresher.errors import InputError
from thresher.paths import CACHE_ENV, cache_dir

__all__ = [
    "ReadCopy",
    "copies_root",
    "make_read_copy",
    "prepare_read_copy",
    "remove_read_copy",
    "shared_copy_path",
]

_PRIVATE = "thresher-read-"  # thresher-read-PID-…: one reader's own copy
_MAKING = "thresher-make-"  # thresher-make-PID-…: a shared copy being made
_TRASH = "thresher-trash-"  # thresher-trash-PID-…: a shared copy being removed
_SHARED = "thresher-gen-"  # thresher-gen-KEY: the shared copy of one generation
_USERS = "users.lock"
_SOURCE = "source"
_HNSW_DONE = "index_metadata.pickle"  # chromadb writes it when it persists a segment
#: what a shared copy holds beside chroma/ (2: chunk records too); part of its name, so
#: a copy made by an older thresher is superseded and made again once
_COPY_FORMAT = "2"


@dataclass(slots=True)
class ReadCopy:
    """A chroma folder to open chromadb on (``path``), held until :meth:`release`.

    ``shared``: the generation's shared copy (its reader lock dropped on release, and
    the copy removed then if its generation is no longer live and no other reader
    holds it); else a private copy (deleted on release).
    """

    path: Path
    shared: bool
    _lock_fd: int | None = field(default=None, repr=False)

    @property
    def vectors(self) -> Path | None:
        """The folder holding the generation's saved vectors
        (:func:`~thresher.index.embedded.exact_dense.save_vectors`), None when it has none."""
        from thresher.index.embedded.exact_dense import VECTORS

        return self.path.parent if (self.path.parent / VECTORS).is_file() else None

    @property
    def records(self) -> Path | None:
        """The folder holding the generation's saved chunk records
        (:func:`~thresher.index.embedded.saved_records.save_records`), None when it has none."""
        from thresher.index.embedded.saved_records import RECORDS

        return self.path.parent if (self.path.parent / RECORDS).is_file() else None

    def release(self) -> None:
        """Stop using the copy (twice is fine)."""
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._lock_fd)
            self._lock_fd = None
            if self.shared and _superseded(self.path.parent):
                _remove_unused(self.path.parent)  # the last reader of a retired generation
        if not self.shared:
            shutil.rmtree(self.path.parent, ignore_errors=True)  # thresher-read-PID-…/


def copies_root() -> Path:
    """Where read copies are made (see the module docstring); not created here."""
    return cache_dir("read-copies")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _owner_gone(name: str, prefix: str) -> bool:
    owner, _, _ = name[len(prefix) :].partition("-")
    return owner.isdigit() and int(owner) != os.getpid() and not _alive(int(owner))


def _superseded(copy: Path) -> bool:
    """Whether a shared copy's generation is gone, no longer its index's live one, or
    built again (same folder name, another database file)."""
    try:
        source = Path((copy / _SOURCE).read_text(encoding="utf-8").strip())
        generation = source.parent
        live = (generation.parent / "CURRENT").read_text(encoding="utf-8").strip()
        return live != generation.name or copy.name != f"{_SHARED}{_key(source)}"
    except OSError:
        return True  # unfinished, damaged, or its index is gone


def _remove_unused(copy: Path) -> None:
    """Remove a shared copy if no reader holds it (a reader's lock makes this a no-op)."""
    try:
        fd = os.open(copy / _USERS, os.O_RDONLY)
    except OSError:
        fd = None  # no lock file: never finished
    try:
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        trash = copy.parent / f"{_TRASH}{os.getpid()}-{uuid.uuid4().hex[:12]}"
        os.rename(copy, trash)  # readers find it by name: gone for them from here on
    except OSError:
        return
    finally:
        if fd is not None:
            os.close(fd)
    shutil.rmtree(trash, ignore_errors=True)


def _sweep(root: Path) -> None:
    """Remove copies whose process is gone and shared copies no reader needs any more."""
    with contextlib.suppress(OSError):
        for entry in root.iterdir():
            name = entry.name
            for prefix in (_PRIVATE, _MAKING, _TRASH):
                if name.startswith(prefix) and _owner_gone(name, prefix):
                    shutil.rmtree(entry, ignore_errors=True)
            if name.startswith(_SHARED) and _superseded(entry):
                _remove_unused(entry)


def _copy_tree(source: Path, target: Path) -> None:
    """Copy files and folders (contents only: a read-only source gives a writable copy)."""
    for folder, _dirs, files in os.walk(source):
        rel = Path(folder).relative_to(source)
        (target / rel).mkdir(parents=True, exist_ok=True)
        for name in files:
            shutil.copyfile(Path(folder) / name, target / rel / name)


def _usable_root() -> Path:
    root = copies_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
        if os.access(root, os.W_OK | os.X_OK):
            return root
    except OSError:
        pass
    return Path(tempfile.gettempdir())


def _shareable(chroma_dir: Path) -> bool:
    """Whether readers only read the generation's HNSW files (every segment persisted)."""
    segments = [p for p in chroma_dir.iterdir() if p.is_dir()]
    return all((p / _HNSW_DONE).is_file() for p in segments)


def _key(chroma_dir: Path) -> str:
    """Names one generation's chroma folder: its real path and its database file's
    identity (a generation built again under the same name gets a new key)."""
    st = (chroma_dir / "chroma.sqlite3").stat()
    real = os.path.realpath(chroma_dir)
    return hashlib.sha256(
        f"{real}\0{st.st_ino}\0{st.st_mtime_ns}\0{st.st_size}\0{_COPY_FORMAT}".encode()
    ).hexdigest()[:24]


def shared_copy_path(chroma_dir: Path) -> Path:
    """Where the shared copy of ``chroma_dir`` is (or would be) kept."""
    return _usable_root() / f"{_SHARED}{_key(chroma_dir)}"


def _copy_failed(chroma_dir: Path, root: Path, exc: OSError) -> InputError:
    return InputError(
        f"cannot copy {chroma_dir} for reading into {root}: {exc.strerror or exc}; free "
        f"space there or set {CACHE_ENV} to a writable folder"
    )


#: the ``sync_threshold`` a copy is settled with (chromadb's smallest: its ``batch_size``)
_SETTLE_THRESHOLD = 100


def _settle(chroma: Path) -> None:
    """Persist each HNSW segment's log tail in a fresh, not yet published copy.

    chromadb persists an HNSW segment every ``sync_threshold`` (1000) records and
    replays the records past that point into memory on every load: up to 999
    inserts, ~0.4 CPU s for each reader's first search on the dev index. Here
    the threshold is lowered, one query makes chromadb apply and persist the
    tail, and the threshold is set back, so readers load the segment as it is.
    Only the copy changes; a failure leaves it to the caller to copy afresh.
    """
    from thresher.index.embedded.collection import open_client

    client = open_client(chroma)
    try:
        for collection in client.list_collections():
            with warnings.catch_warnings():  # chromadb warns of its own legacy config key
                warnings.simplefilter("ignore", DeprecationWarning)
                hnsw = dict((collection.configuration or {}).get("hnsw") or {})
            threshold = hnsw.get("sync_threshold")
            if not threshold or threshold <= _SETTLE_THRESHOLD:
                continue
            # lowered before anything loads the segment (a loaded one keeps its threshold)
            collection.modify(configuration={"hnsw": {"sync_threshold": _SETTLE_THRESHOLD}})
            first = collection.get(limit=1, include=["embeddings"])["embeddings"]
            if first is not None and len(first):
                collection.query(query_embeddings=[first[0]], n_results=1, include=[])
            collection.modify(configuration={"hnsw": {"sync_threshold": threshold}})
        _save_vectors(client, chroma.parent)
    finally:
        client.close()


def _save_vectors(client: Any, folder: Path) -> None:
    """Save the vectors and the chunk records of the generation's collection (an index
    folder's chroma holds one) into ``folder`` when it is small enough."""
    from thresher.config import RetrievalConfig
    from thresher.index.embedded.exact_dense import save_vectors
    from thresher.index.embedded.saved_records import save_records

    collections = client.list_collections()
    if len(collections) == 1:
        collection = client.get_collection(collections[0].name)
        # as many as exact dense search reads by default (1.5 KB a chunk, plus its text)
        if collection.count() <= RetrievalConfig().exact_dense_max_chunks:
            save_vectors(collection, folder)
            save_records(collection, folder)


def _make_shared(chroma_dir: Path, target: Path) -> None:
    """Copy ``chroma_dir``, settle the copy (:func:`_settle`) and publish it as ``target``
    (atomically; a concurrent maker's copy wins and ours is dropped)."""
    making = target.parent / f"{_MAKING}{os.getpid()}-{uuid.uuid4().hex[:12]}"
    try:
        _copy_tree(chroma_dir, making / "chroma")
        try:
            _settle(making / "chroma")
        except Exception:  # noqa: BLE001 - chromadb's own errors: publish a plain copy
            shutil.rmtree(making, ignore_errors=True)
            _copy_tree(chroma_dir, making / "chroma")
        (making / _USERS).touch()
        (making / _SOURCE).write_text(os.path.realpath(chroma_dir) + "\n", encoding="utf-8")
        os.rename(making, target)
    except OSError as exc:
        shutil.rmtree(making, ignore_errors=True)
        if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
            raise _copy_failed(chroma_dir, target.parent, exc) from exc


def _hold(target: Path) -> int | None:
    """A shared lock on ``target``'s reader lock, or None if it is gone or being removed."""
    try:
        fd = os.open(target / _USERS, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        if os.stat(target / _USERS).st_ino == os.fstat(fd).st_ino:
            return fd  # still published under that name
    except OSError:
        pass
    os.close(fd)
    return None


def prepare_read_copy(chroma_dir: Path) -> Path | None:
    """Make the shared read copy of a just-committed generation's ``chroma_dir`` now, so
    that no reader pays for it; returns it (None when the generation gets private copies).
    Also removes shared copies no longer needed.

    Raises:
        InputError: the copy could not be made (no space, nowhere writable).
    """
    root = _usable_root()
    _sweep(root)
    if not _shareable(chroma_dir):
        return None
    target = root / f"{_SHARED}{_key(chroma_dir)}"
    if not target.is_dir():
        _make_shared(chroma_dir, target)
    return target / "chroma"


def _check_source(chroma_dir: Path) -> None:
    """The generation's chromadb database is there and is an SQLite file, when the
    generation keeps a listing (:func:`~thresher.index.embedded.side_files.check_chroma`).

    Raises:
        IndexDamagedError: it is missing or is not SQLite.
    """
    from thresher.index.embedded import side_files

    generation = chroma_dir.parent
    if side_files.read_files(generation) is not None:
        side_files.check_chroma(generation)


def make_read_copy(chroma_dir: Path) -> ReadCopy:
    """A copy of ``chroma_dir`` to open chromadb on, never the original: the generation's
    shared copy (made if missing), or a private one (see the module docstring).

    Args:
        chroma_dir: a committed generation's ``chroma/`` folder (only read).

    Returns:
        The copy, held until its :meth:`ReadCopy.release`.

    Raises:
        InputError: the copy could not be made (no space, nowhere writable).
        IndexDamagedError: a chromadb file the copy is made from is not the one
            committed (:mod:`~thresher.index.embedded.side_files`).
    """
    root = _usable_root()
    _sweep(root)
    if _shareable(chroma_dir):
        target = root / f"{_SHARED}{_key(chroma_dir)}"
        for _ in range(3):  # a copy removed between our look and our lock: make it again
            if not target.is_dir():
                _check_source(chroma_dir)
                _make_shared(chroma_dir, target)
            fd = _hold(target)
            if fd is not None:
                return ReadCopy(target / "chroma", shared=True, _lock_fd=fd)
    _check_source(chroma_dir)
    private = root / f"{_PRIVATE}{os.getpid()}-{uuid.uuid4().hex[:12]}"
    try:
        _copy_tree(chroma_dir, private / "chroma")
    except OSError as exc:
        shutil.rmtree(private, ignore_errors=True)
        raise _copy_failed(chroma_dir, root, exc) from exc
    return ReadCopy(private / "chroma", shared=False)


def remove_read_copy(copy: ReadCopy) -> None:
    """Release a read copy (see :meth:`ReadCopy.release`)."""
    copy.release()
