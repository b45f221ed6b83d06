"""``thresher index``: what it deletes, an empty input, and a second writer that waits."""

from __future__ import annotations

import fcntl
import json
import threading
import time
from pathlib import Path

from thresher.cli.main import main


def _notes(folder: Path, names: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / f"{name}.md").write_text(f"# {name}\n\nThe {name} note.\n", encoding="utf-8")
    return folder


def _documents(index: Path, capsys) -> int:
    capsys.readouterr()
    assert main(["stats", "--index", str(index), "--json"]) == 0
    return int(json.loads(capsys.readouterr().out)["documents"])


def test_naming_one_file_or_an_empty_one_deletes_nothing(tmp_path, capsys):
    index = tmp_path / "index"
    corpus = _notes(tmp_path / "corpus", ["alder", "birch", "cedar"])
    assert main(["index", str(corpus), "--index", str(index), "--no-progress"]) == 0
    assert main(["index", str(corpus / "birch.md"), "--index", str(index), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "0 deleted" in out and "2 other documents in the index" in out
    assert _documents(index, capsys) == 3

    empty = tmp_path / "empty.md"
    empty.write_text("", encoding="utf-8")
    assert main(["index", str(empty), "--index", str(index), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "no documents" in err and "left unchanged" in err and len(err.splitlines()) == 1
    assert _documents(index, capsys) == 3

    sync = ["index", str(corpus / "birch.md"), "--index", str(index), "--no-progress", "--sync"]
    assert main(sync) == 0
    assert "2 deleted" in capsys.readouterr().out
    assert _documents(index, capsys) == 1


def test_a_second_ingest_says_it_waits_for_the_lock(tmp_path, capsys):
    index = tmp_path / "index"
    corpus = _notes(tmp_path / "corpus", ["alder"])
    assert main(["index", str(corpus), "--index", str(index), "--no-progress"]) == 0
    capsys.readouterr()
    codes: list[int] = []
    with (index / "ingest.lock").open("a+") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # another writer holds the folder
        worker = threading.Thread(
            target=lambda: codes.append(
                main(["index", str(corpus), "--index", str(index), "--no-progress"])
            ),
            daemon=True,
        )
        worker.start()
        seen = ""
        deadline = time.monotonic() + 60  # a hang guard, not a timing assertion
        while "waiting for it to finish" not in seen and time.monotonic() < deadline:
            time.sleep(0.05)
            seen += capsys.readouterr().err
        assert "another ingest into" in seen and "waiting for it to finish" in seen
        assert codes == []  # still waiting while the lock is held
        fcntl.flock(held.fileno(), fcntl.LOCK_UN)
    worker.join(60)
    assert codes == [0]


def test_a_document_over_the_size_limit_is_skipped_with_a_warning(tmp_path, capsys):
    big = tmp_path / "big.txt"
    big.write_text("word " * 2000, encoding="utf-8")  # one 10,000-character line
    argv = ["index", str(big), "--index", str(tmp_path / "index"), "--no-progress"]
    assert main([*argv, "--max-doc-chars", "1000"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("thresher: ") and "big.txt: skipped" in err[0]
    assert "no documents" in err[1] and len(err) == 2
    assert main(argv) == 0  # under the default limit it is indexed
    assert "1 added" in capsys.readouterr().out
