"""What each command writes where: ``--json`` leaves stderr empty; bars only on a terminal.

With ``--json`` a program reads stdout, so the live episode view, running
commentary and progress bars stay off even when stderr is a terminal (the
``as_terminal`` fixture makes the captured stderr claim to be one). Without a
terminal no progress bar draws at all: a pipe never receives a carriage return.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from thresher.cli.main import main


def _a_document_id(world: Path) -> str:
    first = min(p for p in world.rglob("*") if p.is_file() and ".world" not in p.parts)
    return first.relative_to(world).as_posix()


def _question(root: Path) -> str:
    from thresher.synth.world import demo_question

    return demo_question(root / "world")


#: command name -> argv built from (demo folder, a fresh temporary folder); all with --json
JSON_COMMANDS: dict[str, Callable[[Path, Path], list[str]]] = {
    "search": lambda root, tmp: ["search", _question(root), "--index", str(root / "index"),
                                 "--trace", str(tmp / "t.jsonl"), "--json"],
    "demo": lambda root, tmp: ["demo", "--dir", str(root), "--json"],
    "read": lambda root, tmp: ["read", _a_document_id(root / "world"), "--index",
                               str(root / "index"), "--json"],
    "grep": lambda root, tmp: ["grep", "[A-Z][a-z]+ Corp", "--index", str(root / "index"),
                               "--json"],
    "stats": lambda root, tmp: ["stats", "--index", str(root / "index"), "--json"],
    "trace show": lambda root, tmp: ["trace", "show", str(root / "trace.jsonl"), "--json"],
    "trace replay": lambda root, tmp: ["trace", "replay", str(root / "trace.jsonl"), "--json"],
    "synth world": lambda root, tmp: ["synth", "world", "--out", str(tmp / "w"), "--json"],
    "synth tasks": lambda root, tmp: ["synth", "tasks", "--index", str(root / "index"),
                                      "--out", str(tmp / "t.jsonl"), "--n", "2", "--json"],
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(JSON_COMMANDS))
def test_json_output_leaves_stderr_empty_even_on_a_terminal(
    name: str,
    demo_dir: Path,
    tmp_path: Path,
    as_terminal: Callable[[], None],
    capsys: pytest.CaptureFixture[str],
) -> None:
    as_terminal()
    assert sys.stderr.isatty()
    code = main(JSON_COMMANDS[name](demo_dir, tmp_path))
    out, err = capsys.readouterr()
    assert code == 0, err
    assert err == "", f"thresher {name} --json wrote to stderr: {err[:300]!r}"
    json.loads(out)  # one JSON document on stdout


def test_search_without_json_still_draws_the_live_view(
    demo_dir: Path, as_terminal: Callable[[], None], capsys: pytest.CaptureFixture[str]
) -> None:
    as_terminal()
    assert main(["search", _question(demo_dir), "--index", str(demo_dir / "index")]) == 0
    assert "── turn 0 ──" in capsys.readouterr().err


@pytest.mark.slow
def test_synth_tasks_into_a_pipe_draws_no_progress_bar(demo_dir: Path, tmp_path: Path) -> None:
    """A real process whose stderr is a pipe: no carriage returns, only plain lines."""
    argv = [sys.executable, "-m", "thresher.cli.main", "synth", "tasks",
            "--index", str(demo_dir / "index"), "--out", str(tmp_path / "t.jsonl"), "--n", "3"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    assert b"kept 3 of 3 tasks" in done.stdout
    assert b"\r" not in done.stderr, done.stderr[:300]
