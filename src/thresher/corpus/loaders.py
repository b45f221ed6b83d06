"""Read files, folders and dataset dumps into sanitized :class:`Document` records.

Supported: ``.txt``, ``.md``/``.markdown``, ``.html``/``.htm``, ``.jsonl`` and
``.json``. A ``.jsonl``/``.json`` file holds either plain records (``id``,
``text``, optional ``title`` and ``metadata``) or a multi-hop QA dataset
(HotpotQA, MuSiQue, 2WikiMultihopQA, a HippoRAG-style ``{title, text}`` corpus),
recognized from its first record (see :mod:`thresher.corpus.datasets`).
Dataset paragraphs from every question and file of one call are pooled and
deduplicated by :func:`~thresher.corpus.ids.paragraph_doc_id`.

Policy on unsupported files: a file named explicitly with an unsupported
extension is an error; inside a folder, unsupported and hidden entries are
skipped and counted in :class:`LoadStats`. A folder with no supported file is an
error. Problems with content (not UTF-8, binary, bad JSON, missing fields,
duplicate ids) raise :class:`~thresher.errors.InputError` naming the file (and
line) and what to do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thresher.corpus.datasets import detect_format, record_paragraphs
from thresher.corpus.document import Document
from thresher.corpus.html import html_to_text
from thresher.corpus.ids import file_doc_id, paragraph_doc_id
from thresher.corpus.sanitize import flag_injection, merge_counts, sanitize_text
from thresher.errors import InputError

__all__ = [
    "LoadStats",
    "iter_documents",
    "make_document",
    "markdown_title",
    "SUPPORTED_EXTENSIONS",
]

SUPPORTED_EXTENSIONS = (".txt", ".md", ".markdown", ".html", ".htm", ".jsonl", ".json")
_SUPPORTED_HINT = " ".join(SUPPORTED_EXTENSIONS)
_BOM = b"\xef\xbb\xbf"
_ATX = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}=+[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(?:```|~~~)")


@dataclass(slots=True)
class LoadStats:
    """What one :func:`iter_documents` call read and skipped.

    Attributes:
        files: files read.
        documents: documents yielded.
        questions: dataset question records read.
        skipped: counts by reason: ``hidden`` and ``unsupported`` (folder entries),
            ``empty`` (no text after sanitization), ``duplicate`` (a dataset paragraph
            already yielded), ``no_context`` (a dataset question without paragraphs).
    """

    files: int = 0
    documents: int = 0
    questions: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str, n: int = 1) -> None:
        """Count ``n`` skipped items for ``reason``."""
        self.skipped[reason] = self.skipped.get(reason, 0) + n


def markdown_title(text: str) -> str | None:
    """The first ATX (``# Title``) or setext (``Title`` over ``===``) heading, outside code fences."""
    in_fence = False
    previous = ""
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            m = _ATX.match(line)
            if m:
                return m.group(1).strip()
            if previous.strip() and _SETEXT.match(line):
                return previous.strip()
        previous = "" if in_fence else line
    return None


def iter_documents(
    paths: Sequence[str | Path], stats: LoadStats | None = None
) -> Iterator[Document]:
    """Every document under ``paths``, sanitized, in a deterministic order.

    Paths are checked before anything is read; folders are walked recursively in
    sorted order, skipping hidden entries (names starting with ``.``).

    Args:
        paths: files and folders, as the user named them.
        stats: filled in as documents are read and skipped, when given.

    Returns:
        An iterator of :class:`Document`. File documents have ``doc_id`` = path
        relative to the named folder (a named file: its name); plain records their
        ``id``; dataset paragraphs ``paragraph_doc_id(title, text)`` and
        ``metadata["dataset"]``. ``Document.sanitized`` holds removal counts,
        ``injection_flagged`` (patterns matched) and ``hidden_html``; flagged
        documents also carry ``metadata["injection_flags"]`` (comma-separated names).

    Raises:
        InputError: a path does not exist, names an unsupported file, or is a folder
            with no supported file (raised by this call); unreadable, binary or
            non-UTF-8 files, malformed JSON/JSONL records and duplicate ids (raised
            while iterating).
    """
    stats = stats if stats is not None else LoadStats()
    if not paths:
        raise InputError("no input paths given; name at least one file or folder")
    plan = [item for p in paths for item in _plan(Path(p), stats)]
    return _Reader(stats).run(plan)


# -- planning ------------------------------------------------------------------


def _plan(path: Path, stats: LoadStats) -> list[tuple[Path, Path]]:
    if not path.exists():
        raise InputError(f"path does not exist: {path}; check the spelling or create it first")
    if path.is_dir():
        before = dict(stats.skipped)
        files = list(_walk(path, stats))
        if not files:
            skipped = {k: v - before.get(k, 0) for k, v in stats.skipped.items()}
            detail = ", ".join(f"{n} {k}" for k, n in skipped.items() if n) or "empty"
            raise InputError(
                f"no supported files in folder {path} ({detail}); "
                f"add {_SUPPORTED_HINT} files or name another folder"
            )
        return [(f, path) for f in files]
    if not path.is_file():
        raise InputError(f"not a regular file or folder: {path}; name a file or a folder")
    if path.suffix.lower() not in SUPPORTED_EXTENSIONS:
        raise InputError(
            f"unsupported file type '{path.suffix or '(none)'}': {path}; "
            f"convert it to one of {_SUPPORTED_HINT}"
        )
    return [(path, path)]


def _walk(folder: Path, stats: LoadStats) -> Iterator[Path]:
    try:
        entries = sorted(folder.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        raise InputError(
            f"cannot list folder {folder}: {exc.strerror}; check its permissions"
        ) from exc
    for entry in entries:
        if entry.name.startswith("."):
            stats.skip("hidden")
        elif entry.is_dir():
            if not entry.is_symlink():  # never follow folder links (cycles)
                yield from _walk(entry, stats)
        elif entry.suffix.lower() in SUPPORTED_EXTENSIONS and entry.is_file():
            yield entry
        else:
            stats.skip("unsupported")


# -- reading ---------------------------------------------------------------------


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}; check that it is readable") from exc


def _decode(data: bytes, where: str, base_offset: int = 0) -> str:
    """UTF-8 text of ``data`` (a leading BOM dropped); InputError for binary or bad bytes."""
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


def _jsonl_lines(path: Path) -> Iterator[tuple[str, Any]]:
    """``(":LINE", parsed_value)`` for each non-blank line of a JSONL file."""
    offset = 0
    try:
        with path.open("rb") as fh:
            for number, raw in enumerate(fh, start=1):
                line = _decode(raw, f"{path}:{number}", offset)
                offset += len(raw)
                if not line.strip():
                    continue
                try:
                    yield f":{number}", json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(
                        f"{path}:{number}: not valid JSON ({exc.msg} at column {exc.colno}); "
                        "fix or remove the line"
                    ) from exc
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}; check that it is readable") from exc


def _json_records(path: Path) -> Iterator[tuple[str, Any]]:
    """``(location suffix, record)`` of a ``.json`` file: an array, one object, or JSONL."""
    text = _decode(_read_bytes(path), str(path))
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":  # several values, one per line: JSONL named .json
            yield from _jsonl_lines(path)
            return
        raise InputError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg} at column {exc.colno}); fix the file"
        ) from exc
    if isinstance(value, list):
        for i, record in enumerate(value):
            yield f"[{i}]", record
    elif isinstance(value, dict):
        yield "", value
    else:
        raise InputError(
            f"{path}: expected a JSON array or object, found {type(value).__name__}; "
            "store documents as objects with 'id' and 'text'"
        )


class _Reader:
    """Turns planned files into documents, tracking ids already yielded."""

    def __init__(self, stats: LoadStats) -> None:
        self.stats = stats
        self.seen: dict[str, tuple[str, bool]] = {}  # doc_id -> (source, is dataset paragraph)

    def run(self, plan: list[tuple[Path, Path]]) -> Iterator[Document]:
        for path, root in plan:
            self.stats.files += 1
            rel = file_doc_id(path, root)
            suffix = path.suffix.lower()
            if suffix == ".jsonl":
                yield from self._records(_jsonl_lines(path), path, rel)
            elif suffix == ".json":
                yield from self._records(_json_records(path), path, rel)
            else:
                yield from self._emit(self._file_document(path, rel))

    def _file_document(self, path: Path, rel: str) -> Document:
        text = _decode(_read_bytes(path), str(path))
        suffix = path.suffix.lower()
        extra: dict[str, int] = {}
        title: str | None = None
        if suffix in (".html", ".htm"):
            text, title, extra = html_to_text(text)
        elif suffix in (".md", ".markdown"):
            title = markdown_title(sanitize_text(text)[0])
        return make_document(rel, title or path.stem, text, rel, {}, extra)

    def _records(
        self, records: Iterable[tuple[str, Any]], path: Path, rel: str
    ) -> Iterator[Document]:
        """Documents of one JSON/JSONL file; its first record decides the format."""
        fmt: str | None = None
        first = True
        for location, record in records:
            where = f"{path}{location}"
            if first:
                fmt, first = detect_format(record), False
            if fmt is None:
                yield from self._emit(_plain_record(record, where, f"{rel}{location}"))
                continue
            if fmt != "paragraph_corpus":
                self.stats.questions += 1
            try:
                paragraphs = record_paragraphs(fmt, record)
            except ValueError as exc:
                raise InputError(
                    f"{where}: not a {fmt} record ({exc}); keep one dataset format per file"
                ) from exc
            if paragraphs is None:
                self.stats.skip("no_context")
                continue
            for title, text in paragraphs:
                doc_id = paragraph_doc_id(title, text)
                if doc_id in self.seen and self.seen[doc_id][1]:
                    self.stats.skip("duplicate")
                    continue
                meta = {"dataset": fmt}
                yield from self._emit(make_document(doc_id, title, text, rel, meta), True)

    def _emit(self, doc: Document, paragraph: bool = False) -> Iterator[Document]:
        if doc.doc_id in self.seen:
            raise InputError(
                f"duplicate document id '{doc.doc_id}' in {doc.source} "
                f"(first seen in {self.seen[doc.doc_id][0]}); give every document a unique id "
                "or do not name the same file twice"
            )
        self.seen[doc.doc_id] = (doc.source, paragraph)
        if not doc.text.strip():
            self.stats.skip("empty")
            return
        self.stats.documents += 1
        yield doc


def _plain_record(record: Any, where: str, source: str) -> Document:
    """A Document from a plain ``{id, text, title?, metadata?}`` record."""
    if not isinstance(record, dict):
        raise InputError(
            f"{where}: expected a JSON object with 'id' and 'text', found {type(record).__name__}"
        )
    for key in ("id", "text"):
        if key not in record:
            raise InputError(
                f"{where}: record has no '{key}' field; every record needs 'id' and 'text'"
            )
    doc_id, text = record["id"], record["text"]
    if isinstance(doc_id, bool) or not isinstance(doc_id, str | int) or str(doc_id) == "":
        raise InputError(f"{where}: 'id' must be a non-empty string or an integer, got {doc_id!r}")
    if not isinstance(text, str):
        raise InputError(f"{where}: 'text' must be a string, got {type(text).__name__}")
    title = record.get("title", str(doc_id))
    if not isinstance(title, str):
        raise InputError(f"{where}: 'title' must be a string, got {type(title).__name__}")
    metadata = record.get("metadata", {})
    if not isinstance(metadata, dict):
        raise InputError(
            f"{where}: 'metadata' must be a JSON object, got {type(metadata).__name__}"
        )
    return make_document(str(doc_id), title or str(doc_id), text, source, metadata)


def make_document(
    doc_id: str,
    title: str,
    text: str,
    source: str,
    metadata: dict[str, Any],
    extra_counts: dict[str, int] | None = None,
) -> Document:
    """A Document with sanitized title and text, counts, and injection flags.

    Args:
        doc_id, source, metadata: as stored on the Document.
        title, text: raw title and text.
        extra_counts: counts from an earlier stage (``hidden_html``).

    Returns:
        The Document; ``sanitized`` merges removal counts of title and text,
        ``extra_counts`` and ``injection_flagged`` (number of patterns matched), and
        ``metadata["injection_flags"]`` lists the matched pattern names.
    """
    clean_text, text_counts = sanitize_text(text)
    clean_title, title_counts = sanitize_text(title)
    clean_title = " ".join(clean_title.split())
    flags = flag_injection(f"{clean_title}\n{clean_text}")
    if flags:
        metadata = {**metadata, "injection_flags": ",".join(flags)}
    counts = merge_counts(
        text_counts, title_counts, extra_counts or {}, {"injection_flagged": len(flags)}
    )
    return Document(
        doc_id=doc_id,
        title=clean_title,
        text=clean_text,
        source=source,
        metadata=dict(metadata),
        sanitized=counts,
    )
