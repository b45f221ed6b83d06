"""Private read copies of a committed generation's chromadb folder.

The layout promises that readers never write to an index folder, but chromadb
(1.5.9) has no read-only open: starting a ``PersistentClient`` inserts a row
into its sqlite table ``acquire_write``, and the HNSW segment files are
rewritten as the client loads and releases them. A reader opening the
committed generation itself would change it under every other reader (and a
reader killed mid-write could damage it), and on a read-only folder chromadb
fails with "attempt to write a readonly database".

So the embedded store opens chromadb on a private copy of the generation's
``chroma/`` folder, made when it opens a generation and removed when it
closes (or at interpreter exit). Copies live under ``$THRESHER_READ_COPIES``,
else ``$XDG_CACHE_HOME/thresher/read-copies`` (``~/.cache``), else the system
temporary folder; each is named ``thresher-read-PID-…`` after the process that
made it, and a copy whose process is gone (killed) is removed by the next open. The cost is one
copy of the chroma folder per open store (the BM25 side index is read in
place: it is only ever read). No library offers a read-only chromadb open, and
copying is the one way to keep chromadb's writes away from the generation.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
from pathlib import Path

from thresher.errors import InputError

__all__ = ["copies_root", "make_read_copy", "remove_read_copy"]

_ENV = "THRESHER_READ_COPIES"
_PREFIX = "thresher-read-"


def copies_root() -> Path:
    """Where read copies are made (see the module docstring); not created here."""
    explicit = os.environ.get(_ENV)
    if explicit:
        return Path(explicit)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "thresher" / "read-copies"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _sweep(root: Path) -> None:
    """Remove copies whose process is gone (a reader killed before it could clean up)."""
    with contextlib.suppress(OSError):
        for entry in root.iterdir():
            if not entry.name.startswith(_PREFIX):
                continue
            owner, _, _ = entry.name[len(_PREFIX) :].partition("-")
            if owner.isdigit() and int(owner) != os.getpid() and not _alive(int(owner)):
                shutil.rmtree(entry, ignore_errors=True)


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


def make_read_copy(chroma_dir: Path) -> Path:
    """A private, writable copy of ``chroma_dir``; open chromadb on it, never on the original.

    Args:
        chroma_dir: a committed generation's ``chroma/`` folder (only read).

    Returns:
        The copy's folder (remove it with :func:`remove_read_copy` when done).

    Raises:
        InputError: the copy could not be made (no space, nowhere writable).
    """
    root = _usable_root()
    _sweep(root)
    target = root / f"{_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:12]}"
    try:
        _copy_tree(chroma_dir, target)
    except OSError as exc:
        shutil.rmtree(target, ignore_errors=True)
        raise InputError(
            f"cannot copy {chroma_dir} for reading into {root}: {exc.strerror or exc}; free "
            f"space there or set {_ENV} to a writable folder"
        ) from exc
    return target


def remove_read_copy(copy: Path) -> None:
    """Delete a read copy (missing is fine)."""
    shutil.rmtree(copy, ignore_errors=True)
