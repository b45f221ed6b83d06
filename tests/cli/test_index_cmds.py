"""``thresher index``, ``stats`` and ``grep`` on both backends: an index folder and a
real ``chroma run`` server on loopback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from index.chroma_server import running_chroma
from thresher.cli.main import main

RIVERS = ["Vell", "Ossa", "Arno", "Tamsin", "Brede", "Harrow", "Kell", "Lune"]


def write_corpus(folder: Path) -> Path:
    """Eight short notes, each naming a river (so ``river`` matches 8 chunks)."""
    folder.mkdir()
    for i, name in enumerate(RIVERS):
        (folder / f"river-{i}.md").write_text(
            f"# River {name}\n\nThe river {name} rises in the hills and reaches the sea "
            f"after {100 + i} km.\n",
            encoding="utf-8",
        )
    return folder


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    with running_chroma(tmp_path_factory.mktemp("chroma-cli")) as url:
        yield url


def location(kind: str, tmp_path: Path, request) -> str:
    if kind == "server":
        return f"{request.getfixturevalue('chroma_server')}/cli-grep"
    return str(tmp_path / "index")


@pytest.mark.parametrize("kind", ["embedded", pytest.param("server", marks=pytest.mark.server)])
def test_index_then_grep_says_how_many_matched(kind, tmp_path, request, capsys, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # a server's BM25 cache
    where = location(kind, tmp_path, request)
    corpus = write_corpus(tmp_path / "corpus")
    assert main(["index", str(corpus), "--index", where, "--no-progress"]) == 0
    assert "8 added" in capsys.readouterr().out

    assert main(["grep", "river", "--index", where, "--limit", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    heads = [line for line in lines if not line.startswith("  ")]
    assert len(heads) == 4 and heads[3].startswith("3 of 8 matching chunks")
    # under each chunk id, the lines that matched with their numbers
    matched = [line for line in lines if line.startswith("  ")]
    assert len(matched) >= 3 and all("river" in line.split(": ", 1)[1] for line in matched)

    assert main(["grep", "river", "--index", where, "--limit", "3", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["total"] == 8 and len(found["hits"]) == 3
    assert all(h["lines"] and "river" in h["lines"][0]["text"] for h in found["hits"])
    assert all(h["method"] == "grep" for h in found["hits"])

    assert main(["grep", "Tamsin", "--index", where]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "river-3" in lines[0] and all(line.startswith("  ") for line in lines[1:])
    assert "Tamsin" in lines[1] and lines[1].split(":")[0].strip().isdigit()  # no count line
    assert main(["grep", "Danube", "--index", where]) == 0
    assert capsys.readouterr().out.strip() == "no match"


@pytest.mark.server
def test_stats_on_a_server_names_the_fusion_and_the_bm25_cache(
    chroma_server, tmp_path, capsys, monkeypatch
):
    from thresher.paths import cache_dir

    where = f"{chroma_server}/stats-demo"
    corpus = write_corpus(tmp_path / "corpus")
    assert main(["index", str(corpus), "--index", where, "--no-progress"]) == 0
    capsys.readouterr()

    assert main(["stats", "--index", where]) == 0
    out = capsys.readouterr().out
    # the path, and why: the server's refusal of a minimal search, word for word
    assert "fusion: client" in out
    assert (
        "server-side hybrid not offered by this server (Error executing plan: Not implemented: "
        "Search operation is not implemented for local executor); fused client-side" in out
    )
    cache_line = next(line for line in out.splitlines() if "bm25_cache" in line)
    folder = Path(cache_line.split(":", 1)[1].strip())
    assert folder.is_relative_to(cache_dir("server-bm25")) and (folder / "bm25").is_dir()

    assert main(["stats", "--index", where, "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["backend"] == "server" and stats["documents"] == 8
    assert stats["extra"]["fusion"] == "client"
    assert stats["extra"]["fusion_reason"].startswith("server-side hybrid not offered by this")
    assert stats["extra"]["bm25_cache"] == str(folder)


def test_stats_on_a_folder(tmp_path, capsys):
    corpus = write_corpus(tmp_path / "corpus")
    assert main(["index", str(corpus), "--index", str(tmp_path / "idx"), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["stats", "--index", str(tmp_path / "idx"), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert (stats["backend"], stats["documents"], stats["location"]) == (
        "embedded",
        8,
        str(tmp_path / "idx"),
    )


def test_index_into_a_log_writes_progress_lines_unless_told_not_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from thresher.index.ingest import progress as ingest_progress

    monkeypatch.setattr(ingest_progress, "LOG_EVERY_S", 0.0)  # a line at every batch
    corpus = write_corpus(tmp_path / "corpus")
    assert main(["index", str(corpus), "--index", str(tmp_path / "a"), "--no-progress"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["index", str(corpus), "--index", str(tmp_path / "b")]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err
    assert err.splitlines()[-1].startswith("thresher: indexing 8/8 chunks (100%), 8/8 documents")


def test_index_help_names_the_formats_and_embedders_it_takes(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["index", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    for kind in (".pdf", ".docx", ".rst", ".csv", "source code", "without extension", ".json"):
        assert kind in shown, kind
    assert "minilm-int8-dq" in shown
