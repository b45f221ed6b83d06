"""generate_world: determinism, layout, sizes, the demo question, folder safety."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _world_fixtures import WrittenWorld

from thresher.errors import InputError
from thresher.synth.world import demo_question, generate_world
from thresher.synth.world.generate import resolve_size


def _digest(root: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file under ``root`` (hidden ones included)."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_same_seed_same_bytes(tmp_path: Path, small_world: WrittenWorld) -> None:
    generate_world(0, "small", tmp_path / "again")
    assert _digest(tmp_path / "again") == _digest(small_world.root)


def test_same_bytes_in_another_process_with_another_hash_seed(
    tmp_path: Path, small_world: WrittenWorld
) -> None:
    code = "import sys; from thresher.synth.world import generate_world; generate_world(0, 'small', sys.argv[1])"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "w")], check=True, env=env)
    assert _digest(tmp_path / "w") == _digest(small_world.root)


def test_other_seed_other_world(tmp_path: Path, small_world: WrittenWorld) -> None:
    other = generate_world(1, "small", tmp_path / "w")
    assert other.chains[0].question != small_world.manifest.chains[0].question
    assert _digest(tmp_path / "w") != _digest(small_world.root)


def test_layout(small_world: WrittenWorld) -> None:
    root = small_world.root
    assert (root / ".world" / "README.txt").read_text().startswith("A FICTIONAL WORLD")
    assert (root / ".world" / "world.json").is_file()
    assert (root / ".world" / "chains.jsonl").is_file()
    suffix = {"web": ".html", "filings": ".md", "patents": ".txt", "email": ".txt"}
    docs = small_world.manifest.documents
    assert docs == sorted(docs)
    for path in docs:
        domain = path.split("/")[0]
        assert path.endswith(suffix[domain]) and (root / path).is_file()
    assert {p.split("/")[0] for p in docs} == set(suffix)
    # what the ingester reads: every document, never .world/
    assert set(small_world.docs) == set(docs)


def test_small_size(small_world: WrittenWorld) -> None:
    counts = small_world.manifest.counts
    assert 60 <= counts["documents"] <= 100
    assert all(counts[d] > 0 for d in ("web", "filings", "patents", "email"))
    assert counts["chains"] == len(small_world.chains) >= 15


def test_medium_size(medium_world: WrittenWorld) -> None:
    assert 450 <= medium_world.manifest.counts["documents"] <= 800
    assert len(medium_world.chains) >= 150


def test_document_count_size(tmp_path: Path) -> None:
    manifest = generate_world(5, 150, tmp_path / "w")
    assert 100 <= manifest.counts["documents"] <= 220
    assert "--documents 150" in (tmp_path / "w" / ".world" / "README.txt").read_text()


@pytest.mark.parametrize("bad", ["huge", "12", 5])
def test_bad_sizes(bad: str | int) -> None:
    with pytest.raises(InputError):
        resolve_size(bad)


def test_demo_question(small_world: WrittenWorld) -> None:
    question = demo_question(small_world.root)
    assert question == small_world.chains[0]["question"] == small_world.manifest.chains[0].question
    assert question.endswith("?")
    assert len(small_world.chains[0]["hops"]) >= 2


def test_demo_question_without_world(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="thresher synth world"):
        demo_question(tmp_path)


def test_refuses_a_folder_with_other_files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="not empty"):
        generate_world(0, "small", tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_regenerating_replaces_an_earlier_world(tmp_path: Path) -> None:
    out = tmp_path / "w"
    generate_world(0, "small", out)
    (out / "web" / "stale.html").write_text("<p>stale</p>")
    (out / "mine.txt").write_text("kept")
    generate_world(1, "small", out)
    assert not (out / "web" / "stale.html").exists()
    assert (out / "mine.txt").read_text() == "kept"
    assert "seed 1" in (out / ".world" / "README.txt").read_text()
