"""Hostile files ingested within bounded memory: a sparse ``.jsonl``, a sparse ``.json``,
a ``.docx`` bomb.

Each case is a folder (in a temporary directory) holding one hostile file and a
short note; ``thresher index FOLDER --index DIR`` runs on it as its own process
(the same Python, the real CLI and embedder), and its peak resident memory
(``ru_maxrss`` of that child, from ``os.wait4``) is printed with what the ingest
read and skipped. The control case (the note alone) is the CLI's own baseline.

- ``jsonl``: a record line, then ``--size-mb`` of NUL bytes (a sparse file:
  one line that long, no disk used);
- ``json``: ``[{"id": "a", "text": "`` then ``--size-mb`` of NUL bytes (sparse);
- ``docx``: a real ``.docx`` whose ``word/document.xml`` is ``--docx-mb`` of
  paragraphs, deflated to about a thousandth of that.

Prints one line per case and last ``worst peak: N MB (limit 1024 MB)``; exit
code 1 when a case peaks over 1 GiB or its hostile file is not skipped.

Usage::

    .venv/bin/python bench/bench_ingest_bounds.py [--size-mb 2048] [--docx-mb 1600]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

MB = 1 << 20
LIMIT_MB = 1024
NOTE = "A short note: the drying racks of the north shed hold twelve trays each.\n"


def sparse_jsonl(path: Path, size: int) -> None:
    path.write_bytes(json.dumps({"id": "small", "text": "a small record"}).encode() + b"\n")
    os.truncate(path, size)


def sparse_json(path: Path, size: int) -> None:
    path.write_bytes(b'[{"id": "a", "text": "')
    os.truncate(path, size)


def docx_bomb(path: Path, inflated: int) -> None:
    """A .docx (python-docx's template) whose body XML inflates to ``inflated`` bytes."""
    import docx

    template = io.BytesIO()
    docx.Document().save(template)
    paragraph = b"<w:p><w:r><w:t>bomb</w:t></w:r></w:p>"
    block = paragraph * (MB // len(paragraph))
    with zipfile.ZipFile(template) as src, zipfile.ZipFile(path, "w") as dst:
        for info in src.infolist():
            if info.filename != "word/document.xml":
                dst.writestr(info, src.read(info), zipfile.ZIP_DEFLATED)
                continue
            xml = src.read(info)
            start = xml.index(b"<w:body>") + len(b"<w:body>")
            end = xml.rindex(b"</w:body>")
            entry = zipfile.ZipInfo("word/document.xml", date_time=info.date_time)
            entry.compress_type = zipfile.ZIP_DEFLATED
            with dst.open(entry, "w", force_zip64=True) as out:
                out.write(xml[:start])
                for _ in range(inflated // len(block)):
                    out.write(block)
                out.write(xml[end:])


def run_index(folder: Path, index: Path) -> tuple[int, float, dict[str, object]]:
    """Peak RSS (bytes), seconds and the ``--json`` report of ``thresher index``."""
    cmd = [sys.executable, "-m", "thresher.cli.main", "index", str(folder)]
    cmd += ["--index", str(index), "--json", "--no-progress"]
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - start
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    report = json.loads(text) if proc.returncode == 0 else {"exit": proc.returncode}
    return usage.ru_maxrss * 1024, seconds, report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=2048, help="sparse files' size")
    parser.add_argument("--docx-mb", type=int, default=1600, help="the bomb's inflated XML")
    args = parser.parse_args()
    cases = {
        "control": None,
        "jsonl": lambda p: sparse_jsonl(p / "big.jsonl", args.size_mb * MB),
        "json": lambda p: sparse_json(p / "big.json", args.size_mb * MB),
        "docx": lambda p: docx_bomb(p / "bomb.docx", args.docx_mb * MB),
    }
    worst, failed = 0, False
    with tempfile.TemporaryDirectory(prefix="thresher-bounds-") as tmp:
        for name, make in cases.items():
            folder = Path(tmp) / name
            folder.mkdir()
            (folder / "note.txt").write_text(NOTE, encoding="utf-8")
            if make is not None:
                make(folder)
            on_disk = sum(f.stat().st_blocks * 512 for f in folder.iterdir())
            apparent = sum(f.stat().st_size for f in folder.iterdir())
            peak, seconds, report = run_index(folder, Path(tmp) / f"{name}-index")
            files = report.get("files", {})
            skipped = {
                k: v["count"]
                for k, v in (files.get("skipped", {}) if isinstance(files, dict) else {}).items()
            }
            ok = "exit" not in report and (make is None or skipped.get("too_large", 0) >= 1)
            failed |= not ok or (make is not None and peak > LIMIT_MB * MB)
            if make is not None:
                worst = max(worst, peak)
            print(
                f"{name:8s} {apparent / MB:9,.1f} MB apparent, {on_disk / MB:6.2f} MB on disk: "
                f"peak RSS {peak / MB:7,.1f} MB in {seconds:5.1f} s; "
                f"documents {report.get('documents_seen', '-')}, skipped {skipped or '-'}"
                + ("" if ok else f"  FAILED {report}")
            )
    print(f"worst peak: {worst / MB:,.0f} MB (limit {LIMIT_MB} MB)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
