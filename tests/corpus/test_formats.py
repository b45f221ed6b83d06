"""The formats a user's folder holds: files without extension, .rst, code, tables,
PDF (pages kept on chunks), .docx; every test file is written by the test."""

from __future__ import annotations

import builtins
import gzip
from pathlib import Path
from typing import Any

import pytest

from thresher.corpus.chunking import chunk_document
from thresher.corpus.filetypes import file_kind
from thresher.corpus.load_stats import LoadStats
from thresher.corpus.loaders import iter_documents
from thresher.corpus.tables import table_to_text
from thresher.errors import InputError
from thresher.tokens import get_counter


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _pdf_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[str], title: str | None = None) -> bytes:
    """A minimal PDF (Helvetica text, one line per line of ``pages[i]``), built by hand."""
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for i, text in enumerate(pages):
        shown = " ".join(f"({_pdf_string(line)}) Tj T*" for line in text.split("\n") if line)
        stream = f"BT /F1 12 Tf 72 720 Td 14 TL {shown} ET".encode()
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources "
            f"<< /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    info = ""
    if title is not None:
        objects.append(f"<< /Title ({_pdf_string(title)}) >>".encode())
        info = f" /Info {len(objects)} 0 R"
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    trailer = f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{info} >>\n"
    return out + f"{trailer}startxref\n{xref}\n%%EOF\n".encode()


def load(*paths: Path, stats: LoadStats | None = None) -> dict[str, Any]:
    return {d.doc_id: d for d in iter_documents(list(paths), stats)}


# -- which files are read --------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("README", "sniffed"), ("copyright", "sniffed"), ("Makefile", "sniffed"),
        ("README.Debian", "sniffed"), ("LICENSE.MIT", "sniffed"), ("NEWS.gz", "sniffed"), ("a.tar.gz", None), ("a.pdf.gz", None), ("x.txt.gz.gz", None),
        ("guide.RST.GZ", "rst"), ("data.json.gz", None),
        ("guide.rst", "rst"), ("tool.py", "code"), ("main.RS", "code"), ("setup.cfg", "code"),
        ("data.csv", "table"), ("data.tsv", "table"), ("a.pdf", "pdf"), ("a.docx", "docx"),
        ("a.json", "records"), ("photo.png", None), ("lib.so", None), ("notes.xyz", None),
    ],
)  # fmt: skip
def test_file_kinds(name: str, kind: str | None) -> None:
    assert file_kind(name) == kind


# -- text without extension, .rst, code --------------------------------------------


def test_files_without_extension_are_sniffed(tmp_path: Path) -> None:
    root = tmp_path / "doc"
    write(root / "kelpdry" / "README", "Kelp drying tool\n\nDries kelp on racks.\n")
    write(root / "kelpdry" / "NEWS.Debian", "kelpdry (1.2)\n\n  * Faster racks.\n")
    write(
        root / "kelpdry" / "copyright",
        "Format: https://www.debian.org/doc/packaging-"
        "manuals/copyright-format/1.0/\nUpstream-Name: KelpDry\n\nFiles: *\nLicense: MIT\n",
    )
    write(
        root / "other" / "copyright",
        "Format: https://www.debian.org/doc/packaging-"
        "manuals/copyright-format/1.0/\n\nFiles: *\nLicense: MIT\n",
    )
    write(root / "kelpdry" / "run", b"\x7fELF\x02\x01\x01\x00\x00binary")
    write(root / "kelpdry" / "blob", bytes(range(1, 32)) * 40)  # control bytes, no NUL
    stats = LoadStats()
    docs = load(root, stats=stats)
    assert {k: v.title for k, v in docs.items()} == {
        "kelpdry/NEWS.Debian": "kelpdry (1.2)",
        "kelpdry/README": "Kelp drying tool",
        "kelpdry/copyright": "KelpDry",  # DEP-5: its Upstream-Name
        "other/copyright": "other/copyright",  # DEP-5 without one: its path
    }
    assert stats.skipped == {"binary": 2}


def test_rst_and_code_files(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    write(root / "docs" / "guide.rst", ".. _guide:\n\n=====\nGuide\n=====\n\nRacks.\n")
    write(root / "src" / "kelp" / "racks.py", '"""Racks."""\n\ndef dry() -> None:\n    pass\n')
    write(root / "src" / "main.c", "int main(void) { return 0; }\n")
    docs = load(root)
    assert docs["docs/guide.rst"].title == "Guide"
    racks = docs["src/kelp/racks.py"]
    assert racks.title == "src/kelp/racks.py" and racks.metadata == {"language": "python"}
    assert racks.text.startswith('"""Racks."""\n\ndef dry()')  # as is
    assert docs["src/main.c"].metadata == {"language": "c"}


# -- tables ----------------------------------------------------------------------


def test_a_table_is_rows_of_column_value_lines() -> None:
    text = 'name,built,note\nTarrow pier,1881,"long, with\n\ncomma"\n,,\nKessel quay,,x,extra\n'
    rendered, rows = table_to_text(text)
    assert rows == 2
    assert rendered == (
        "name: Tarrow pier\nbuilt: 1881\nnote: long, with\ncomma\n\n"
        "name: Kessel quay\nnote: x\ncolumn 4: extra"
    )
    assert table_to_text("a;b\n1;2\n")[0] == "a: 1\nb: 2"  # a semicolon export
    assert table_to_text("a\tb\n1\t2\n", tab=True)[0] == "a: 1\nb: 2"
    assert table_to_text("only,a,header\n") == ("", 0)


def test_table_chunks_keep_the_column_names(tmp_path: Path) -> None:
    rows = "".join(f"pier {i},{1800 + i},harbour number {i}\n" for i in range(200))
    write(tmp_path / "piers.tsv", "name\tbuilt\n1\t2\n")
    doc = load(write(tmp_path / "piers.csv", "name,built,harbour\n" + rows))["piers.csv"]
    assert doc.title == "piers"
    chunks = chunk_document(doc, 64, get_counter())
    assert len(chunks) > 5
    for chunk in chunks:  # every chunk starts a row and names every value
        assert chunk.text.startswith("name: pier ")
        assert all(line.split(": ", 1)[0] in {"name", "built", "harbour"}
                   for line in chunk.text.split("\n") if line)  # fmt: skip


# -- PDF -------------------------------------------------------------------------


def test_pdf_pages_are_kept_on_chunks(tmp_path: Path) -> None:
    pages = ["Kelp drying report\nRacks were built in 1881.", "", "The quay opened in 1902."]
    path = write(tmp_path / "report.pdf", make_pdf(pages))
    doc = load(path)["report.pdf"]
    assert doc.title == "Kelp drying report"  # no /Title: the first page's
    assert "1881" in doc.text and "1902" in doc.text
    assert len(doc.pages) == 3 and doc.pages[0] == 0
    counter = get_counter()
    whole = chunk_document(doc, 512, counter)
    assert [(c.metadata["page"], c.metadata["page_end"]) for c in whole] == [(1, 3)]
    small = chunk_document(doc, 8, counter)
    for chunk in small:
        assert ("1881" in chunk.text) <= (chunk.metadata["page"] == 1)
        assert ("1902" in chunk.text) <= (chunk.metadata["page_end"] == 3)
        assert chunk.metadata["page"] != 2  # page 2 is empty
    assert {c.metadata["page"] for c in small} == {1, 3}


def test_pdf_title_and_pdfs_without_text(tmp_path: Path) -> None:
    folder = tmp_path / "pdfs"
    write(folder / "a.pdf", make_pdf(["Body line one\nline two"], title="Harbour survey"))
    write(folder / "b.pdf", make_pdf(["Body\nmore"], title="Microsoft Word - b.docx"))
    write(folder / "scan.pdf", make_pdf(["", ""]))  # no text layer
    write(folder / "broken.pdf", b"%PDF-1.4\nnot a pdf at all")
    stats = LoadStats()
    docs = load(folder, stats=stats)
    assert docs["a.pdf"].title == "Harbour survey"
    assert docs["b.pdf"].title == "Body"  # a file name is no title
    assert stats.skipped == {"no_text": 1, "unreadable": 1}
    assert stats.examples["no_text"] == [str(folder / "scan.pdf")]


# -- .docx -----------------------------------------------------------------------


def test_docx_paragraphs_tables_and_title(tmp_path: Path) -> None:
    docx = pytest.importorskip("docx")
    document = docx.Document()
    document.add_paragraph("Harbour minutes", style="Title")
    document.add_paragraph("The racks were moved.")
    table = document.add_table(rows=2, cols=2)
    for r, row in enumerate([("pier", "built"), ("Tarrow", "1881")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.save(str(tmp_path / "minutes.docx"))
    doc = load(tmp_path / "minutes.docx")["minutes.docx"]
    assert doc.title == "Harbour minutes"
    assert doc.text == "Harbour minutes\n\nThe racks were moved.\n\npier | built\nTarrow | 1881"


def test_docx_without_its_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_docx(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "docx" or name.startswith("docx."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_docx)
    path = write(tmp_path / "f" / "minutes.docx", b"PK\x03\x04")
    write(tmp_path / "f" / "note.txt", "A note.\n")
    stats = LoadStats()
    assert list(load(tmp_path / "f", stats=stats)) == ["note.txt"]
    assert stats.skipped == {"needs_extra": 1}
    with pytest.raises(InputError, match=r"pip install 'thresher\[docx\]'"):
        load(path)


# -- gzip ------------------------------------------------------------------------


def test_gzip_files_are_read_as_what_they_compress(tmp_path: Path, caplog) -> None:
    root = tmp_path / "doc"
    write(root / "changelog.Debian.gz", gzip.compress(b"kelpdry (1.2) unstable\n\n  * Racks.\n"))
    write(root / "guide.rst.gz", gzip.compress(b"Intro\n\nDrying\n======\nx\n"))
    write(root / "big.txt.gz", gzip.compress(b"word " * 2000))  # 10,000 bytes once decompressed
    write(root / "broken.gz", b"\x1f\x8b not gzip")
    write(root / "src.tar.gz", gzip.compress(b"x"))
    stats = LoadStats()
    docs = {d.doc_id: d for d in iter_documents([root], stats, max_chars=1000)}
    assert {k: v.title for k, v in docs.items()} == {
        "changelog.Debian.gz": "kelpdry (1.2) unstable",
        "guide.rst.gz": "Drying",
    }
    assert stats.skipped == {"too_large": 1, "unreadable": 1, "unsupported": 1}
    assert "big.txt.gz: skipped, it decompresses to over 4,000 bytes" in caplog.text
