"""Reading one file within bounds: the file the walk found, opened safely, read no further
than a limit.

A folder is listed first and its files read later, so a file may change in
between: become a link to a file outside the folders named, a FIFO (whose open
blocks until a writer comes, forever), or another file. :func:`open_checked`
opens without following a link (``O_NOFOLLOW``; a link the walk accepted is
followed) and without blocking (``O_NONBLOCK``, cleared once open), then checks
the handle: a regular file, with the device and inode recorded when the file
was listed (:func:`identity`). Anything else raises
:class:`~thresher.corpus.decode.UnreadableFileError` with the reason ``changed``.

Sizes are bounded before any parser runs, all derived from the document size
limit (:class:`ReadLimits`); :func:`~thresher.corpus.decode.read_capped` reads a stream no further
than its limit (a file may grow after it was measured), and
:func:`check_zip` measures a zip-based file (``.docx``) by decompressing
every entry in bounded steps (the sizes its headers declare may lie).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from thresher.corpus.decode import UnreadableFileError, too_large_error

__all__ = [
    "FileIdentity",
    "ReadLimits",
    "check_zip",
    "identity",
    "open_checked",
]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_STEP = 1 << 16


@dataclass(frozen=True, slots=True)
class ReadLimits:
    """The most bytes reading one file may take, from the document size limit.

    Attributes:
        max_chars: the most characters one document may have.
    """

    max_chars: int

    @property
    def file_bytes(self) -> int:
        """A file read whole (text, HTML, code, a table, one JSON document, a PDF or
        ``.docx`` on disk, a ``.gz`` decompressed): 4 bytes per character, the most
        UTF-8 takes, so a larger file certainly holds a document over the limit."""
        return 4 * self.max_chars

    @property
    def record_bytes(self) -> int:
        """One JSON Lines line, or a ``.json`` file parsed whole: 16 bytes per
        character (a record's text may be all ``\\uXXXX`` escapes, and carries a title
        and metadata besides; a ``.json`` of many records is parsed at once)."""
        return 16 * self.max_chars

    @property
    def unzipped_bytes(self) -> int:
        """The entries of a ``.docx`` decompressed: 16 bytes per character, and never
        under 32 MiB (the styles of an empty Word document take about 1 MB)."""
        return max(16 * self.max_chars, 32 << 20)


@dataclass(frozen=True, slots=True)
class FileIdentity:
    """A file as it was listed: device, inode, and whether its name was a link
    (a link the walk accepted is followed when the file is opened)."""

    dev: int
    ino: int
    link: bool


def identity(path: Path) -> FileIdentity | None:
    """The identity of the file ``path`` names now (None: it cannot be looked up;
    opening it reports why)."""
    try:
        st = os.stat(path)
        link = os.path.islink(path)
    except OSError:
        return None
    return FileIdentity(st.st_dev, st.st_ino, link)


def _changed(path: Path, what: str) -> UnreadableFileError:
    return UnreadableFileError(
        f"{path}: skipped, {what} since its folder was listed; index again once the "
        "folder stops changing",
        "changed",
    )


def open_checked(path: Path, expected: FileIdentity | None) -> tuple[BinaryIO, int]:
    """Open the file ``path`` for reading, checked to be the file that was listed.

    Args:
        path: the file.
        expected: its identity when listed (None: any regular file).

    Returns:
        (binary handle, its size in bytes); the caller closes the handle.

    Raises:
        UnreadableFileError: ``changed`` (now a link, a FIFO, a device, a folder or
            another file), ``unreadable`` (cannot be opened).
    """
    follow = expected is not None and expected.link
    flags = os.O_RDONLY | _NONBLOCK | _CLOEXEC | (0 if follow else _NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow:
            raise _changed(path, "it became a link") from exc
        if exc.errno == errno.ENXIO:  # a socket, or a FIFO with O_NONBLOCK on some systems
            raise _changed(path, "it is no longer a regular file") from exc
        raise UnreadableFileError(
            f"cannot read {path}: {exc.strerror}; check that it is readable", "unreadable"
        ) from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _changed(path, "it is no longer a regular file (a FIFO, a device, a folder)")
        if expected is not None and (st.st_dev, st.st_ino) != (expected.dev, expected.ino):
            raise _changed(path, "it was replaced by another file")
        if _NONBLOCK:
            os.set_blocking(fd, True)
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    return handle, st.st_size


def check_zip(fh: BinaryIO, limit: int, path: Path | str) -> None:
    """Check that the zip file ``fh`` decompresses to at most ``limit`` bytes; the
    handle is rewound for the parser after.

    The sizes the entries declare are summed first; then every entry is
    decompressed in bounded steps and counted, so headers that lie cost no more
    than the limit.

    Raises:
        UnreadableFileError: ``too_large`` past the limit, ``unreadable``: not a
            zip file that can be decompressed.
    """
    try:
        with zipfile.ZipFile(fh) as archive:
            entries = archive.infolist()
            if sum(e.file_size for e in entries) > limit:
                raise too_large_error(path, limit, "it decompresses to")
            total = 0
            for entry in entries:
                with archive.open(entry) as member:
                    while chunk := member.read(_STEP):
                        total += len(chunk)
                        if total > limit:
                            raise too_large_error(path, limit, "it decompresses to")
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError) as exc:
        raise UnreadableFileError(
            f"{path}: not a zip file that can be decompressed ({exc}); re-save it",
            "unreadable",
        ) from exc
    except NotImplementedError as exc:  # a compression method zipfile does not read
        raise UnreadableFileError(f"{path}: {exc}; re-save it", "unreadable") from exc
    with contextlib.suppress(OSError):
        fh.seek(0)
