"""Holding generations against removal while they are read, and removing the rest.

Each reader keeps a shared ``flock`` on the ``manifest.json`` of every generation
it has open (:func:`hold_generation`; a pinned store keeps a retired one open),
and an ingest removes only the folders nobody holds
(:func:`remove_stale_generations`), leaving a held one for a later ingest (the
kernel drops a dead reader's lock). A read-only folder is held the same way (a
lock needs only a file open for reading).

An ingest removes only generations that ``CURRENT`` does not name, so a reader
opens the live one with :func:`hold_current`: read ``CURRENT``, take the hold,
and read ``CURRENT`` again; if an ingest committed in between (and may have
removed the folder before the hold was taken), start over.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from pathlib import Path

from thresher.errors import IndexNotFoundError
from thresher.index.embedded.layout import CURRENT, GENERATION_NAME, MANIFEST, current_generation

__all__ = [
    "hold_generation",
    "hold_current",
    "drop_hold",
    "remove_stale_generations",
    "HOLD_ATTEMPTS",
]

#: Commits in a row :func:`hold_current` tolerates before it gives up.
HOLD_ATTEMPTS = 20


def hold_generation(generation: Path) -> int | None:
    """Hold ``generation`` against removal by an ingest while it is read: a shared lock
    on its manifest, kept until :func:`drop_hold` (or the process ends). None when it
    cannot be held (gone, being removed, or a file system without locks)."""
    try:
        fd = os.open(generation / MANIFEST, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return fd
    except OSError:
        os.close(fd)
        return None


def hold_current(index_dir: Path) -> tuple[Path, int | None]:
    """The live generation of ``index_dir`` and its hold (see the module docstring).

    The hold is None only on a file system without locks (the generation is then
    read unheld, as before holds existed).

    Raises:
        IndexNotFoundError: no committed index there, or ``CURRENT`` changed on every
            one of :data:`HOLD_ATTEMPTS` reads (ingests committing without pause).
    """
    for _ in range(HOLD_ATTEMPTS):
        generation = current_generation(index_dir)
        hold = hold_generation(generation)
        with contextlib.suppress(OSError):
            if (index_dir / CURRENT).read_text(encoding="utf-8").strip() == generation.name:
                return generation, hold  # still live: no ingest removes it
        drop_hold(hold)
    raise IndexNotFoundError(
        f"{index_dir}: a new generation was committed on each of {HOLD_ATTEMPTS} attempts "
        "to open the live one; open it again when the ingests pause"
    )


def drop_hold(fd: int | None) -> None:
    """Let an ingest remove the generation :func:`hold_generation` held (None: nothing)."""
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)


def remove_stale_generations(index_dir: Path, keep: Path | None) -> list[str]:
    """Delete every generation folder except ``keep`` and those a reader holds
    (:func:`hold_generation`); returns the names removed."""
    removed = []
    for path in sorted(index_dir.iterdir()):
        stale = GENERATION_NAME.fullmatch(path.name) and path.is_dir() and path != keep
        if stale and _remove_unheld(path):
            removed.append(path.name)
    with contextlib.suppress(FileNotFoundError):
        (index_dir / f"{CURRENT}.tmp").unlink()
    return removed


def _remove_unheld(generation: Path) -> bool:
    """Delete ``generation`` unless a reader holds it; whether it was deleted. Its
    manifest is locked exclusively while it goes, so no reader takes it meanwhile."""
    try:
        fd: int | None = os.open(generation / MANIFEST, os.O_RDONLY)
    except OSError:
        fd = None  # no manifest: an unfinished generation, which no reader opens
    if fd is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        except OSError:
            pass  # no locks on this file system: removed, as before locks were taken
    try:
        shutil.rmtree(generation, ignore_errors=True)
    finally:
        if fd is not None:
            os.close(fd)
    return True
