"""A CSV or TSV table as text a search can match row by row.

Each row becomes one paragraph of ``column: value`` lines, named by the header
(the first row), and rows are separated by a blank line::

    name: Tarrow pier
    built: 1881

    name: Kessel quay
    built: 1902

Chunking cuts at blank lines first, so a chunk holds whole rows and every value
in it keeps its column's name; a row never depends on a header that went to an
earlier chunk. Empty cells are left out; a header cell that is empty, or a cell
past the header's width, is named ``column N`` (1-based); blank lines inside a
cell are closed up, so a row stays one paragraph. The file is parsed
with the standard :mod:`csv` module (quoted fields may hold delimiters and line
breaks): ``.tsv`` is tab-separated, ``.csv`` comma-separated unless its first
line has more semicolons than commas (a spreadsheet export in many locales).
"""

from __future__ import annotations

import csv
import io
import re

__all__ = ["table_to_text"]

#: the widest a field may be (csv's default, 128 KiB, refuses long text cells)
_FIELD_LIMIT = 1 << 24
_BLANK_LINES = re.compile(r"\n[^\S\n]*\n\s*")


def _delimiter(text: str, tab: bool) -> str:
    if tab:
        return "\t"
    first = text.split("\n", 1)[0]
    return ";" if first.count(";") > first.count(",") else ","


def table_to_text(text: str, *, tab: bool = False) -> tuple[str, int]:
    """The rows of a CSV/TSV ``text`` as ``column: value`` paragraphs (module docstring).

    Args:
        text: the file's decoded text.
        tab: tab-separated (``.tsv``) rather than comma-separated.

    Returns:
        (text, rows): the rendered text ('' for a file with a header only or no
        rows) and the number of data rows rendered.

    Raises:
        csv.Error: the text cannot be parsed as a table (the caller names the file).
    """
    csv.field_size_limit(max(csv.field_size_limit(), _FIELD_LIMIT))
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_delimiter(text, tab))
    header: list[str] | None = None
    blocks: list[str] = []
    for row in reader:
        if not any(cell.strip() for cell in row):
            continue
        if header is None:
            header = [" ".join(cell.split()) for cell in row]
            continue
        lines = []
        for i, cell in enumerate(row):
            value = _BLANK_LINES.sub("\n", cell.strip())  # a row stays one paragraph
            if value:
                name = header[i] if i < len(header) and header[i] else f"column {i + 1}"
                lines.append(f"{name}: {value}")
        if lines:
            blocks.append("\n".join(lines))
    return "\n\n".join(blocks), len(blocks)
