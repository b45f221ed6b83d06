"""``bench/run_all.py`` (what ``make bench`` runs): every benchmark, quick flags that parse,
a non-zero exit when one crashes. Never times anything."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _run_all():
    spec = importlib.util.spec_from_file_location("bench_run_all", BENCH / "run_all.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_every_benchmark_is_run() -> None:
    scripts = {p.name for p in BENCH.glob("bench_*.py")}
    assert {b.script for b in _run_all().BENCHES} == scripts


@pytest.mark.parametrize("script", sorted(p.name for p in BENCH.glob("bench_*.py")))
def test_quick_flags_are_the_benchmarks_own(script: str) -> None:
    bench = next(b for b in _run_all().BENCHES if b.script == script)
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-1000:]
    for flag in (f for f in bench.quick if f.startswith("--")):
        assert flag in done.stdout, f"{script} has no {flag}"


def test_a_crash_makes_the_run_fail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    module = _run_all()
    (tmp_path / "bench_ok.py").write_text("import sys\nprint('figure', sys.argv[1:])\n")
    (tmp_path / "bench_crash.py").write_text("raise RuntimeError('boom')\n")
    (tmp_path / "bench_dev.py").write_text("raise SystemExit('must not run')\n")
    benches = (
        module.Bench("bench_ok.py", ("--n", "2")),
        module.Bench("bench_crash.py", ()),
        module.Bench("bench_dev.py", (), needs_dev=True),
    )
    kwargs = {"benches": benches, "bench_dir": tmp_path, "dev": tmp_path / "no-dev-data"}
    assert module.main([], **kwargs) == 1
    out = capsys.readouterr().out
    assert "| bench_ok | ok |" in out and "| bench_crash | FAILED (exit code 1) |" in out
    assert "| bench_dev | skipped |" in out
    assert module.main(["--only", "bench_ok", "bench_dev", "--full"], **kwargs) == 0
    assert "=== bench_ok\n" in capsys.readouterr().out  # --full: no quick flags


def test_a_bench_on_request_runs_only_when_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = _run_all()
    (tmp_path / "bench_ok.py").write_text("print('figure')\n")
    (tmp_path / "bench_slow.py").write_text("print('slow ran')\n")
    benches = (
        module.Bench("bench_ok.py", ()),
        module.Bench("bench_slow.py", (), on_request=True),
    )
    kwargs = {"benches": benches, "bench_dir": tmp_path, "dev": tmp_path}
    assert module.main([], **kwargs) == 0
    assert "bench_slow" not in capsys.readouterr().out
    assert module.main(["--only", "bench_slow"], **kwargs) == 0
    assert "| bench_slow | ok |" in capsys.readouterr().out
