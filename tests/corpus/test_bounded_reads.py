"""Every reader bounded: sizes checked before any parser, no link followed and no FIFO
waited on after the walk, a folder that cannot be walked skipped with its reason.

Memory is measured with :mod:`tracemalloc` (Python allocations: the bytes a reader
holds); the files are sparse, so they cost no disk.
"""

from __future__ import annotations

import io
import json
import os
import struct
import threading
import tracemalloc
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from thresher.corpus.document import Document
from thresher.corpus.load_stats import LoadStats
from thresher.corpus.loaders import iter_documents

MB = 1 << 20


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def sparse(path: Path, head: bytes, size: int) -> Path:
    """A file of ``head`` followed by NUL bytes up to ``size`` (a hole: no disk used)."""
    write(path, head)
    os.truncate(path, size)
    return path


def peak_bytes(run: Callable[[], object]) -> tuple[object, int]:
    """What ``run()`` returns and the most bytes Python held meanwhile."""
    tracemalloc.start()
    try:
        result = run()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def read_all(paths: list[Path], stats: LoadStats, max_chars: int) -> list[Document]:
    return list(iter_documents(paths, stats, max_chars=max_chars))


# -- sizes before parsers ---------------------------------------------------------------


def test_a_sparse_jsonl_line_is_skipped_without_being_held(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    head = json.dumps({"id": "small", "text": "a small record"}).encode() + b"\n"
    sparse(folder / "big.jsonl", head, 64 * MB)  # then one 64 MB line of NUL bytes
    write(folder / "z.jsonl", json.dumps({"id": "after", "text": "still read"}) + "\n")
    stats = LoadStats()
    docs, peak = peak_bytes(lambda: read_all([folder], stats, 1000))
    assert [d.doc_id for d in docs] == ["small", "after"]  # type: ignore[attr-defined]
    assert stats.skipped == {"too_large": 1}
    assert stats.examples["too_large"] == [f"{folder / 'big.jsonl'}:2"]
    assert peak < 8 * MB


def test_a_jsonl_line_longer_than_its_cap_is_skipped_and_the_next_read(tmp_path: Path) -> None:
    records = [{"id": "big", "text": "y" * 40_000}, {"id": "next", "text": "fine"}]
    path = write(tmp_path / "r.jsonl", "".join(json.dumps(r) + "\n" for r in records))
    stats = LoadStats()
    assert [d.doc_id for d in read_all([path], stats, 1000)] == ["next"]
    assert stats.skipped == {"too_large": 1} and stats.files == 1


def test_a_sparse_json_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    sparse(folder / "big.json", b'[{"id": "a", "text": "', 64 * MB)
    write(folder / "note.txt", "A short note.")
    stats = LoadStats()
    docs, peak = peak_bytes(lambda: read_all([folder], stats, 1000))
    assert [d.doc_id for d in docs] == ["note.txt"]  # type: ignore[attr-defined]
    assert stats.skipped == {"too_large": 1} and stats.files == 1
    assert peak < 8 * MB


def test_a_json_parsed_whole_may_hold_16_bytes_per_character(tmp_path: Path) -> None:
    records = [{"id": f"r{i}", "text": "word " * 100} for i in range(20)]  # ~11 KB
    path = write(tmp_path / "r.json", json.dumps(records))
    assert len(read_all([path], LoadStats(), 1000)) == 20  # 16,000 bytes allowed
    stats = LoadStats()
    assert read_all([path], stats, 500) == [] and stats.skipped == {"too_large": 1}


def _docx_bytes(extra_xml: int = 0) -> bytes:
    """A real .docx (python-docx) whose body XML is padded with ``extra_xml`` spaces."""
    docx = pytest.importorskip("docx")
    document = docx.Document()
    document.add_paragraph("The drying racks hold twelve trays.")
    out = io.BytesIO()
    document.save(out)
    if not extra_xml:
        return out.getvalue()
    padded = io.BytesIO()
    with zipfile.ZipFile(out) as src, zipfile.ZipFile(padded, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "word/document.xml":
                end = data.rindex(b"</w:body>")
                data = data[:end] + b" " * extra_xml + data[end:]
            dst.writestr(info, data, zipfile.ZIP_DEFLATED)
    return padded.getvalue()


@pytest.mark.slow
def test_a_docx_bomb_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    write(folder / "fine.docx", _docx_bytes())
    write(folder / "bomb.docx", _docx_bytes(extra_xml=40 * MB))  # ~40 KB on disk, 40 MB inflated
    stats = LoadStats()
    docs, peak = peak_bytes(lambda: read_all([folder], stats, 100_000))
    assert [d.doc_id for d in docs] == ["fine.docx"]  # type: ignore[attr-defined]
    assert stats.skipped == {"too_large": 1} and stats.examples["too_large"] == [
        str(folder / "bomb.docx")
    ]
    assert peak < 16 * MB


def _lie_about_sizes(data: bytes, name: bytes, size: int) -> bytes:
    """``data`` (a zip) with the uncompressed size of ``name`` set to ``size`` in both
    its local and its central header."""
    out = bytearray(data)
    at = out.find(b"PK\x03\x04")
    while at >= 0:
        n = struct.unpack_from("<H", out, at + 26)[0]
        if out[at + 30 : at + 30 + n] == name:
            struct.pack_into("<I", out, at + 22, size)
        at = out.find(b"PK\x03\x04", at + 4)
    at = out.find(b"PK\x01\x02")
    while at >= 0:
        n = struct.unpack_from("<H", out, at + 28)[0]
        if out[at + 46 : at + 46 + n] == name:
            struct.pack_into("<I", out, at + 24, size)
        at = out.find(b"PK\x01\x02", at + 4)
    return bytes(out)


@pytest.mark.slow
def test_a_docx_whose_headers_lie_about_its_size_is_not_inflated(tmp_path: Path) -> None:
    bomb = _lie_about_sizes(_docx_bytes(extra_xml=40 * MB), b"word/document.xml", 2000)
    path = write(tmp_path / "docs" / "liar.docx", bomb)
    write(path.parent / "note.txt", "A short note.")
    stats = LoadStats()
    _, peak = peak_bytes(lambda: read_all([path.parent], stats, 100_000))
    assert stats.files == 1 and sum(stats.skipped.values()) == 1
    assert peak < 16 * MB


def test_a_file_too_large_is_counted_once(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    write(folder / "huge.txt", "x" * 5000)  # over 4 bytes per allowed character
    write(folder / "long.txt", "word " * 300)  # read, then over the limit
    write(folder / "note.txt", "A short note.")
    stats = LoadStats()
    assert [d.doc_id for d in read_all([folder], stats, 1000)] == ["note.txt"]
    assert stats.files == 1 and stats.skipped == {"too_large": 2}


def test_a_sparse_ignore_file_is_refused_without_being_held(tmp_path: Path) -> None:
    from thresher.errors import InputError

    folder = tmp_path / "docs"
    write(folder / "note.txt", "A short note.")
    sparse(folder / ".thresherignore", b"drafts/\n", 64 * MB)
    with pytest.raises(InputError, match="too large for a file of patterns") as info:
        peak_bytes(lambda: iter_documents([folder]))
    assert "\n" not in str(info.value)
    _, peak = peak_bytes(lambda: pytest.raises(InputError, iter_documents, [folder]))
    assert peak < 8 * MB


# -- files that change after the walk ----------------------------------------------------


def _walked(folder: Path, stats: LoadStats) -> Iterator[Document]:
    """The documents of ``folder``, walked now (files read as the iterator is consumed)."""
    return iter_documents([folder], stats)


def test_a_file_replaced_by_an_outside_link_after_the_walk_is_not_followed(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "docs"
    write(folder / "a.txt", "An ordinary note.")
    write(folder / "b.txt", "Another note.")
    secret = write(tmp_path / "outside" / "secret.txt", "CANARY outside the folder")
    stats = LoadStats()
    docs = _walked(folder, stats)
    (folder / "a.txt").unlink()
    (folder / "a.txt").symlink_to(secret)
    read = list(docs)
    assert [d.doc_id for d in read] == ["b.txt"]
    assert not any("CANARY" in d.text for d in read)
    assert stats.skipped == {"changed": 1} and stats.files == 1


def test_a_file_replaced_by_another_file_after_the_walk_is_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    write(folder / "a.txt", "An ordinary note.")
    write(folder / "b.txt", "Another note.")
    other = write(tmp_path / "other.txt", "CANARY swapped in")
    stats = LoadStats()
    docs = _walked(folder, stats)
    os.replace(other, folder / "a.txt")
    assert [d.doc_id for d in docs] == ["b.txt"]
    assert stats.skipped == {"changed": 1}


def test_a_file_replaced_by_a_fifo_after_the_walk_never_blocks(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    write(folder / "a.txt", "An ordinary note.")
    write(folder / "b.txt", "Another note.")
    stats = LoadStats()
    docs = _walked(folder, stats)
    fifo = folder / "a.txt"
    fifo.unlink()
    os.mkfifo(fifo)
    result: list[list[str]] = []
    reader = threading.Thread(target=lambda: result.append([d.doc_id for d in docs]))
    reader.start()
    reader.join(timeout=60)  # a hang, not a duration: the read takes milliseconds
    if reader.is_alive():  # release the blocked open, then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join()
        pytest.fail("opening a FIFO blocked the ingest")
    assert result == [["b.txt"]]
    assert stats.skipped == {"changed": 1}


def test_a_named_link_is_still_read(tmp_path: Path) -> None:
    target = write(tmp_path / "real" / "note.txt", "A linked note.")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    assert [d.text for d in iter_documents([link])] == ["A linked note."]


# -- folders that cannot be walked ---------------------------------------------------------


def _deep(root: Path, levels: int, name: str = "d" * 10) -> None:
    """``levels`` nested folders under ``root`` and a note at the bottom, made with
    folder descriptors (the full path is longer than the system's limit)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(levels):
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        out = os.open("deep.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, b"A note too deep to reach.")
        os.close(out)
    finally:
        os.close(fd)


def test_a_folder_path_over_the_system_limit_is_skipped_with_its_reason(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    write(folder / "top.txt", "A note at the top.")
    _deep(folder, 500)
    stats = LoadStats()
    assert [d.doc_id for d in iter_documents([folder], stats)] == ["top.txt"]
    assert stats.skipped == {"path_too_long": 1}


def test_an_unreadable_subfolder_is_skipped_with_its_reason(tmp_path, monkeypatch) -> None:
    folder = tmp_path / "docs"
    write(folder / "a.txt", "A readable note.")
    write(folder / "locked" / "b.txt", "A note nobody may list.")
    write(folder / "z.txt", "Another readable note.")
    locked = folder / "locked"
    real_iterdir = Path.iterdir

    def iterdir(self: Path) -> Iterator[Path]:
        if self == locked:
            raise PermissionError(13, "Permission denied", str(self))
        return real_iterdir(self)

    monkeypatch.setattr(Path, "iterdir", iterdir)  # root may list any folder
    stats = LoadStats()
    assert [d.doc_id for d in iter_documents([folder], stats)] == ["a.txt", "z.txt"]
    assert stats.skipped == {"unreadable_folder": 1}
    assert stats.examples["unreadable_folder"] == [str(locked) + os.sep]
