"""The text of a PDF, page by page, read with pypdf (pure Python, maintained).

Each page's text layer is extracted (``PdfReader.pages[i].extract_text()``),
sanitized, stripped, and the pages are joined with a blank line; the document
keeps where each page starts (``Document.pages``), so every chunk carries the
pages it spans (``metadata["page"]``, ``metadata["page_end"]``: 1-based, see
:func:`thresher.corpus.chunking.chunk_document`). A PDF whose pages hold no
text (a scan without a text layer) raises :class:`UnreadableFileError` with
reason ``no_text`` (run OCR first, e.g. ``ocrmypdf``); one that pypdf cannot
parse or decrypt (with the empty password), ``unreadable``.

The title is the document information's ``/Title`` when it names something
(not a file name such as ``Microsoft Word - notes.docx`` or ``untitled``), else
the title :mod:`thresher.corpus.titles` finds in the first page's text, else none.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from thresher.corpus.decode import UnreadableFileError
from thresher.corpus.sanitize import merge_counts, sanitize_text
from thresher.corpus.titles import text_title

if TYPE_CHECKING:
    from pypdf import PdfReader

__all__ = ["PdfText", "read_pdf"]

_FILE_NAME_TITLE = re.compile(
    r"^(?:microsoft \w+ - .*|.*\.(?:docx?|pdf|odt|rtf|txt|tex|dvi|ps)|untitled.*)$",
    re.IGNORECASE,
)
# pypdf reports every oddity of a malformed file on its logger; the loader's warning says enough
logging.getLogger("pypdf").setLevel(logging.ERROR)


@dataclass(frozen=True, slots=True)
class PdfText:
    """A PDF's sanitized text and where its pages start.

    Attributes:
        text: the pages' text joined with blank lines.
        pages: the offset in ``text`` where each page starts (page 1 at 0; an
            empty page starts where the next one does).
        title: the title found, or None.
        counts: what sanitization removed, by kind.
    """

    text: str
    pages: tuple[int, ...]
    title: str | None
    counts: dict[str, int] = field(default_factory=dict)


def _info_title(reader: PdfReader) -> str | None:
    try:
        meta = reader.metadata
        title = meta.title if meta is not None else None
    except Exception:  # noqa: BLE001 - a broken info dictionary only loses the title
        return None
    if not isinstance(title, str):
        return None
    title = " ".join(sanitize_text(title)[0].split())
    return title if title and not _FILE_NAME_TITLE.match(title) else None


def read_pdf(path: Path, fh: BinaryIO | None = None) -> PdfText:
    """The text of the PDF ``path``, page by page (see the module docstring).

    Args:
        path: the file (named in errors).
        fh: the file, already open (None: ``path`` is opened).

    Raises:
        UnreadableFileError: ``unreadable`` (pypdf cannot parse or decrypt it) or
            ``no_text`` (no page has a text layer).
    """
    from pypdf import PdfReader

    try:
        reader = PdfReader(path if fh is None else fh)
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadableFileError(
                f"{path}: an encrypted PDF; save a copy without a password to index it",
                "unreadable",
            )
        raw = [page.extract_text() or "" for page in reader.pages]
    except UnreadableFileError:
        raise
    except Exception as exc:  # noqa: BLE001 - pypdf raises many types on malformed files
        raise UnreadableFileError(
            f"{path}: pypdf cannot read this PDF ({type(exc).__name__}: {exc}); "
            "re-save or print it to a new PDF",
            "unreadable",
        ) from exc
    parts: list[str] = []
    pages: list[int] = []
    counts: dict[str, int] = {}
    offset = 0
    for page_text in raw:
        clean, removed = sanitize_text(page_text)
        counts = merge_counts(counts, removed)
        clean = clean.strip()
        pages.append(offset)
        if clean:
            if parts:
                offset += 2  # the blank line joining it to the previous page
                pages[-1] = offset
            parts.append(clean)
            offset += len(clean)
    text = "\n\n".join(parts)
    if not text:
        raise UnreadableFileError(
            f"{path}: no text layer on any of its {len(raw)} pages (a scan?); "
            "run OCR on it first (e.g. ocrmypdf) to index it",
            "no_text",
        )
    title = _info_title(reader) or text_title(parts[0])
    return PdfText(text, tuple(pages), title, counts)
