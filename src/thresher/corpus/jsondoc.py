"""A JSON file that is one document (a configuration, an API response), as text.

A ``.json`` file holds document records when its first value is one (an object
with ``text``, or a QA dataset question: :mod:`thresher.corpus.datasets`), and
is then read record by record; a list of records stays records. Any other JSON
file (``package.json``, an OpenAPI description, a dump of one API call) is one
document: its values flattened to one ``key.path: value`` line each, in the
file's order::

    name: kelpdry
    scripts.build: tsc -p .
    authors[0].name: Orla Venn

with a blank line between the entries of the top level, so chunks cut between
them. Strings are shown as they are (their line breaks kept), other scalars as
JSON (``true``, ``null``, ``3.5``); an empty object or list as ``{}``/``[]``.
The title is the top-level ``title`` or ``name`` string, else an
``info.title`` (OpenAPI), else none (the caller uses the file name).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, BinaryIO

from thresher.corpus.datasets import detect_format
from thresher.corpus.decode import UnreadableFileError, read_text_file

__all__ = ["flatten_json", "is_records", "json_title", "read_json_document"]

_KEY_PLAIN = re.compile(r"^[\w-]+$")
_BLANK_LINES = re.compile(r"\n[^\S\n]*\n\s*")


def _key(prefix: str, key: str) -> str:
    part = key if _KEY_PLAIN.match(key) else json.dumps(key, ensure_ascii=False)
    return f"{prefix}.{part}" if prefix else part


def _lines(value: Any, path: str, out: list[str]) -> None:
    """Append the ``path: value`` lines of ``value`` to ``out`` (recursive: a value
    nested deeper than Python's recursion limit raises RecursionError)."""
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _lines(v, _key(path, str(k)), out)
    elif isinstance(value, list) and value:
        for i, v in enumerate(value):
            _lines(v, f"{path}[{i}]", out)
    else:
        if isinstance(value, str):
            shown = _BLANK_LINES.sub("\n", value.strip())  # one entry, one paragraph
        else:
            shown = json.dumps(value, ensure_ascii=False)
        out.append(f"{path}: {shown}" if path else shown)


def flatten_json(value: Any) -> str:
    """``value`` as ``key.path: value`` lines, top-level entries separated by blank lines.

    Args:
        value: a parsed JSON value.

    Returns:
        The text ('' for an empty object or list).

    Raises:
        RecursionError: ``value`` nests deeper than the recursion limit.
    """
    if isinstance(value, dict):
        top: list[tuple[str, Any]] = [(_key("", str(k)), v) for k, v in value.items()]
    elif isinstance(value, list):
        top = [(f"[{i}]", v) for i, v in enumerate(value)]
    else:
        top = [("", value)]
    blocks = []
    for path, v in top:
        lines: list[str] = []
        _lines(v, path, lines)
        blocks.append("\n".join(lines))
    return "\n\n".join(b for b in blocks if b)


def json_title(value: Any) -> str | None:
    """The top-level ``title`` or ``name`` string of ``value``, else ``info.title``."""
    if not isinstance(value, dict):
        return None
    for key in ("title", "name"):
        if isinstance(value.get(key), str) and value[key].strip():
            return str(value[key]).strip()
    info = value.get("info")
    if isinstance(info, dict) and isinstance(info.get("title"), str) and info["title"].strip():
        return str(info["title"]).strip()
    return None


def is_records(first: Any) -> bool:
    """Whether a JSON file whose first value (its first array element, or its one
    value) is ``first`` holds records: an object with ``text``, or a dataset question.
    A record with a mistake (``text`` not a string) is records, so it is reported."""
    return (isinstance(first, dict) and "text" in first) or detect_format(first) is not None


def read_json_document(
    path: Path, fh: BinaryIO | None = None, max_bytes: int | None = None
) -> tuple[str, str | None]:
    """(text, title or None) of the JSON file ``path`` read as one document.

    Args:
        path: the file (named in errors).
        fh: the file, already open (read from its start; None: ``path`` is opened).
        max_bytes: the most bytes it may hold (None: no limit).

    Raises:
        UnreadableFileError: ``not_records`` when the file is not one JSON value
            (JSON Lines of other values, invalid JSON) or nests too deep;
            ``binary``/``undecodable``/``unreadable``/``too_large`` from reading it.
    """
    if fh is not None:
        fh.seek(0)
    text, _encoding = read_text_file(path, max_bytes, fh)
    try:
        value = json.loads(text)
        return flatten_json(value), json_title(value)
    except (json.JSONDecodeError, RecursionError) as exc:
        reason = "nested too deep" if isinstance(exc, RecursionError) else str(exc)
        raise UnreadableFileError(
            f"{path}: not document records, a QA dataset or one JSON document ({reason}); "
            "fix the JSON, or convert it to records with id, title and text",
            "not_records",
        ) from exc
