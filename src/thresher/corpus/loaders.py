"""Read files, folders and dataset dumps into sanitized :class:`Document` records.

Supported: ``.txt``, ``.md``/``.markdown``, ``.html``/``.htm``, ``.jsonl`` and
``.json``. A ``.jsonl``/``.json`` file holds either document records or a
multi-hop QA dataset (HotpotQA, MuSiQue, 2WikiMultihopQA), recognized from its
first record (see :mod:`thresher.corpus.datasets`); lines are read by
:mod:`thresher.corpus.jsonl`.

Document ids:

- a text file (``.txt``, ``.md``, ``.html``): its path relative to the folder
  named (a named file: its name);
- a document record (``{id, text, title?, metadata?}``): its own id, the first of
  ``id``, ``_id`` (BEIR), ``doc_id``, ``docid`` it has, unchanged; an id seen twice
  (in one file or across the files of one call) is an ``InputError`` naming
  ``file:LINE`` of both, since evaluation judgments (qrels) name documents by
  that id and could not tell the two apart;
- a record without an id (a HippoRAG ``{title, text}`` corpus) and every dataset
  paragraph: ``paragraph_doc_id(title, text)``, a hash of its content; equal
  passages from every question and file of one call are pooled into one document
  (later copies are skipped and counted as ``duplicate``).

Titles: a document record's ``title`` (else its id); HTML: ``<title>``, else the
first ``<h1>``; ``.txt`` and ``.md``: from the text, by the rules of
:mod:`thresher.corpus.titles` (a ``Title:``/``Subject:`` header field, a Markdown
heading, the first line when more text follows; the stem itself when it is an
identifier the text states, as a patent number), else the file stem.

Size: a document longer than ``max_chars`` characters (default
:data:`MAX_DOCUMENT_CHARS`, 8 million: about 4,000 chunks of 512 tokens) is
skipped with a warning on the ``thresher.corpus.loaders`` logger and counted
as ``too_large``; a text or HTML file that large is not even read. One such
document is almost always a log or a dump, whose chunks would take many
minutes to embed and drown out every other document in retrieval: split it
into smaller files, or raise the limit deliberately.

A BEIR dataset folder (``corpus.jsonl``, ``queries.jsonl``, ``qrels/``; see
:mod:`thresher.corpus.beir`) contributes ``corpus.jsonl`` only: its queries are
skipped and counted as ``beir_queries``.

Policy on unsupported files: a file named explicitly with an unsupported
extension is an error; inside a folder, unsupported and hidden entries are
skipped and counted in :class:`LoadStats`. A folder with no supported file is an
error. Problems with content (not UTF-8, binary, bad JSON, missing fields,
duplicate ids) raise :class:`~thresher.errors.InputError` naming the file (and
line) and what to do.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thresher.corpus.beir import QUERIES_FILE, is_beir_folder
from thresher.corpus.datasets import detect_format, record_id_key, record_paragraphs
from thresher.corpus.document import Document
from thresher.corpus.html import html_to_text
from thresher.corpus.ids import file_doc_id, paragraph_doc_id
from thresher.corpus.jsonl import decode_utf8, iter_json_records, iter_jsonl, read_bytes
from thresher.corpus.sanitize import flag_injection, merge_counts, sanitize_text
from thresher.corpus.titles import text_title
from thresher.errors import InputError

__all__ = [
    "LoadStats",
    "iter_documents",
    "make_document",
    "SUPPORTED_EXTENSIONS",
    "MAX_DOCUMENT_CHARS",
]

SUPPORTED_EXTENSIONS = (".txt", ".md", ".markdown", ".html", ".htm", ".jsonl", ".json")
#: the most characters one document may have by default (see the module docstring)
MAX_DOCUMENT_CHARS = 8_000_000
_log = logging.getLogger(__name__)
_SUPPORTED_HINT = " ".join(SUPPORTED_EXTENSIONS)


@dataclass(slots=True)
class LoadStats:
    """What one :func:`iter_documents` call read and skipped.

    Attributes:
        files: files read.
        documents: documents yielded.
        questions: dataset question records read.
        skipped: counts by reason: ``hidden`` and ``unsupported`` (folder entries),
            ``beir_queries`` (the queries file of a BEIR folder), ``empty`` (no text
            after sanitization), ``duplicate`` (a dataset paragraph or id-less record
            already yielded), ``no_context`` (a dataset question without paragraphs),
            ``too_large`` (a document over the size limit).
    """

    files: int = 0
    documents: int = 0
    questions: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str, n: int = 1) -> None:
        """Count ``n`` skipped items for ``reason``."""
        self.skipped[reason] = self.skipped.get(reason, 0) + n


def iter_documents(
    paths: Sequence[str | Path],
    stats: LoadStats | None = None,
    *,
    max_chars: int = MAX_DOCUMENT_CHARS,
) -> Iterator[Document]:
    """Every document under ``paths``, sanitized, in a deterministic order.

    Paths are checked before anything is read; folders are walked recursively in
    sorted order, skipping hidden entries (names starting with ``.``).

    Args:
        paths: files and folders, as the user named them.
        stats: filled in as documents are read and skipped, when given.
        max_chars: documents longer than this are skipped with a warning.

    Returns:
        An iterator of :class:`Document`. File documents have ``doc_id`` = path
        relative to the named folder (a named file: its name); records their own
        id (see the module docstring); dataset paragraphs and id-less records
        ``paragraph_doc_id(title, text)`` and ``metadata["dataset"]``. ``Document.sanitized`` holds removal counts,
        ``injection_flagged`` (patterns matched) and ``hidden_html``; flagged
        documents also carry ``metadata["injection_flags"]`` (comma-separated names).
        ``Document.origin`` is the absolute path of the file each came from.

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
    return _Reader(stats, max_chars).run(plan)


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
    beir = is_beir_folder(folder)
    for entry in entries:
        if entry.name.startswith("."):
            stats.skip("hidden")
        elif beir and entry.name == QUERIES_FILE:
            stats.skip("beir_queries")  # queries are tasks (thresher.tasks.beir), not documents
        elif entry.is_dir():
            if not entry.is_symlink():  # never follow folder links (cycles)
                yield from _walk(entry, stats)
        elif entry.suffix.lower() in SUPPORTED_EXTENSIONS and entry.is_file():
            yield entry
        else:
            stats.skip("unsupported")


# -- reading ---------------------------------------------------------------------


class _Reader:
    """Turns planned files into documents, tracking ids already yielded."""

    def __init__(self, stats: LoadStats, max_chars: int = MAX_DOCUMENT_CHARS) -> None:
        self.stats = stats
        self.max_chars = max_chars
        # doc_id -> (where first seen, whether its id is a content hash)
        self.seen: dict[str, tuple[str, bool]] = {}
        self.origin = ""  # the absolute path of the file being read

    def run(self, plan: list[tuple[Path, Path]]) -> Iterator[Document]:
        for path, root in plan:
            self.stats.files += 1
            self.origin = os.path.abspath(path)
            rel = file_doc_id(path, root)
            suffix = path.suffix.lower()
            if suffix == ".jsonl":
                lines = ((f":{n}", record) for n, record in iter_jsonl(path))
                yield from self._records(lines, path, rel)
            elif suffix == ".json":
                yield from self._records(iter_json_records(path), path, rel)
            elif not self._too_large_file(path):
                yield from self._emit(self._file_document(path, rel), str(path))

    def _too_large(self, where: str, chars: int, exact: bool = True) -> bool:
        """Skip (warn, count) a document of ``chars`` characters over the limit."""
        if chars <= self.max_chars:
            return False
        size = f"{chars:,} characters" if exact else f"over {chars:,} bytes"
        _log.warning(
            "%s: skipped, one document of %s is over the limit of %s characters; split it "
            "into smaller files (or raise the limit: --max-doc-chars)",
            where,
            size,
            f"{self.max_chars:,}",
        )
        self.stats.skip("too_large")
        return True

    def _too_large_file(self, path: Path) -> bool:
        """A text/HTML file certainly over the limit (4 bytes per character at most):
        skipped without reading it."""
        try:
            size = path.stat().st_size
        except OSError:
            return False  # reading it reports the problem
        return size > 4 * self.max_chars and self._too_large(str(path), size, exact=False)

    def _file_document(self, path: Path, rel: str) -> Document:
        text = decode_utf8(read_bytes(path), str(path))
        suffix = path.suffix.lower()
        extra: dict[str, int] = {}
        title: str | None = None
        if suffix in (".html", ".htm"):
            text, title, extra = html_to_text(text)
        else:
            markdown = suffix in (".md", ".markdown")
            title = text_title(sanitize_text(text)[0], markdown=markdown, stem=path.stem)
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
                if fmt == "paragraph_corpus":
                    fmt = None  # document records: each keeps its own id, if it has one
            if fmt is None:
                doc, hashed = _record_document(record, where, rel, location)
                if hashed and doc.doc_id in self.seen and self.seen[doc.doc_id][1]:
                    self.stats.skip("duplicate")
                    continue
                yield from self._emit(doc, where, hashed)
                continue
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
                yield from self._emit(make_document(doc_id, title, text, rel, meta), where, True)

    def _emit(self, doc: Document, where: str, hashed: bool = False) -> Iterator[Document]:
        if self._too_large(where, len(doc.text)):
            return
        if doc.doc_id in self.seen:
            raise InputError(
                f"duplicate document id '{doc.doc_id}' in {where} (first seen in "
                f"{self.seen[doc.doc_id][0]}); give every document a unique id "
                "or do not name the same file twice"
            )
        self.seen[doc.doc_id] = (where, hashed)
        if not doc.text.strip():
            self.stats.skip("empty")
            return
        self.stats.documents += 1
        yield dataclasses.replace(doc, origin=self.origin)


def _record_document(record: Any, where: str, rel: str, location: str) -> tuple[Document, bool]:
    """A Document from a ``{id, text, title?, metadata?}`` record, and whether its id is a hash.

    The id is the record's own (the first of ``id``, ``_id``, ``doc_id``, ``docid``
    it has; source ``rel`` + ``location``); a record without one is identified by
    its content, ``paragraph_doc_id(title, text)`` (source ``rel``, since equal
    passages anywhere are one document), and marked ``metadata["dataset"] =
    "paragraph_corpus"``.
    """
    if not isinstance(record, dict):
        raise InputError(
            f"{where}: expected a JSON object with 'text' (and 'id'), found {type(record).__name__}"
        )
    if "text" not in record:
        raise InputError(f"{where}: record has no 'text' field; every record needs a 'text'")
    text, title = record["text"], record.get("title")
    metadata = {} if record.get("metadata") is None else record["metadata"]
    if not isinstance(text, str):
        raise InputError(f"{where}: 'text' must be a string, got {type(text).__name__}")
    if title is not None and not isinstance(title, str):
        raise InputError(f"{where}: 'title' must be a string, got {type(title).__name__}")
    if not isinstance(metadata, dict):
        raise InputError(
            f"{where}: 'metadata' must be a JSON object, got {type(metadata).__name__}"
        )
    key = record_id_key(record)
    if key is None:
        doc_id, source = paragraph_doc_id(title or "", text), rel
        metadata = {**metadata, "dataset": "paragraph_corpus"}
    else:
        raw = record[key]
        if isinstance(raw, bool) or not isinstance(raw, str | int) or str(raw).strip() == "":
            raise InputError(
                f"{where}: '{key}' must be a non-empty string or an integer, got {raw!r}"
            )
        doc_id, source = str(raw), f"{rel}{location}"
    return make_document(doc_id, title or doc_id, text, source, metadata), key is None


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
