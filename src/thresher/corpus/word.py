"""The text of a Word ``.docx`` file, read with python-docx (the ``docx`` extra).

python-docx needs lxml, a compiled library, so it is not installed with
thresher: ``pip install 'thresher[docx]'``. Without it a ``.docx`` found in a
folder is skipped and counted as ``needs_extra`` (with a warning naming the
extra); one named explicitly is an error saying the same.

Text: the body's paragraphs and tables in document order, one paragraph per
block (blank lines between them), a table row as its cells joined by `` | ``.
Title: the core properties' ``title``, else the first paragraph styled
``Title`` or ``Heading 1``, else the title :mod:`thresher.corpus.titles` finds.

A ``.docx`` is a zip archive of XML: its decompressed size is checked against a
limit before python-docx reads it (:func:`thresher.corpus.bounded.check_zip`), so
a small file that inflates to gigabytes is refused (``too_large``).
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

from thresher.corpus.bounded import check_zip
from thresher.corpus.decode import UnreadableFileError
from thresher.corpus.titles import text_title

__all__ = ["MissingExtraError", "read_docx"]


class MissingExtraError(UnreadableFileError):
    """A file type whose reader is an optional extra that is not installed."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "needs_extra")


def read_docx(
    path: Path, fh: BinaryIO | None = None, max_unzipped: int | None = None
) -> tuple[str, str | None]:
    """(text, title or None) of the ``.docx`` file ``path`` (module docstring).

    Args:
        path: the file (named in errors).
        fh: the file, already open and seekable (None: ``path`` is opened).
        max_unzipped: the most bytes its entries may decompress to (None: no limit).

    Raises:
        MissingExtraError: python-docx is not installed.
        UnreadableFileError: ``unreadable``: not a Word document python-docx can open;
            ``too_large``: it decompresses to more than ``max_unzipped``.
    """
    try:
        import docx
        from docx.table import Table
        from docx.text.paragraph import Paragraph
    except ImportError as exc:
        raise MissingExtraError(
            f"{path}: reading .docx needs python-docx; install it with pip install 'thresher[docx]'"
        ) from exc
    if max_unzipped is not None:
        if fh is None:
            with path.open("rb") as own:
                check_zip(own, max_unzipped, path)
        else:
            check_zip(fh, max_unzipped, path)
    try:
        document = docx.Document(str(path) if fh is None else fh)
        blocks: list[str] = []
        heading: str | None = None
        for item in document.iter_inner_content():
            if isinstance(item, Paragraph):
                text = item.text.strip()
                style = item.style.name if item.style is not None else ""
                if text and heading is None and style in ("Title", "Heading 1"):
                    heading = text
            elif isinstance(item, Table):
                rows = [" | ".join(c.text.strip() for c in row.cells) for row in item.rows]
                text = "\n".join(r for r in rows if r.strip(" |"))
            if text:
                blocks.append(text)
        core = (document.core_properties.title or "").strip()
    except Exception as exc:  # noqa: BLE001 - a damaged file raises zip, XML or key errors
        raise UnreadableFileError(
            f"{path}: not a Word document python-docx can open ({type(exc).__name__}: "
            f"{exc}); re-save it from Word or LibreOffice",
            "unreadable",
        ) from exc
    text = "\n\n".join(blocks)
    return text, core or heading or text_title(text)
