from __future__ import annotations

from pathlib import Path

from thresher.corpus.ids import chunk_id, content_hash, file_doc_id, paragraph_doc_id


def test_paragraph_doc_id_is_stable_and_whitespace_insensitive() -> None:
    a = paragraph_doc_id("Paris", "Paris is the capital of France.")
    assert a == paragraph_doc_id("Paris", "  Paris is   the capital\nof France. ")
    assert a.startswith("p-") and len(a) == 14
    # pinned value: ids must not change between releases or machines
    assert (
        a
        == "p-"
        + __import__("hashlib").sha256(b"Paris\nParis is the capital of France.").hexdigest()[:12]
    )


def test_paragraph_doc_id_depends_on_title_and_text() -> None:
    base = paragraph_doc_id("A", "text")
    assert base != paragraph_doc_id("B", "text")
    assert base != paragraph_doc_id("A", "other text")


def test_file_doc_id_relative_posix(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    f = root / "sub" / "a.md"
    assert file_doc_id(f, root) == "sub/a.md"
    assert file_doc_id(f, f) == "a.md"


def test_chunk_id_and_content_hash() -> None:
    assert chunk_id("doc", 3) == "doc#3"
    h = content_hash("hello")
    assert h == content_hash("hello") and len(h) == 16 and h != content_hash("hello!")
