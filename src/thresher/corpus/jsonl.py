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

import json
from collections.abc import Generator, Iterable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

from thresher.errors import InputError

__all__ = [
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


def _text_lines(path: Path) -> Generator[tuple[int, str], None, None]:
    """``(line number, text)`` of every non-blank line of ``path``, streamed and decoded.

    Raises:
        InputError: the file cannot be opened or read, or a line is not UTF-8 or
            holds a NUL byte (naming ``file:LINE``).
    """
    offset = 0
    try:
        with path.open("rb") as fh:
            for number, raw in enumerate(fh, start=1):
                line = decode_utf8(raw, f"{path}:{number}", offset)
                offset += len(raw)
                if line.strip():
                    yield number, line
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}; check that it is readable") from exc


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` for every non-blank line of a JSON Lines file.

    The file is streamed; line numbers are 1-based and count blank lines.

    Args:
        path: the file.

    Returns:
        An iterator of ``(line_no, value)``; values are whatever the line holds
        (callers check that it is an object).

    Raises:
        InputError: the file cannot be opened or read, a line is not UTF-8 or holds
            a NUL byte, or a line is not valid JSON; the message names ``file:LINE``.
    """
    p = Path(path)
    for number, line in _text_lines(p):
        yield number, _parse_line(line, p, number)


def _first_line(path: Path) -> str | None:
    """The first non-blank line of ``path``, or None for a blank file."""
    with closing(_text_lines(path)) as lines:
        first = next(lines, None)
    return first[1] if first else None


def _whole(path: Path) -> Any:
    text = decode_utf8(read_bytes(path), str(path))
    try:
        return json.loads(text)
    except RecursionError as exc:
        raise _too_deep(str(path)) from exc
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg} at column {exc.colno}); fix the file"
        ) from exc


def iter_json_records(path: str | Path) -> Iterator[tuple[str, Any]]:
    """``(location, value)`` of a JSON file holding an array, one value, or JSON Lines.

    The content decides, not the file name: a file starting with ``[`` that parses
    as a whole gives the array's elements (location ``[i]``); a file whose first
    non-blank line parses alone is JSON Lines, streamed by :func:`iter_jsonl`
    (location ``:LINE``); anything else is one JSON value spread over several lines
    (location ``""``). Append the location to the path to name a record in a message.

    Args:
        path: the file (``.json``, or a task file of any name).

    Returns:
        An iterator of ``(location, value)``; nothing for a blank file.

    Raises:
        InputError: unreadable, binary or non-UTF-8 content, or invalid JSON
            (naming the line).
    """
    p = Path(path)
    line = _first_line(p)
    if line is None:
        return
    if line.lstrip().startswith("["):
        try:
            value = json.loads(decode_utf8(read_bytes(p), str(p)))
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
            yield "", _whole(p)
            return
    for n, record in iter_jsonl(p):
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
