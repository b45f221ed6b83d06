"""Read files, folders and dataset dumps into sanitized :class:`Document` records.

:func:`iter_documents` is the one entry point: every document under the paths
named, in a deterministic order, each read by its kind
(:mod:`thresher.corpus.filetypes`, :mod:`thresher.corpus.files`); a
``.jsonl``/``.json`` file holds document records (:mod:`thresher.corpus.records`),
a multi-hop QA dataset recognized from its first record
(:mod:`thresher.corpus.datasets`), or, for a ``.json``, one JSON document
(:mod:`thresher.corpus.jsondoc`). A folder is walked by the rules of
:mod:`thresher.corpus.walk`; a BEIR folder contributes ``corpus.jsonl`` only
(:mod:`thresher.corpus.beir`).

Document ids: a file's path relative to the folder named (``Document.root`` is
that folder's real path; ingestion prefixes it with the folder's label,
:mod:`thresher.index.ingest.roots`), the same file reached twice is read once; a
record's own id (``id``, ``_id``, ``doc_id`` or ``docid``, unchanged); a dataset
paragraph or an id-less record, ``paragraph_doc_id(title, text)``, equal
passages pooled into one document (later copies counted as ``duplicate``).

Bounds: a document longer than ``max_chars`` (default
:data:`MAX_DOCUMENT_CHARS`, 8 million characters) is skipped with a warning on
this module's logger; every file's size is checked before a parser reads it, by
the bounds :class:`~thresher.corpus.bounded.ReadLimits` derives from
``max_chars``, and every file is opened as
:func:`~thresher.corpus.bounded.open_checked` says.

Skipped and counted in :class:`~thresher.corpus.load_stats.LoadStats`, never
stopping the run: what the walk leaves out, files too large, changed, binary,
undecodable, unreadable, without text (``no_text``) or without their extra
(``needs_extra``), a ``.jsonl``/``.json`` found in a folder that holds neither
records nor a dataset nor one JSON value (``not_records``), and strings that
are not valid Unicode (replaced by U+FFFD, ``invalid_unicode``). Raised as
:class:`~thresher.errors.InputError`, naming the file (and line) and what to do:
a path that does not exist, an unsupported file named explicitly, a folder with
no supported file, bad JSON, nesting deeper than :data:`MAX_NESTING`, missing
fields, an id seen twice in one call (qrels could not tell the two apart), a
record id that is not valid Unicode. The whole account, with examples:
``docs/ingestion.md``.
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
