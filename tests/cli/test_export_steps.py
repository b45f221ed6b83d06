"""``thresher export-steps``: trace files with sample events to step-wise rows with
group advantages, on SearchEnv rollouts over the harness tests' real index."""

from __future__ import annotations

import json

from env.test_samples import drive_with_samples, toy_sample
from env.test_search_env import SCRIPT, TASK
from thresher.cli.main import main
from thresher.env import SearchEnv
from thresher.harness.trace import write_jsonl
from thresher.tasks.readers import write_tasks
from thresher.testing.replay_server import reply, tool_call

#: one search, then an answer naming only the first document: a lower reward
HALF = [
    reply(tool_call("search_corpus", {"query": "Halvard Glassworks founded"})),
    reply(
        content='<Document id="glassworks"><Justification>Founded in Marrowick.'
        "</Justification></Document>"
    ),
]


def test_rows_carry_each_episodes_group_advantage(tmp_path, store, config, capsys):
    full = drive_with_samples(SearchEnv(store, config), TASK, SCRIPT)
    half = drive_with_samples(SearchEnv(store, config), TASK, HALF)
    down = SearchEnv(store, config, training=True)
    step = down.reset(TASK)
    message = SCRIPT[0]["message"]
    down.step(message, sample=toy_sample(step, message))
    down.fail("the endpoint went away")
    other = SearchEnv(store, config)
    other.reset("What is the capital of nowhere?")
    other.fail("no model")
    paths = []
    for name, trace in (
        ("full", full.trace),
        ("half", half.trace),
        ("down", down.rollout().trace),
        ("other", other.rollout().trace),
    ):
        paths.append(str(write_jsonl(trace, tmp_path / f"{name}.jsonl")))
    tasks = write_tasks(tmp_path / "tasks.jsonl", [TASK])
    out = tmp_path / "rows.jsonl"
    code = main(["export-steps", *paths, "--tasks", str(tasks), "--out", str(out), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert report == {
        "episodes": 4,
        "groups": 1,
        "rows": 4,
        "unscorable": 1,
        "skipped": {"no_matching_task": 1},
    }
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    by_source: dict[str, list[dict]] = {}
    for row in rows:
        by_source.setdefault(row["source"].rsplit("/", 1)[-1], []).append(row)
    assert sorted(by_source) == ["down.jsonl", "full.jsonl", "half.jsonl"]
    assert len(by_source["full.jsonl"]) == 2  # cut at the prune
    for group in by_source.values():
        assert sum(r["weight"] for r in group) == 1.0
        assert len({r["advantage"] for r in group}) == 1
    assert by_source["full.jsonl"][0]["reward"] == full.reward.total > half.reward.total
    assert by_source["full.jsonl"][0]["advantage"] > 0 > by_source["half.jsonl"][0]["advantage"]
    assert by_source["down.jsonl"][0]["advantage"] == 0.0
    assert by_source["down.jsonl"][0]["reward"] is None
    assert {r["task_id"] for r in rows} == {"t1"}


def test_traces_without_ids_are_refused_with_what_to_do(tmp_path, store, config, capsys):
    env = SearchEnv(store, config)
    env.reset(TASK)
    env.step(SCRIPT[0]["message"])
    env.fail("stop")
    trace = write_jsonl(env.rollout().trace, tmp_path / "t.jsonl")
    tasks = write_tasks(tmp_path / "tasks.jsonl", [TASK])
    out = tmp_path / "rows.jsonl"
    code = main(["export-steps", str(trace), "--tasks", str(tasks), "--out", str(out)])
    assert code == 2 and not out.exists()
    assert "has sample events (token ids)" in capsys.readouterr().err
