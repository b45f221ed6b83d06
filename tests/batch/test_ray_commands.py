"""``--ray`` on the three batch commands: the same outputs as the local runner.

The acceptance test of issue 14: ``thresher eval --ray`` on a local Ray instance
over a small generated world writes the same per-task JSONL, TREC runs and
report figures as ``--workers 2``. Also: a failing eval task is retried once,
then recorded as failed (never dropped), and ``synth tasks`` and ``export-sft``
write the same files with ``--ray`` as without.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from batch.helpers import read_jsonl, without_timing
from thresher.cli.main import main

pytestmark = pytest.mark.ray  # `--ray` on the commands, beside the local runs they must equal

pytest.importorskip("ray")

_FIGURES = ("n_tasks", "means", "paired", "attribution", "attribution_by_hop", "failed")


def _eval(world: dict[str, Path], out: Path, *runner: str) -> dict[str, Any]:
    # a grep that outlives its time guard is refused: on a loaded machine that is a
    # matter of timing, not of the runner, so the guard is made generous here
    argv = ["eval", "--a", "local", "--b", str(world["narrow"]), str(world["tasks"]),
            "--index", str(world["index"]), "--out", str(out), "--resamples", "500",
            "--set", "grep.timeout_s=60", "--json", *runner]  # fmt: skip
    assert main(argv) == 0
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def eval_runs(
    ray_local: Any, small_world: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[Path, dict[str, Any]]]:
    root = tmp_path_factory.mktemp("eval-runs")
    return {
        "workers": (root / "w", _eval(small_world, root / "w", "--workers", "2")),
        "ray": (root / "r", _eval(small_world, root / "r", "--ray")),
    }


def test_eval_on_ray_equals_two_workers(eval_runs: dict[str, tuple[Path, dict[str, Any]]]) -> None:
    (local, s_local), (ray, s_ray) = eval_runs["workers"], eval_runs["ray"]
    assert (s_local["settings"]["runner"], s_ray["settings"]["runner"]) == ("local", "ray")
    rows = read_jsonl(local / "tasks.jsonl")
    assert len(rows) == 6 and {r["a"]["status"] for r in rows} != {"failed"}
    assert without_timing(read_jsonl(ray / "tasks.jsonl")) == without_timing(rows)
    for name in ("run_a.trec", "run_b.trec", "qrels.txt"):
        assert (ray / name).read_bytes() == (local / name).read_bytes(), name
    assert {k: s_ray[k] for k in _FIGURES} == {k: s_local[k] for k in _FIGURES}
    traces = sorted(p.relative_to(local) for p in local.glob("traces/*/*.jsonl"))
    assert len(traces) == 12 and traces == sorted(
        p.relative_to(ray) for p in ray.glob("traces/*/*.jsonl")
    )
    for rel in traces:  # written on the driver from what the workers sent back
        assert without_timing(read_jsonl(ray / rel)) == without_timing(read_jsonl(local / rel))


class FailingAnswerer:
    """An answering model that raises: once for ``once``'s task (a marker file remembers,
    across processes), always for ``always``'s. It runs inside the task's job."""

    def __init__(self, folder: Path, once: str, always: str) -> None:
        self.folder, self.once, self.always = folder, once, always

    def __call__(self, task: Any, documents: list[Any]) -> str:
        marker = self.folder / f"tried-{task.task_id}"
        if task.task_id == self.always or (task.task_id == self.once and not marker.exists()):
            marker.write_text("x", encoding="utf-8")
            raise RuntimeError(f"answerer down for {task.task_id}")
        return documents[0].doc_id if documents else ""


@pytest.mark.parametrize("where", ["local", "ray"])
def test_a_failing_task_is_retried_once_then_recorded(
    where: str, small_world: dict[str, Path], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    from thresher.batch.factory import make_runner
    from thresher.batch.stores import StoreRef
    from thresher.eval.protocol import compare, load_run_config
    from thresher.eval.report import summary_dict, summary_markdown, write_report
    from thresher.tasks.readers import load_tasks

    if where == "ray":
        ray = request.getfixturevalue("ray_local")
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    tasks = load_tasks(small_world["tasks"])
    once, always = tasks[1].task_id, tasks[2].task_id
    answerer = FailingAnswerer(tmp_path, once, always)
    with make_runner(2, None if where == "local" else "local") as runner:
        report = compare(
            tasks, StoreRef(str(small_world["index"])), load_run_config("single-shot"),
            load_run_config("bm25"), out_dir=tmp_path / "out", resamples=200,
            answerer=answerer, runner=runner,
        )  # fmt: skip
    for side in (report.a, report.b):
        assert [o.task.task_id for o in side] == [t.task_id for t in tasks]  # none dropped
        assert side[1].error is None and side[1].prediction is not None  # retried, then fine
        assert side[2].error == f"RuntimeError: answerer down for {always}"
        assert side[2].metrics.exit_reason == "failed" and side[2].metrics.recall_at[5] == 0.0
        assert side[2].trace_paths == [] and all(o.error is None for o in side[3:])
    assert summary_dict(report)["failed"] == {"a": [always], "b": [always]}
    assert "Failed tasks" in summary_markdown(report)
    row = read_jsonl(write_report(report, tmp_path / "out")["tasks"])[2]
    assert row["a"]["status"] == "failed" and "answerer down" in row["a"]["error"]


def test_synth_tasks_on_ray_writes_the_same_tasks(
    ray_local: Any, small_world: dict[str, Path], tmp_path: Path
) -> None:
    outputs = {}
    for name, runner in (("seq", []), ("ray", ["--ray"]), ("threads", ["--workers", "2"])):
        out = tmp_path / name
        argv = ["synth", "tasks", "--index", str(small_world["index"]), "--out",
                str(out / "tasks.jsonl"), "--n", "6", "--seed", "3", "--strict-hops",
                "--report", str(out / "report.json"), "--json", *runner]  # fmt: skip
        main(argv)
        outputs[name] = (
            (out / "tasks.jsonl").read_bytes(),
            without_timing(json.loads((out / "report.json").read_text(encoding="utf-8"))),
        )
    assert outputs["seq"][0].strip(), "no task synthesized"
    assert outputs["ray"] == outputs["seq"] == outputs["threads"]


def test_export_sft_on_ray_writes_the_same_records(
    eval_runs: dict[str, tuple[Path, dict[str, Any]]], small_world: dict[str, Path], tmp_path: Path
) -> None:
    traces = sorted(str(p) for p in eval_runs["workers"][0].glob("traces/*/*.jsonl"))
    broken = tmp_path / "broken.jsonl"
    broken.write_text("not json\n", encoding="utf-8")
    outputs = {}
    for name, runner in (("seq", []), ("ray", ["--ray"])):
        out = tmp_path / f"{name}.jsonl"
        argv = ["export-sft", *traces, str(broken), "--tasks", str(small_world["tasks"]),
                "--out", str(out), "--low-rate", "0.7", "--metadata", "--json", *runner]  # fmt: skip
        assert main(argv) == 0
        outputs[name] = out.read_bytes()
    assert outputs["seq"].strip() and outputs["ray"] == outputs["seq"]
