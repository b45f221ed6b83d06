"""One file (not a record file) as one :class:`Document`, read by its kind.

The kind comes from :func:`thresher.corpus.filetypes.file_kind`. Text is
decoded by :mod:`thresher.corpus.decode` (UTF-8, else the encoding detected),
then, by kind:

==========  ===============================================  ==========================
kind        text                                             title (else)
==========  ===============================================  ==========================
text        as is (reStructuredText as ``rst``)                  from the text (file stem)
markdown    as is, code blocks marked                            headings, as a reader
            (:mod:`thresher.corpus.markup`)                  sees them (file stem)
rst         as is, code blocks marked                        section titles, as a
                                                             reader sees them (stem)
html        parsed (:mod:`thresher.corpus.html`)             ``<title>``, ``<h1>`` (stem)
sniffed     as is, if text (else ``binary``)                 from the text (its path)
code        as is; ``metadata["language"]``                  its path
table       rows as ``column: value`` paragraphs             file stem
            (:mod:`thresher.corpus.tables`)
pdf         text per page; chunks carry their pages          ``/Title``, first page
            (:mod:`thresher.corpus.pdf`)                     (file stem)
docx        paragraphs and tables (:mod:`thresher.corpus.word`)  core title, heading (stem)
==========  ===============================================  ==========================

Titles "from the text" follow :mod:`thresher.corpus.titles`. A file that
cannot be read as its kind raises :class:`UnreadableFileError`, whose reason
the loader counts it under and goes on: ``binary``, ``undecodable``,
``unreadable``, ``no_text`` (a PDF without a text layer), ``needs_extra`` (a
``.docx`` without python-docx installed).
"""

from __future__ import annotations

import csv
import re
from dataclasses import replace
from pathlib import Path
from typing import Any, BinaryIO

from thresher.corpus.bounded import ReadLimits
from thresher.corpus.decode import UnreadableFileError, read_text_file
from thresher.corpus.document import Document
from thresher.corpus.filetypes import CODE_LANGUAGES, plain_name
from thresher.corpus.html import html_to_text
from thresher.corpus.markup import MARKUP_KINDS, code_ranges, markup_kind, reader_text
from thresher.corpus.pdf import read_pdf
from thresher.corpus.records import make_document
from thresher.corpus.sanitize import sanitize_text
from thresher.corpus.tables import table_to_text
from thresher.corpus.titles import text_title
from thresher.corpus.word import read_docx

__all__ = ["file_document", "looks_binary"]

#: control characters that text files do not hold (tab, line feed, form feed,
#: carriage return and escape excepted)
_CONTROL = re.compile("[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f\x7f]")
_SNIFF_CHARS = 8192
_MAX_CONTROL_SHARE = 0.02


def looks_binary(text: str) -> bool:
    """Whether decoded ``text`` is binary data that happened to decode: more than 2%
    of its first 8,192 characters are control characters text does not hold."""
    head = text[:_SNIFF_CHARS]
    return bool(head) and len(_CONTROL.findall(head)) > _MAX_CONTROL_SHARE * len(head)


def file_document(
    path: Path,
    rel: str,
    kind: str,
    limits: ReadLimits | None = None,
    fh: BinaryIO | None = None,
) -> Document:
    """The document of the file ``path`` read as ``kind`` (see the module docstring).

    Args:
        path: the file.
        rel: its path relative to the folder it was read under (the document's id,
            source, and the title of code and of text files without one).
        kind: its kind (:func:`thresher.corpus.filetypes.file_kind`; not ``records``).
        limits: the most bytes it may hold (a text file, a ``.gz`` decompressed) and
            a ``.docx`` may decompress to (None: no limit).
        fh: the file, already open and seekable
            (:func:`thresher.corpus.bounded.open_checked`; None: ``path`` is opened).

    Returns:
        The sanitized document (``pages`` set for a PDF).

    Raises:
        UnreadableFileError: the file cannot be read as ``kind``; ``reason`` says why.
    """
    plain = Path(plain_name(path.name))  # a .gz file is read as the file it compresses
    stem, suffix = plain.stem, plain.suffix.lower()
    if kind == "pdf":
        pdf = read_pdf(path, fh)
        doc = make_document(rel, pdf.title or stem, pdf.text, rel, {}, pdf.counts)
        return replace(doc, pages=pdf.pages)
    if kind == "docx":
        text, heading = read_docx(path, fh, limits.unzipped_bytes if limits else None)
        return make_document(rel, heading or stem, text, rel, {})
    text, _encoding = read_text_file(path, limits.file_bytes if limits else None, fh)
    meta: dict[str, Any] = {}
    extra: dict[str, int] = {}
    title: str | None = None
    if kind == "html":
        text, title, extra = html_to_text(text)
    elif kind == "code":
        title, meta = rel, {"language": CODE_LANGUAGES[suffix]}
    elif kind == "table":
        try:
            text, _rows = table_to_text(text, tab=suffix == ".tsv")
        except csv.Error as exc:
            raise UnreadableFileError(
                f"{path}: not a table csv can parse ({exc}); fix or re-export it", "unreadable"
            ) from exc
    elif kind == "sniffed":
        if looks_binary(text):
            raise UnreadableFileError(
                f"{path}: binary content (control characters); only text can be "
                "ingested, convert or remove this file",
                "binary",
            )
        title = text_title(sanitize_text(text)[0], stem=stem) or rel
    else:
        kind = markup_kind(text, kind)  # a .txt file may be reStructuredText
        # the text is indexed as written (section chunking reads its structure); the
        # title is what a reader of the rendered page sees
        clean = sanitize_text(reader_text(text, kind))[0]
        title = text_title(clean, markdown=kind == "markdown", rst=kind == "rst", stem=stem)
    doc = make_document(rel, title or stem, text, rel, meta, extra)
    if kind in MARKUP_KINDS:
        doc = replace(doc, code=tuple(code_ranges(doc.text, kind)))
    return doc
