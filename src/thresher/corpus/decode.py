"""Text of a file in whatever encoding it was saved: UTF-8 first, else detected.

A text, Markdown or HTML file is decoded as UTF-8 (a byte order mark dropped);
a file that is not UTF-8 (a Latin-1 ``NEWS``, a UTF-16 export) has its encoding
detected with charset-normalizer and is decoded with it (Western European,
cp1252, preferred when other code pages fit about as well). A file that is binary
(a NUL byte outside a UTF-16/32 byte order mark) or that no encoding decodes
raises :class:`UnreadableFileError`, whose ``reason`` the loader counts the
file under (``binary``, ``undecodable``, ``unreadable``) before going on with
the next file. A ``.gz`` file is decompressed first (:mod:`gzip`); no more than
a limit the caller gives is read (a small file can expand without bound): past
it, ``too_large``.
"""

from __future__ import annotations

import codecs
import gzip
import zlib
from pathlib import Path
from typing import BinaryIO

from thresher.errors import InputError

__all__ = ["UnreadableFileError", "decode_text", "read_capped", "read_text_file", "too_large_error"]

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)

#: Among single-byte code pages charset-normalizer finds about equally plausible
#: (it cannot tell cp1250 from cp1252 on a short French text), the most common one.
_PREFERRED = ("cp1252", "latin_1", "iso8859_15")
_CHAOS_SLACK = 0.1


class UnreadableFileError(InputError):
    """A file whose text cannot be read; ``reason`` says why (how the loader counts it)."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def too_large_error(path: Path | str, limit: int, what: str = "it holds") -> UnreadableFileError:
    """The error of a file over a byte limit derived from the document size limit
    (reason ``too_large``): ``what`` it holds, or decompresses to."""
    return UnreadableFileError(
        f"{path}: skipped, {what} over {limit:,} bytes, over the document size limit; "
        "split it into smaller files (or raise the limit: --max-doc-chars)",
        "too_large",
    )


def decode_text(data: bytes, where: str) -> tuple[str, str]:
    """The text of ``data`` and the encoding it was read with.

    Args:
        data: a whole file's bytes.
        where: the file, named in errors.

    Returns:
        (text, encoding): ``utf-8`` for UTF-8 (with or without a byte order mark),
        else the encoding charset-normalizer found.

    Raises:
        UnreadableFileError: ``binary`` (a NUL byte and no UTF-16/32 byte order
            mark) or ``undecodable`` (no encoding fits).
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(encoding), encoding.removesuffix("-sig")
            except UnicodeDecodeError:
                break
    nul = data.find(b"\x00")
    if nul >= 0:
        raise UnreadableFileError(
            f"{where}: binary content (NUL byte at byte offset {nul}); only text can be "
            "ingested, convert or remove this file",
            "binary",
        )
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError as exc:
        bad = exc.start
    from charset_normalizer import from_bytes  # the fallback: loaded only when needed

    matches = from_bytes(data)
    best = matches.best()
    if best is None:
        raise UnreadableFileError(
            f"{where}: not UTF-8 (invalid byte at offset {bad}) and no other text encoding "
            "fits; re-save it as UTF-8",
            "undecodable",
        )
    for match in matches:  # Western European first among equally plausible code pages
        if match.encoding in _PREFERRED and match.chaos <= best.chaos + _CHAOS_SLACK:
            return str(match), match.encoding
    return str(best), best.encoding


def _gunzip(path: Path, max_bytes: int | None, fh: BinaryIO | None) -> bytes:
    """The decompressed bytes of the gzip file ``path`` (read from ``fh`` when given),
    at most ``max_bytes``."""
    try:
        with gzip.GzipFile(filename=None if fh else path, fileobj=fh, mode="rb") as f:
            data = f.read(-1 if max_bytes is None else max_bytes + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise UnreadableFileError(
            f"{path}: not a gzip file that can be decompressed ({exc}); "
            "decompress it yourself or remove it",
            "unreadable",
        ) from exc
    if max_bytes is not None and len(data) > max_bytes:
        raise too_large_error(path, max_bytes, "it decompresses to")
    return data


def read_text_file(
    path: Path, max_bytes: int | None = None, fh: BinaryIO | None = None
) -> tuple[str, str]:
    """:func:`decode_text` of the file ``path`` (decompressed first when it ends in ``.gz``).

    Args:
        path: the file (named in errors).
        max_bytes: the most bytes it may hold, decompressed for a ``.gz`` file
            (None: no limit).
        fh: the file, already open (:func:`thresher.corpus.bounded.open_checked`);
            None: ``path`` is opened.

    Raises:
        UnreadableFileError: ``unreadable`` (cannot be opened, read or decompressed),
            ``too_large`` (holds, or decompresses to, more than ``max_bytes``),
            ``binary`` or ``undecodable``.
    """
    if path.name.lower().endswith(".gz"):
        return decode_text(_gunzip(path, max_bytes, fh), str(path))
    if fh is not None:
        return decode_text(read_capped(fh, max_bytes, path), str(path))
    try:
        own = path.open("rb")
    except OSError as exc:
        raise _unreadable(path, exc) from exc
    with own:
        return decode_text(read_capped(own, max_bytes, path), str(path))


def read_capped(fh: BinaryIO, limit: int | None, path: Path | str) -> bytes:
    """The rest of ``fh``, at most ``limit`` bytes (None: no limit).

    Raises:
        UnreadableFileError: ``too_large`` past the limit, ``unreadable`` on a read error.
    """
    try:
        data = fh.read(-1 if limit is None else limit + 1)
    except OSError as exc:
        raise _unreadable(path, exc) from exc
    if limit is not None and len(data) > limit:
        raise too_large_error(path, limit)
    return data


def _unreadable(path: Path | str, exc: OSError) -> UnreadableFileError:
    return UnreadableFileError(
        f"cannot read {path}: {exc.strerror}; check that it is readable", "unreadable"
    )
