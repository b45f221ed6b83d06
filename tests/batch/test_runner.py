"""The runner contract, held by both runners: input order, one retry, failures kept, fatal stops."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from thresher.batch.factory import make_runner
from thresher.batch.runner import JobResult, LocalRunner, Runner
from thresher.errors import BackendUnavailableError, ConfigError


class Flaky:
    """``item * 10``; ``"once"`` raises the first time (a marker file remembers, across
    processes), ``"always"`` raises every time, ``"fatal"`` raises a ConfigError."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def __call__(self, item: Any) -> Any:
        if item == "once":
            marker = self.folder / "once"
            if not marker.exists():
                marker.write_text("tried", encoding="utf-8")
                raise RuntimeError("first attempt fails")
            return "recovered"
        if item == "always":
            raise ValueError("fails every time")
        if item == "fatal":
            raise ConfigError("bad setting")
        return item * 10


@pytest.fixture(params=["local", pytest.param("ray", marks=pytest.mark.ray)])
def runner(request: pytest.FixtureRequest) -> Iterator[Runner]:
    if request.param == "ray":
        request.getfixturevalue("ray_local")
        import ray

        # the test module is not importable in Ray's workers: send its classes by value
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
        built = make_runner(2, "local")
    else:
        built = LocalRunner(2)
    with built:
        yield built


def test_results_in_input_order_with_one_retry_and_failures_kept(
    runner: Runner, tmp_path: Path
) -> None:
    finished: list[int] = []
    items: list[Any] = [1, "once", 2, "always", 3]
    results = runner.map(Flaky(tmp_path), items, lambda i, _r: finished.append(i))
    assert [r.value for r in results] == [10, "recovered", 20, None, 30]
    assert [r.ok for r in results] == [True, True, True, False, True]
    assert results[3].error == "ValueError: fails every time"
    assert (tmp_path / "once").read_text(encoding="utf-8") == "tried"  # ran twice
    assert sorted(finished) == list(range(5))  # on_done once per job, failed ones too


def test_a_fatal_error_stops_the_batch(runner: Runner, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="bad setting"):
        runner.map(Flaky(tmp_path), [1, "fatal", 2])
    assert runner.map(Flaky(tmp_path), []) == []


def test_the_ray_runner_reports_workers_and_a_name(ray_local: Any) -> None:
    with make_runner(1, "local") as ray_runner:
        assert (ray_runner.name, ray_runner.remote, ray_runner.workers) == ("ray", True, 2)
    assert ray_local.is_initialized()  # joined the session's instance: left running


def test_sequential_local_runner_runs_inline_in_order(tmp_path: Path) -> None:
    seen: list[int] = []
    with LocalRunner(1) as local:
        out = local.map(lambda x: seen.append(x) or x, [3, 1, 2])
    assert seen == [3, 1, 2] and out == [JobResult(3), JobResult(1), JobResult(2)]
    with pytest.raises(ConfigError):
        make_runner(0)


def test_missing_ray_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(BackendUnavailableError, match=r"pip install 'thresher\[ray\]'"):
        make_runner(1, "local")


def test_an_unreachable_cluster_fails_fast() -> None:
    import socket

    from thresher.batch.ray_runner import check_reachable

    with socket.socket() as probe:  # a port that was free a moment ago: nobody listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(BackendUnavailableError, match="no Ray cluster answers"):
        check_reachable(f"ray://127.0.0.1:{port}", timeout=2.0)
    check_reachable("auto")  # left to Ray


def test_ray_taking_a_file_as_its_address_is_refused(tmp_path: Path, capsys) -> None:
    from thresher.cli.main import main

    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    for path in (one, two):
        path.write_text("", encoding="utf-8")
    argv = ["export-sft", "--ray", str(one), str(two), "--tasks", str(one), "--out",
            str(tmp_path / "out.jsonl")]  # fmt: skip
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2  # a usage error, before any work
    assert "is a file, not a cluster address" in capsys.readouterr().err
