"""The paired protocol end to end on a small generated world, and its outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from thresher.errors import ConfigError
from thresher.eval.protocol import PAIRED_METRICS, load_run_config, metric_value
from thresher.harness.trace import read_jsonl
from thresher.tasks.trec import ranked_lists, read_qrels, read_run


def test_both_sides_ran_every_task_and_are_paired(world_run) -> None:
    report, out, _ = world_run
    assert [o.task.task_id for o in report.a] == [t.task_id for t in report.tasks]
    assert [o.task.task_id for o in report.b] == [t.task_id for t in report.tasks]
    assert report.run_b.label == "narrow" and report.run_b.config.episode.search_results == 3
    assert all(len(o.metrics.ranked_doc_ids) <= 2 for o in report.b)
    assert set(report.tests) == set(PAIRED_METRICS)
    for name in PAIRED_METRICS:
        diffs = [metric_value(a.metrics, name) - metric_value(b.metrics, name)
                 for a, b in zip(report.a, report.b, strict=True)]  # fmt: skip
        assert report.tests[name].mean_diff == pytest.approx(sum(diffs) / len(diffs))
        assert 0 < report.tests[name].p_value <= 1
    # B sees fewer results: it costs fewer tokens and never recalls more
    assert report.tests["context_tokens"].mean_diff > 0
    assert report.tests["trajectory_recall"].mean_diff >= 0


def test_every_failure_is_attributed_from_its_trace(world_run) -> None:
    report, out, _ = world_run
    for outcome in report.a + report.b:
        if outcome.metrics.output_recall < 1:
            assert outcome.attribution.failed and outcome.attribution.cause
        trace = read_jsonl(out / outcome.trace_paths[0])
        assert trace[0].type == "episode_start" and trace[-1].type == "episode_end"
    assert any(o.attribution.failed for o in report.b)


def test_outputs(world_run) -> None:
    report, out, paths = world_run
    assert set(paths) == {"tasks", "run_a", "run_b", "qrels", "summary_json", "summary_md", "html"}
    rows = [json.loads(x) for x in paths["tasks"].read_text().splitlines()]
    assert [r["query_id"] for r in rows] == [t.task_id for t in report.tasks]
    side = rows[0]["a"]
    for key in ("query_id", "status", "tool_call_counts", "retrieved_docids", "result"):
        assert key in side  # BrowseComp-Plus run fields
    assert side["result"][0]["type"] == "output_text"
    assert side["status"] == "completed" and set(side["tool_call_counts"]) == {"search_corpus"}
    assert (out / side["traces"][0]).is_file()
    assert set(rows[0]["diff"]) == set(PAIRED_METRICS)
    run_a = ranked_lists(read_run(paths["run_a"]))
    assert run_a == {o.task.task_id: o.metrics.ranked_doc_ids for o in report.a}
    assert set(read_qrels(paths["qrels"])) == {t.task_id for t in report.tasks}
    summary = json.loads(paths["summary_json"].read_text())
    assert summary["n_tasks"] == 3 and summary["b"]["label"] == "narrow"
    assert sum(summary["attribution"]["b"].values()) == 3
    md = paths["summary_md"].read_text()
    assert "| recall@5 |" in md and "termination too aggressive" in md


def test_rollouts_are_fused(world_run, tmp_path: Path) -> None:
    from thresher.eval.protocol import run_config
    from thresher.index.backends import open_store

    report, out, _ = world_run
    index = out.parent / "index"
    store = open_store(index)
    try:
        outcomes = run_config(report.tasks[:1], store, report.run_a, rollouts=2,
                              out_dir=tmp_path)  # fmt: skip
    finally:
        store.close()
    o = outcomes[0]
    assert len(o.rollouts) == 2 and len(o.trace_paths) == 2
    assert o.trace_paths[1].endswith(".r1.jsonl")
    # a deterministic policy: both rollouts agree, and the fused ranking is theirs
    assert o.metrics.ranked_doc_ids == o.rollouts[0].ranked_doc_ids
    assert o.metrics.context_tokens == 2 * o.rollouts[0].context_tokens


def test_run_config_specs(tmp_path: Path) -> None:
    assert load_run_config("single-shot").policy == "single-shot"
    with pytest.raises(ConfigError, match="neither a config file nor a policy"):
        load_run_config("no-such-policy")
    (tmp_path / "x.json").write_text('{"policy": {"name": "nope"}}')
    with pytest.raises(ConfigError, match=r"\[policy\] name"):
        load_run_config(str(tmp_path / "x.json"))
    (tmp_path / "y.toml").write_text('[policy]\nname = "single-shot"\n[budget]\ntotal = 9000\n')
    spec = load_run_config(str(tmp_path / "y.toml"))
    assert spec.label == "y" and spec.config.budget.total == 9000
    (tmp_path / "z.toml").write_text('[policy]\nname = "single-shot"\n[budget]\nbogus = 1\n')
    with pytest.raises(ConfigError, match="bogus"):
        load_run_config(str(tmp_path / "z.toml"))


def test_an_answering_model_is_scored_apart(world_run, tmp_path: Path) -> None:
    from thresher.eval.protocol import compare
    from thresher.eval.report import summary_markdown
    from thresher.index.backends import open_store

    report, out, _ = world_run

    def answerer(task, documents) -> str:  # right when the answer document was returned
        return task.answer if set(task.final_doc_ids) & {d.doc_id for d in documents} else "?"

    store = open_store(out.parent / "index")
    try:
        paired = compare(report.tasks, store, report.run_a, report.run_b, answerer=answerer,
                         resamples=500)  # fmt: skip
    finally:
        store.close()
    assert {"answer_em", "answer_f1"} <= set(paired.tests)
    for o in paired.a + paired.b:
        expected = 1.0 if o.prediction == o.task.answer else 0.0
        assert o.metrics.answer_em == expected
        if o.prediction == "?":
            assert o.attribution.cause == "hallucination"  # "?" is in no cached chunk
    assert "Answer quality" in summary_markdown(paired)


@pytest.mark.slow
def test_single_shot_against_the_local_policy(world_run) -> None:
    from thresher.eval.protocol import compare
    from thresher.index.backends import open_store
    from thresher.policies import policy_names

    if "local" not in policy_names():
        pytest.skip("the local policy is not registered")
    report, out, _ = world_run
    store = open_store(out.parent / "index")
    try:
        paired = compare(report.tasks, store, load_run_config("local"),
                         load_run_config("single-shot"), resamples=500)  # fmt: skip
    finally:
        store.close()
    assert paired.run_a.policy == "local"
    for a, b in zip(paired.a, paired.b, strict=True):
        assert a.task is b.task
        assert a.metrics.turns >= b.metrics.turns  # multi-turn against one search
        assert a.attribution.failed == (a.metrics.output_recall < 1)
