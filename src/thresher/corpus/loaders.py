"""Read files, folders and dataset dumps into sanitized :class:`Document` records.

Supported: the kinds of :mod:`thresher.corpus.filetypes` (text, Markdown,
reStructuredText, HTML, source code, CSV/TSV, PDF, ``.docx``, files without an
extension that hold text), each read into one document by
:mod:`thresher.corpus.files`, and ``.jsonl``/``.json`` files. A
``.jsonl``/``.json`` file holds either document records or a multi-hop QA
dataset (HotpotQA, MuSiQue, 2WikiMultihopQA), recognized from its first record
(see :mod:`thresher.corpus.datasets`); lines are read by
:mod:`thresher.corpus.jsonl`. A ``.json`` file whose first value is neither
(``package.json``, an API response) is one document, flattened to ``key.path:
value`` lines (:mod:`thresher.corpus.jsondoc`).

Document ids:

- a file (any kind but records): its path relative to the folder
  named (a file named alone: its name, relative to its folder); ``Document.root``
  is that folder's real path. Ingestion turns this into the index's id
  (``label/path`` for every folder but the index's first, see
  :mod:`thresher.index.ingest.roots`), so two folders' ``README.md`` are two
  documents; the same file reached twice (two spellings of a path, a link) is
  read once;
- a document record (``{id, text, title?, metadata?}``): its own id, the first of
  ``id``, ``_id`` (BEIR), ``doc_id``, ``docid`` it has, unchanged; an id seen twice
  (in one file or across the files of one call) is an ``InputError`` naming
  ``file:LINE`` of both, since evaluation judgments (qrels) name documents by
  that id and could not tell the two apart;
- a record without an id (a HippoRAG ``{title, text}`` corpus) and every dataset
  paragraph: ``paragraph_doc_id(title, text)``, a hash of its content; equal
  passages from every question and file of one call are pooled into one document
  (later copies are skipped and counted as ``duplicate``).

Titles: a document record's ``title`` (else its id); a file's by its kind (see
:mod:`thresher.corpus.files`: from the text by the rules of
:mod:`thresher.corpus.titles`, the path for code, ...).

Size: a document longer than ``max_chars`` characters (default
:data:`MAX_DOCUMENT_CHARS`, 8 million: about 4,000 chunks of 512 tokens) is
skipped with a warning on the ``thresher.corpus.loaders`` logger and counted
as ``too_large``. One such document is almost always a log or a dump, whose
chunks would take many minutes to embed and drown out every other document in
retrieval: split it into smaller files, or raise the limit deliberately. Every
file's size is checked before any parser reads it, by the bounds
:class:`~thresher.corpus.bounded.ReadLimits` derives from ``max_chars``: a file
read whole over 4 bytes per character, a ``.json`` (parsed whole) over 16, a
``.docx`` decompressing past 16 (at least 32 MiB) is skipped unread, counted
once as ``too_large``; a ``.jsonl`` is streamed, and one line over 16 bytes per
character is read through without being kept (that record is ``too_large``).

Files change while they are read: each is opened as
:func:`~thresher.corpus.bounded.open_checked` says (no link followed but one
the walk accepted, no FIFO waited on, the device and inode it had when listed);
a file that became something else is skipped and counted as ``changed``.

A BEIR dataset folder (``corpus.jsonl``, ``queries.jsonl``, ``qrels/``; see
:mod:`thresher.corpus.beir`) contributes ``corpus.jsonl`` only: its queries are
skipped and counted as ``beir_queries``.

What is read: a file named explicitly with an unsupported extension is an
error; inside a folder, :mod:`thresher.corpus.walk` leaves out hidden entries,
tool folders (``node_modules``, ``venv``, ...), index folders, paths matched by
a ``.thresherignore``, folder links, file links resolving outside the folders
named (unless ``follow_links``), paths the caller's exclude patterns match or
its include patterns do not, unsupported files, folders that cannot be
listed and paths longer than the system allows; each is counted, with its
first paths, in :class:`LoadStats`. A folder with no supported file is an error.
A text file that is not UTF-8 is decoded in the encoding detected
(:mod:`thresher.corpus.decode`); a file that is binary, undecodable, unreadable,
a PDF without text (``no_text``) or a ``.docx`` without its extra
(``needs_extra``) is skipped and counted, never stopping the run; so is a
``.jsonl`` file found in a folder whose first value is no document record or
dataset question, and a ``.json`` file that is neither records nor one JSON
value (``not_records``). Other problems with JSON content (bad
JSON, nesting deeper than :data:`MAX_NESTING`, missing fields, duplicate ids)
raise :class:`~thresher.errors.InputError` naming the file (and line) and what
to do. Strings of a record that are not valid Unicode (lone surrogates, which
JSON escapes can hold) have those code points replaced by U+FFFD (counted as
``invalid_unicode``); a record id holding one is refused.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from thresher.corpus.bounded import FileIdentity, ReadLimits, identity, open_checked
from thresher.corpus.datasets import detect_format, record_paragraphs
from thresher.corpus.decode import UnreadableFileError
from thresher.corpus.document import Document
from thresher.corpus.files import file_document
from thresher.corpus.filetypes import CODE_LANGUAGES, KINDS, file_kind, supported_hint
from thresher.corpus.ids import paragraph_doc_id
from thresher.corpus.jsondoc import is_records, read_json_document
from thresher.corpus.jsonl import LongLine, iter_json_records, iter_jsonl
from thresher.corpus.load_stats import LoadStats
from thresher.corpus.records import make_document, record_document, valid_text
from thresher.corpus.walk import WalkRules, glob_spec, is_index_folder, valid_name, walk_files
from thresher.errors import InputError

__all__ = [
    "iter_documents",
    "SUPPORTED_EXTENSIONS",
    "MAX_DOCUMENT_CHARS",
]

#: the extensions read (files without one, and ``README.*``-like names, are sniffed)
SUPPORTED_EXTENSIONS = (*KINDS, *CODE_LANGUAGES)
#: the most characters one document may have by default (see the module docstring)
MAX_DOCUMENT_CHARS = 8_000_000
_log = logging.getLogger(__name__)
_SUPPORTED_HINT = supported_hint()


def iter_documents(
    paths: Sequence[str | Path],
    stats: LoadStats | None = None,
    *,
    max_chars: int = MAX_DOCUMENT_CHARS,
    follow_links: bool = False,
    exclude: Sequence[str | Path] = (),
    include_globs: Sequence[str] = (),
    exclude_globs: Sequence[str] = (),
) -> Iterator[Document]:
    """Every document under ``paths``, sanitized, in a deterministic order.

    Paths are checked before anything is read; folders are walked (any depth) in
    sorted order, leaving out what :mod:`thresher.corpus.walk` says.

    Args:
        paths: files and folders, as the user named them.
        stats: filled in as documents are read and skipped, when given.
        max_chars: documents longer than this are skipped with a warning.
        follow_links: read file links that resolve outside every folder named.
        exclude: folders never read (the index being written).
        include_globs: gitignore-style patterns; when given, a folder walk reads only
            the files they match (relative to the folder named). Files named are read.
        exclude_globs: gitignore-style patterns of what a folder walk leaves out.

    Returns:
        An iterator of :class:`Document`. File documents have ``doc_id`` = path
        relative to the named folder (a named file: its name) and ``root`` = that
        folder's real path; records their own id (see the module docstring);
        dataset paragraphs and id-less records ``paragraph_doc_id(title, text)``
        and ``metadata["dataset"]``. ``Document.sanitized`` holds removal counts,
        ``injection_flagged`` (patterns matched) and ``hidden_html``; flagged
        documents also carry ``metadata["injection_flags"]`` (comma-separated names).
        ``Document.origin`` is the file's path under its root's real path.

    Raises:
        InputError: a path does not exist, names an unsupported file, or is a folder
            with no supported file, or a pattern is not valid (raised by this call);
            malformed JSON/JSONL records and duplicate ids (raised while iterating).
    """
    stats = stats if stats is not None else LoadStats()
    if not paths:
        raise InputError("no input paths given; name at least one file or folder")
    rules = WalkRules(
        roots=tuple(os.path.realpath(p) for p in paths),
        exclude=tuple(os.path.realpath(p) for p in exclude),
        follow_links=follow_links,
        include_spec=glob_spec(tuple(include_globs), "--include"),
        exclude_spec=glob_spec(tuple(exclude_globs), "--exclude"),
    )
    plan = [item for p in paths for item in _plan(Path(p), stats, rules)]
    return _Reader(stats, max_chars).run(plan)


# -- planning ------------------------------------------------------------------

_Planned = tuple[Path, str, str, bool, FileIdentity | None]
"""(file, its id relative to its root, the root's real path, whether a walk found it,
its identity when listed)."""


def _plan(path: Path, stats: LoadStats, rules: WalkRules) -> list[_Planned]:
    if not path.exists():
        raise InputError(f"path does not exist: {path}; check the spelling or create it first")
    if not valid_name(os.path.realpath(path)):
        shown = os.fsencode(path).decode("utf-8", "backslashreplace")
        raise InputError(f"{shown}: its path is not valid UTF-8; rename it to index it")
    if path.is_dir():
        before = dict(stats.skipped)
        root = os.path.realpath(path)
        if root in rules.exclude or is_index_folder(path):
            raise InputError(
                f"{path} is a thresher index folder, not documents; name the folders to index"
            )
        files = list(walk_files(path, rules, lambda reason, where: stats.skip(reason, 1, where)))
        if not files:
            skipped = {k: v - before.get(k, 0) for k, v in stats.skipped.items()}
            detail = ", ".join(f"{n} {k}" for k, n in skipped.items() if n) or "empty"
            raise InputError(
                f"no supported files in folder {path} ({detail}); "
                f"add {_SUPPORTED_HINT} files or name another folder"
            )
        return [(f, f.relative_to(path).as_posix(), root, True, identity(f)) for f in files]
    if not path.is_file():
        raise InputError(f"not a regular file or folder: {path}; name a file or a folder")
    if file_kind(path.name) is None:
        raise InputError(
            f"unsupported file type '{path.suffix or '(none)'}': {path}; "
            f"convert it to one of {_SUPPORTED_HINT}"
        )
    return [(path, path.name, os.path.realpath(path.parent), False, identity(path))]


# -- reading ---------------------------------------------------------------------


class _Reader:
    """Turns planned files into documents, tracking ids already yielded."""

    def __init__(self, stats: LoadStats, max_chars: int = MAX_DOCUMENT_CHARS) -> None:
        self.stats = stats
        self.max_chars = max_chars
        self.limits = ReadLimits(max_chars)
        # doc_id -> (where first seen, whether its id is a content hash)
        self.seen: dict[str, tuple[str, bool]] = {}
        self.files: set[tuple[int, int]] = set()  # (device, inode) of the files read
        self.origin = ""  # the path of the file being read, under its root's real path

    def run(self, plan: list[_Planned]) -> Iterator[Document]:
        for path, rel, root, walked, ident in plan:
            key = (ident.dev, ident.ino) if ident else (-1, len(self.files))
            if key in self.files:
                self.stats.skip("same_file", 1, str(path))
                continue
            self.files.add(key)
            self.stats.files += 1
            self.origin = os.path.join(root, *rel.split("/"))
            try:
                fh, size = open_checked(path, ident)
            except UnreadableFileError as exc:
                self._unreadable(exc, path, walked)
                continue
            with fh:
                yield from self._read(fh, size, path, rel, root, walked)

    def _read(
        self, fh: BinaryIO, size: int, path: Path, rel: str, root: str, walked: bool
    ) -> Iterator[Document]:
        """The documents of the open file ``fh`` (``size`` bytes), by its kind; its
        size is checked before any parser reads it."""
        kind = file_kind(path.name)
        if path.suffix.lower() == ".jsonl":  # streamed: each line bounded
            numbered = iter_jsonl(path, fh=fh, max_line_bytes=self.limits.record_bytes)
            lines = ((f":{n}", record) for n, record in numbered)
            yield from self._record_file(lines, path, rel, walked)
        elif kind == "records":  # parsed whole
            if self._too_large_file(path, size, self.limits.record_bytes):
                return
            records = iter_json_records(path, fh=fh, max_bytes=self.limits.record_bytes)
            yield from self._record_file(records, path, rel, walked, root, fh)
        elif kind is not None and not self._too_large_file(path, size, self.limits.file_bytes):
            try:
                doc = file_document(path, rel, kind, self.limits, fh)
            except UnreadableFileError as exc:
                self._unreadable(exc, path, walked)
                return
            yield from self._emit(dataclasses.replace(doc, root=root), str(path), file=True)

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
        self.stats.skip("too_large", 1, where)
        return True

    def _too_large_file(self, path: Path, size: int, limit: int) -> bool:
        """Skip (warn, count once: not as read) a file of ``size`` bytes over ``limit``
        (:class:`~thresher.corpus.bounded.ReadLimits`), without reading it."""
        if size <= limit:
            return False
        _log.warning(
            "%s: skipped, a file of %s bytes is over the limit of %s bytes (%s characters "
            "per document); split it into smaller files%s (or raise the limit: "
            "--max-doc-chars)",
            path,
            f"{size:,}",
            f"{limit:,}",
            f"{self.max_chars:,}",
            ", or a .json into JSON Lines (.jsonl, read line by line)"
            if path.suffix.lower() == ".json"
            else "",
        )
        self.stats.files -= 1
        self.stats.skip("too_large", 1, str(path))
        return True

    def _unreadable(self, exc: UnreadableFileError, path: Path, walked: bool) -> None:
        """Warn about and count a file that cannot be read as its kind; a file named
        explicitly whose reader is a missing extra is an error."""
        if not walked and exc.reason == "needs_extra":
            raise exc
        _log.warning("%s", exc)
        self.stats.files -= 1
        self.stats.skip(exc.reason, 1, str(path))

    def _json_document(
        self, path: Path, rel: str, root: str, walked: bool, fh: BinaryIO | None
    ) -> Iterator[Document]:
        """A ``.json`` file that holds no records, as one document (its path is its id)."""
        try:
            text, title = read_json_document(path, fh, self.limits.file_bytes)
        except UnreadableFileError as exc:
            if not walked and exc.reason == "not_records":
                raise
            self._unreadable(exc, path, walked)
            return
        doc = make_document(rel, title or path.stem, text, rel, {})
        yield from self._emit(dataclasses.replace(doc, root=root), str(path), file=True)

    def _record_file(
        self,
        records: Iterable[tuple[str, Any]],
        path: Path,
        rel: str,
        walked: bool,
        root: str = "",
        fh: BinaryIO | None = None,
    ) -> Iterator[Document]:
        """Documents of one JSON/JSONL file. A ``.json`` file (``root`` given) whose
        first value is not a record (:func:`~thresher.corpus.jsondoc.is_records`) is one
        JSON document. Found in a folder, a ``.jsonl`` file whose first value is neither
        a document record nor a dataset question is skipped and counted as
        ``not_records``; named, it is an error."""
        values = iter(records)
        as_document = False  # one JSON value (or array) that holds no records
        try:
            head = next(values, None)
            parsed = head is not None and not isinstance(head[1], LongLine)  # else too large
            if head is not None and parsed and root:  # .json: other values: not_records
                as_document = not is_records(head[1])
            if head is not None and parsed and walked and not as_document:
                _check_record(head[1], f"{path}{head[0]}", rel, head[0])
        except UnreadableFileError as exc:
            self._unreadable(exc, path, walked)
            return
        except InputError as exc:
            if not walked:
                raise
            _log.warning("%s: skipped, not document records or a QA dataset (%s)", path, exc)
            self.stats.files -= 1
            self.stats.skip("not_records", 1, str(path))
            return
        if as_document:
            yield from self._json_document(path, rel, root, walked, fh)
        elif head is not None:
            yield from self._records(itertools.chain([head], values), path, rel)

    def _records(
        self, records: Iterable[tuple[str, Any]], path: Path, rel: str
    ) -> Iterator[Document]:
        """Documents of one JSON/JSONL file; its first record decides the format."""
        fmt: str | None = None
        first = True
        for location, record in records:
            where = f"{path}{location}"
            if isinstance(record, LongLine):  # never parsed
                self._too_large(where, record.size, exact=False)
                continue
            if first:
                fmt, first = detect_format(record), False
                if fmt == "paragraph_corpus":
                    fmt = None  # document records: each keeps its own id, if it has one
            if fmt is None:
                doc, hashed = record_document(record, where, rel, location)
                if hashed and doc.doc_id in self.seen and self.seen[doc.doc_id][1]:
                    self.stats.skip("duplicate", 1, where)
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
                self.stats.skip("no_context", 1, where)
                continue
            for title, text in paragraphs:
                title, text = valid_text(title, where)[0], valid_text(text, where)[0]
                doc_id = paragraph_doc_id(title, text)
                if doc_id in self.seen and self.seen[doc_id][1]:
                    self.stats.skip("duplicate", 1, where)
                    continue
                meta = {"dataset": fmt}
                yield from self._emit(make_document(doc_id, title, text, rel, meta), where, True)

    def _emit(
        self, doc: Document, where: str, hashed: bool = False, file: bool = False
    ) -> Iterator[Document]:
        """Count and yield ``doc``; a file's id is checked at ingestion, which labels it
        by its root (two folders may each hold a ``README.md``)."""
        if self._too_large(where, len(doc.text)):
            if file:
                self.stats.files -= 1  # a file skipped is not also read
            return
        if not file:
            if doc.doc_id in self.seen:
                raise InputError(
                    f"duplicate document id '{doc.doc_id}' in {where} (first seen in "
                    f"{self.seen[doc.doc_id][0]}); give every record a unique id "
                    "or do not name the same file twice"
                )
            self.seen[doc.doc_id] = (where, hashed)
        if not doc.text.strip():
            self.stats.skip("empty", 1, where)
            return
        self.stats.documents += 1
        yield dataclasses.replace(doc, origin=self.origin)


def _check_record(record: Any, where: str, rel: str, location: str) -> None:
    """Raise the InputError reading ``record`` as a first record would raise."""
    fmt = detect_format(record)
    if fmt is None or fmt == "paragraph_corpus":
        record_document(record, where, rel, location)
        return
    try:
        record_paragraphs(fmt, record)
    except ValueError as exc:
        raise InputError(f"{where}: not a {fmt} record ({exc})") from exc
