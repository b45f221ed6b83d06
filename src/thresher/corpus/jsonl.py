"""Reading and writing JSON Lines and JSON record files; one owner of line numbers and errors.

Every reader of record files (the corpus loader, the task readers, BrowseComp-Plus,
BEIR, synthetic tasks) goes through :func:`iter_jsonl` or :func:`iter_json_records`,
so a bad line is reported the same way everywhere: ``FILE:LINE: not valid JSON
(...)``, invalid UTF-8 with its byte offset, a NUL byte as binary content. JSONL
files are streamed line by line (corpora can be larger than memory); blank lines
are skipped; a UTF-8 byte order mark at the start of a file is dropped.

Every JSONL file thresher writes (traces, task files, SFT records, reports) is
written with :func:`write_jsonl` or :func:`jsonl_line`: one compact JSON object
per line, non-ASCII kept as UTF-8.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Generator, Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from thresher.corpus.decode import too_large_error
from thresher.errors import InputError

__all__ = [
    "LongLine",
    "decode_utf8",
    "read_bytes",
    "iter_jsonl",
    "iter_json_records",
    "jsonl_line",
    "write_jsonl",
]

_BOM = b"\xef\xbb\xbf"


def read_bytes(path: Path) -> bytes:
    """The bytes of ``path``.

    Raises:
        InputError: the file is missing or unreadable (names the file).
    """
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}; check that it is readable") from exc


def decode_utf8(data: bytes, where: str, base_offset: int = 0) -> str:
    """UTF-8 text of ``data``; a leading byte order mark is dropped when ``base_offset`` is 0.

    Args:
        data: the bytes (a whole file, or one line of it).
        where: the location named in errors (``file`` or ``file:LINE``).
        base_offset: byte offset of ``data`` in its file, so errors name file offsets.

    Returns:
        The decoded text.

    Raises:
        InputError: a NUL byte (binary content) or bytes that are not UTF-8,
            naming ``where`` and the byte offset.
    """
    nul = data.find(b"\x00")
    if nul >= 0:
        raise InputError(
            f"{where}: binary content (NUL byte at byte offset {base_offset + nul}); "
            "only UTF-8 text can be ingested, convert or remove this file"
        )
    skip = len(_BOM) if base_offset == 0 and data.startswith(_BOM) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{where}: invalid UTF-8 at byte offset {base_offset + skip + exc.start}; "
            "re-save the file as UTF-8"
        ) from exc


def _too_deep(where: str) -> InputError:
    return InputError(
        f"{where}: JSON nested too deeply to read (thousands of levels); flatten or remove it"
    )


def _parse_line(line: str, path: Path, number: int) -> Any:
    try:
        return json.loads(line)
    except RecursionError as exc:
        raise _too_deep(f"{path}:{number}") from exc
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path}:{number}: not valid JSON ({exc.msg} at column {exc.colno}); "
            "fix or remove the line"
        ) from exc


@dataclass(frozen=True, slots=True)
class LongLine:
    """A line longer than the bound the caller set, in place of its value: its length
    in bytes (the line was read through, never held)."""

    size: int


_STEP = 1 << 20


def _raw_lines(fh: BinaryIO, max_line: int | None) -> Iterator[bytes | int]:
    """The lines of ``fh`` as bytes; a line over ``max_line`` bytes (its line break
    aside) as its length, read through without being kept."""
    if max_line is None:
        yield from fh
        return
    while raw := fh.readline(_STEP):  # one call for any usual line
        if raw.endswith(b"\n") or len(raw) < _STEP:
            if len(raw.rstrip(b"\r\n")) > max_line:
                yield len(raw)
            else:
                yield raw
            continue
        parts, size = [raw], len(raw)
        while size <= max_line + 1:  # a long line: searched a step at a time
            piece = _read_through_break(fh, max_line + 2 - size)
            if not piece:
                break
            parts.append(piece)
            size += len(piece)
            if piece.endswith(b"\n"):
                break
        ended = parts[-1].endswith(b"\n")
        if (size - 1 if ended else size) > max_line:
            yield size if ended else size + _skip_line(fh)
        else:
            yield b"".join(parts)


def _read_through_break(fh: BinaryIO, most: int) -> bytes:
    """Up to ``most`` bytes (at most a step) of ``fh``, ending at its next line break."""
    if not fh.seekable():
        return fh.readline(min(most, _STEP))
    chunk = fh.read(min(most, _STEP))
    at = chunk.find(b"\n")
    if at < 0 or at == len(chunk) - 1:
        return chunk
    fh.seek(at + 1 - len(chunk), os.SEEK_CUR)
    return chunk[: at + 1]


def _skip_line(fh: BinaryIO) -> int:
    """Read ``fh`` through its next line break (kept at the next line's start), in
    steps of 1 MiB; the bytes passed."""
    size = 0
    if not fh.seekable():
        while (raw := fh.readline(_STEP)) and not raw.endswith(b"\n"):
            size += len(raw)
        return size + len(raw)
    while chunk := fh.read(_STEP):  # a search per step: ten times a readline's speed
        at = chunk.find(b"\n")
        if at >= 0:
            fh.seek(at + 1 - len(chunk), os.SEEK_CUR)
            return size + at + 1
        size += len(chunk)
    return size


def _text_lines(
    path: Path, fh: BinaryIO | None = None, max_line: int | None = None
) -> Generator[tuple[int, str | LongLine], None, None]:
    """``(line number, text)`` of every non-blank line of ``path``, streamed and decoded
    (a line over ``max_line`` bytes: its :class:`LongLine`).

    Raises:
        InputError: the file cannot be opened or read, or a line is not UTF-8 or
            holds a NUL byte (naming ``file:LINE``).
    """
    offset = 0
    try:
        with path.open("rb") if fh is None else contextlib.nullcontext(fh) as f:
            for number, raw in enumerate(_raw_lines(f, max_line), start=1):
                if isinstance(raw, int):
                    offset += raw
                    yield number, LongLine(raw)
                    continue
                line = decode_utf8(raw, f"{path}:{number}", offset)
                offset += len(raw)
                if line.strip():
                    yield number, line
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}; check that it is readable") from exc


def iter_jsonl(
    path: str | Path, *, fh: BinaryIO | None = None, max_line_bytes: int | None = None
) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` for every non-blank line of a JSON Lines file.

    The file is streamed; line numbers are 1-based and count blank lines.

    Args:
        path: the file (named in errors).
        fh: the file, already open and at its start (None: ``path`` is opened).
        max_line_bytes: a longer line is not parsed: its value is a :class:`LongLine`
            (None: no bound).

    Returns:
        An iterator of ``(line_no, value)``; values are whatever the line holds
        (callers check that it is an object).

    Raises:
        InputError: the file cannot be opened or read, a line is not UTF-8 or holds
            a NUL byte, or a line is not valid JSON; the message names ``file:LINE``.
    """
    p = Path(path)
    for number, line in _text_lines(p, fh, max_line_bytes):
        yield number, line if isinstance(line, LongLine) else _parse_line(line, p, number)


def _first_line(path: Path, fh: BinaryIO | None, max_line: int | None) -> str | LongLine | None:
    """The first non-blank line of ``path``, or None for a blank file."""
    with closing(_text_lines(path, fh, max_line)) as lines:
        first = next(lines, None)
    return first[1] if first else None


def _whole_text(path: Path, fh: BinaryIO | None, max_bytes: int | None) -> str:
    """The whole file, decoded (from its start), at most ``max_bytes``."""
    limit = -1 if max_bytes is None else max_bytes + 1
    try:
        if fh is None:
            with path.open("rb") as own:
                data = own.read(limit)
        else:
            fh.seek(0)
            data = fh.read(limit)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}; check that it is readable") from exc
    if max_bytes is not None and len(data) > max_bytes:
        raise too_large_error(path, max_bytes)
    return decode_utf8(data, str(path))


def _whole(path: Path, fh: BinaryIO | None, max_bytes: int | None) -> Any:
    text = _whole_text(path, fh, max_bytes)
    try:
        return json.loads(text)
    except RecursionError as exc:
        raise _too_deep(str(path)) from exc
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg} at column {exc.colno}); fix the file"
        ) from exc


def iter_json_records(
    path: str | Path, *, fh: BinaryIO | None = None, max_bytes: int | None = None
) -> Iterator[tuple[str, Any]]:
    """``(location, value)`` of a JSON file holding an array, one value, or JSON Lines.

    The content decides, not the file name: a file starting with ``[`` that parses
    as a whole gives the array's elements (location ``[i]``); a file whose first
    non-blank line parses alone is JSON Lines, streamed by :func:`iter_jsonl`
    (location ``:LINE``); anything else is one JSON value spread over several lines
    (location ``""``). Append the location to the path to name a record in a message.

    Args:
        path: the file (``.json``, or a task file of any name).
        fh: the file, already open and seekable (None: ``path`` is opened).
        max_bytes: the most bytes the file may hold (it may be parsed whole; the
            caller checks its size first, this bounds what is read); None: no bound.

    Returns:
        An iterator of ``(location, value)``; nothing for a blank file.

    Raises:
        InputError: unreadable, binary or non-UTF-8 content, or invalid JSON
            (naming the line); ``too_large`` past ``max_bytes``
            (:class:`~thresher.corpus.decode.UnreadableFileError`).
    """
    p = Path(path)
    line = _first_line(p, fh, max_bytes)
    if line is None:
        return
    if isinstance(line, LongLine):
        raise too_large_error(p, max_bytes or 0)
    if line.lstrip().startswith("["):
        try:
            value = json.loads(_whole_text(p, fh, max_bytes))
        except RecursionError as exc:
            raise _too_deep(str(p)) from exc
        except json.JSONDecodeError as exc:
            if exc.msg != "Extra data":  # not several values, one per line
                raise InputError(
                    f"{p}:{exc.lineno}: not valid JSON ({exc.msg} at column {exc.colno}); "
                    "fix the file"
                ) from exc
        else:
            if isinstance(value, list):
                for i, record in enumerate(value):
                    yield f"[{i}]", record
            else:
                yield "", value
            return
    else:
        try:
            json.loads(line)
        except RecursionError as exc:
            raise _too_deep(f"{p}:1") from exc
        except json.JSONDecodeError:  # one value spread over several lines
            yield "", _whole(p, fh, max_bytes)
            return
    if fh is not None:
        fh.seek(0)
    for n, record in iter_jsonl(p, fh=fh, max_line_bytes=max_bytes):
        yield f":{n}", record


def jsonl_line(record: Any) -> str:
    """``record`` as one JSON Lines line: compact JSON (non-ASCII kept) and a newline."""
    return json.dumps(record, ensure_ascii=False) + "\n"


def write_jsonl(path: str | Path, records: Iterable[Any]) -> Path:
    """Write ``records`` to ``path``, one :func:`jsonl_line` each (parent folders created).

    Args:
        path: the file (replaced if it exists).
        records: JSON-serializable values, usually dicts (``to_dict()`` of a record).

    Returns:
        The path written.
    """
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(jsonl_line(record))
    return out
