"""`make verifiers-check`: verifiers' evaluation of thresher-search against the replay server.

Run with the environment's own virtualenv (``.venv-verifiers``, where verifiers 0.4.0,
thresher and this package are installed). Offline: the model is thresher's replay server
(``thresher.testing.replay_server``) on 127.0.0.1, answering with scripted replies.

1. Builds the seeded world (seed 7, small) into a temporary folder; the tasks are
   ``thresher synth tasks`` output on its index (edit mode) and its planted chains
   (append mode).
2. Writes the replies of each rollout by driving ``thresher.env.SearchEnv`` in-process on
   the same index: a search for the question, one per bridge entity, a prune of every
   chunk that is not from a gold document, and a final answer citing the kept gold
   documents. One rollout first cites a pruned chunk (the harness refuses it) and then
   answers; one is wrong (it prunes the gold chunks and cites a kept distractor). The
   rewards of these in-process episodes are thresher's rewards. The last rollout's model
   endpoint answers HTTP 503 (an infrastructure failure).
3. Serves all replies, in order, from the replay server and runs ``vf-eval
   thresher-search`` against it (one rollout at a time, so the replies meet their rollout),
   in ``edit`` and in ``append`` mode.
4. Checks, per rollout: the failed one is errored and unscored (never a 0); the reward
   verifiers reports equals the in-process reward and
   ``train.rewards.reward`` on the thresher trace the rollout recorded; recall, prune
   accuracy and the context's tokens at the end are reported as metrics and equal
   thresher's episode metrics; verifiers' message graph has one branch per rollout plus
   one per history rewrite; the replay server answered every scripted reply.

Prints one closing line (``verifiers-check ok: ...``) and exits 0, or prints
``verifiers-check FAILED: ...`` and exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path
from typing import Any

import verifiers.v1 as vf
from thresher.env import SearchEnv
from thresher.eval.episode_metrics import episode_metrics
from thresher.harness.trace import event_from_dict
from thresher.index.backends import open_store
from thresher.tasks.task import Task
from thresher.testing.replay_server import ReplayServer, http_error, reply, tool_call
from thresher.train.rewards import reward

from thresher_search import load_environment
from thresher_search.world import load_thresher_tasks, world_source

CHUNK = re.compile(r'<chunk id="([^"]+)"')
ENV_ID = "thresher-search"


class CheckFailed(Exception):
    """One check did not hold."""


def _chunk_ids(messages: list[dict[str, Any]]) -> list[str]:
    ids: list[str] = []
    for m in messages:
        if m.get("role") == "tool":
            ids += [c for c in CHUNK.findall(str(m.get("content") or "")) if c not in ids]
    return ids


def _doc(chunk_id: str) -> str:
    return chunk_id.rsplit("#", 1)[0]


def _final(doc_ids: list[str]) -> str:
    return "".join(
        f'<Document id="{d}"><Justification>It states a hop of the chain.</Justification>'
        "</Document>"
        for d in doc_ids
    )


def script_rollout(env: SearchEnv, task: Task, kind: str) -> tuple[list[dict[str, Any]], Any]:
    """Drive ``env`` on ``task`` with replies written from what each step shows; return the
    replies (replay-server entries) and the rollout. ``kind``: ``correct``, ``cites_pruned``
    (a final answer citing a pruned chunk first) or ``wrong``."""
    replies: list[dict[str, Any]] = []
    seen: list[str] = []

    def send(entry: dict[str, Any]):
        replies.append(entry)
        step = env.step(entry["message"], finish_reason=entry["finish_reason"])
        seen.extend(c for c in _chunk_ids(step.appended) if c not in seen)
        return step

    env.reset(task)
    queries = [task.question] + [b for b in task.metadata.get("bridges") or [] if b]
    for i, query in enumerate(queries):
        step = send(reply(tool_call("search_corpus", {"query": query}, f"call_search_{i}")))
    gold = set(task.gold_doc_ids)
    off = [c for c in seen if _doc(c) not in gold]
    on = [c for c in seen if _doc(c) in gold]
    if kind == "wrong":
        off, on = on, off[:1]
    if not on or not off:
        raise CheckFailed(f"{task.task_id}: the searches found no chunk to prune or to keep")
    step = send(reply(tool_call("prune_chunks", {"chunk_ids": off}, "call_prune_0")))
    if kind == "cites_pruned":
        step = send(reply(content=_final([_doc(off[0])])))
        if step.done or not step.info["refusals"]:
            raise CheckFailed(f"{task.task_id}: citing a pruned chunk was not refused")
    cited = list(dict.fromkeys(_doc(c) for c in on))
    step = send(reply(content=_final(cited)))
    if not step.done:
        raise CheckFailed(f"{task.task_id}: the final answer did not end the episode")
    return replies, env.rollout()


def expected_rollouts(
    index: Path, tasks: list[Task], mode: str
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The replay script of every rollout, in task order, and per task what thresher makes
    of it in-process: the reward, exit, recall, prune accuracy and tokens at the end."""
    kinds = ["correct"] * (len(tasks) - 1)
    kinds[1 % len(kinds)], kinds[-1] = "cites_pruned", "wrong"
    kinds.append("endpoint_down")
    store = open_store(index)
    script: list[dict[str, Any]] = []
    expected: dict[str, dict[str, Any]] = {}
    try:
        for task, kind in zip(tasks, kinds, strict=True):
            if kind == "endpoint_down":  # the model endpoint answers 503: an infrastructure failure
                script.append(http_error(503, message="scripted outage"))
                expected[task.task_id] = {"kind": kind, "exit": "endpoint_unavailable"}
                continue
            replies, rollout = script_rollout(
                SearchEnv(store, mode=mode, model="replay"), task, kind
            )
            script += replies
            m = episode_metrics(list(rollout.trace), task)
            expected[task.task_id] = {
                "kind": kind,
                "reward": rollout.reward.total,
                "exit": rollout.result.exit_reason.value,
                "recall": m.output_recall,
                "prune_accuracy": m.prune_accuracy,
                "context_tokens": float(m.context_tokens),
            }
    finally:
        store.close()
    if len({e["reward"] for e in expected.values() if "reward" in e}) < 2:
        raise CheckFailed(f"the scripted rewards do not differ: {expected}")
    return script, expected


def vf_eval(
    workdir: Path, source: list[str], n_tasks: int, mode: str, script: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Run ``vf-eval thresher-search`` on the taskset options ``source`` against a replay
    server serving ``script``; return the traces it wrote."""
    out, name = workdir / "outputs", f"check-{mode}"
    with ReplayServer(script, workdir / f"replay-{mode}") as server:
        cmd = [
            str(Path(sys.executable).parent / "vf-eval"),
            ENV_ID,
            *source,
            *("--env.agent.harness.id", ENV_ID),
            *("--env.agent.harness.mode", mode),
            *("--env.agent.runtime.type", "subprocess"),
            *("--model", "replay"),
            *("--client.base-url", server.base_url),
            *("--client.api-key-var", "THRESHER_REPLAY_KEY"),
            *("--num-rollouts", "1"),
            *("--max-concurrent", "1"),  # one rollout at a time: the replies meet their rollout
            *("--no-push", "--no-rich", "--clean"),
            *("--output-dir", str(out), "--run.name", name),
        ]
        env_vars = {**os.environ, "THRESHER_REPLAY_KEY": "replay"}
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env_vars, check=False)
        asked = len(server.chat_requests())
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout)[-3000:]
        raise CheckFailed(f"vf-eval ({mode}) exited {proc.returncode}:\n{tail}")
    if asked != len(script):
        raise CheckFailed(f"{mode}: the replay server answered {asked} requests of {len(script)}")
    lines = (out / name / "traces.jsonl").read_text().splitlines()
    traces = [t for line in lines for t in json.loads(line)["traces"]]
    if len(traces) != n_tasks:
        raise CheckFailed(f"{mode}: vf-eval wrote {len(traces)} traces for {n_tasks} tasks")
    return traces


def check_traces(
    traces: list[dict[str, Any]], tasks: list[Task], expected: dict[str, dict[str, Any]], mode: str
) -> tuple[int, int]:
    """Check each trace against thresher; return the history rewrites and the errored
    (unscored) rollouts seen."""
    by_id = {t.task_id: t for t in tasks}
    rewrites = failed = 0
    for tr in traces:
        task_id = tr["task"]["data"]["task"]["task_id"]
        want, where = expected[task_id], f"{mode}, {task_id} ({expected[task_id]['kind']})"
        rewards = {k: v for k, v in (tr.get("rewards") or {}).items() if v is not None}
        if want["kind"] == "endpoint_down":  # errored and never scored: not a 0
            exit_reason = (tr.get("info") or {}).get("thresher", {}).get("exit_reason")
            if not tr.get("errors") or rewards or exit_reason != want["exit"]:
                raise CheckFailed(
                    f"{where}: errors {tr.get('errors')}, rewards {rewards}, exit {exit_reason}"
                )
            failed += 1
            continue
        if tr.get("errors") or "thresher_reward" not in rewards:
            raise CheckFailed(f"{where}: rollout errored or unscored: {tr.get('errors')}")
        got = sum(r["score"] * r.get("weight", 1.0) for r in rewards.values())
        record = tr["info"]["thresher"]
        on_trace = reward([event_from_dict(e) for e in record["trace"]], by_id[task_id]).total
        if not (got == want["reward"] == on_trace):
            raise CheckFailed(
                f"{where}: verifiers reward {got}, in-process {want['reward']}, "
                f"train.rewards.reward on the recorded trace {on_trace}"
            )
        metrics = tr.get("metrics") or {}
        for name in ("recall", "prune_accuracy", "context_tokens"):
            if metrics.get(name) != want[name]:
                raise CheckFailed(f"{where}: metric {name} {metrics.get(name)} != {want[name]}")
        if record["exit_reason"] != want["exit"]:
            raise CheckFailed(f"{where}: exit {record['exit_reason']} != {want['exit']}")
        lost = record["prefix_lost_turns"]
        branches = len(vf.WireTrace.model_validate(tr).branches)
        if branches != 1 + len(lost):
            raise CheckFailed(
                f"{where}: {branches} branches in verifiers' message graph, expected 1 + "
                f"{len(lost)} (the turns whose history thresher rewrote)"
            )
        if (mode == "edit") != bool(lost):
            raise CheckFailed(f"{where}: history rewritten on turns {lost} in {mode} mode")
        rewrites += len(lost)
    return rewrites, failed


def synth_tasks(index: Path, out: Path, n: int) -> Path:
    """``thresher synth tasks`` (offline) on ``index``: ``n`` tasks written to ``out``."""
    cmd = [sys.executable, "-m", "thresher.cli.main", "synth", "tasks", "--index", str(index)]
    cmd += ["--out", str(out), "--n", str(n), "--seed", "0", "--mode", "offline", "--no-progress"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise CheckFailed(f"thresher synth tasks exited {proc.returncode}: {proc.stderr[-2000:]}")
    return out


def run(workdir: Path, n_tasks: int, modes: list[str]) -> str:
    """The check; ``edit`` runs on ``thresher synth tasks`` output over the world's index,
    ``append`` on the seeded world's own chains."""
    world = workdir / "world"
    index, chains = world_source(7, "small", world)
    synth = synth_tasks(index, workdir / "synth-tasks.jsonl", n_tasks)
    sources = {
        "edit": (synth, ["--env.taskset.index", str(index), "--env.taskset.tasks", str(synth)]),
        "append": (chains, ["--env.taskset.world-dir", str(world)]),
    }
    # load_environment(...) from Python builds the same environment vf-eval loads
    env = load_environment(index, synth, num_tasks=n_tasks, mode="append")
    want_ids = [t.task_id for t in load_thresher_tasks(synth, n_tasks)]
    got_ids = [t.data.id for t in env.taskset]
    if got_ids != want_ids or env.config.agent.harness.mode != "append":
        raise CheckFailed(f"load_environment(index, tasks): tasks {got_ids}, not {want_ids}")
    parts = []
    for mode in modes:
        tasks_file, source = sources[mode]
        tasks = load_thresher_tasks(tasks_file, n_tasks)
        script, expected = expected_rollouts(index, tasks, mode)
        source = [*source, "--env.taskset.num-tasks", str(n_tasks)]
        traces = vf_eval(workdir, source, n_tasks, mode, script)
        rewrites, failed = check_traces(traces, tasks, expected, mode)
        rewards = ", ".join(
            f"{e['kind']} {e['reward']:.4f}" if "reward" in e else f"{e['kind']} unscored"
            for e in expected.values()
        )
        origin = "synth tasks" if tasks_file == synth else "world chains"
        parts.append(
            f"{mode} on {origin}: {len(script)} replies, rewards {rewards}, "
            f"{n_tasks - failed} + {rewrites} graph branches"
        )
    return (
        f"verifiers-check ok: vf-eval {ENV_ID} (verifiers {version('verifiers')}) against the "
        f"replay server on the seed-7 small world, {n_tasks} rollouts per mode; the rewards "
        f"verifiers reports = thresher's in-process rewards = train.rewards.reward on each "
        f"recorded trace; a model endpoint answering 503 errors the rollout, unscored (not 0); "
        f"recall, prune_accuracy, context_tokens = thresher's episode metrics; "
        f"one graph branch per rollout plus one per history rewrite ({'; '.join(parts)})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=5, help="rollouts per mode (>= 3)")
    parser.add_argument("--modes", default="edit,append", help="comma-separated harness modes")
    parser.add_argument("--workdir", type=Path, help="keep the world and outputs here")
    args = parser.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    try:
        if args.workdir is not None:
            args.workdir.mkdir(parents=True, exist_ok=True)
            line = run(args.workdir, args.tasks, modes)
        else:
            with tempfile.TemporaryDirectory(prefix="verifiers-check-") as tmp:
                line = run(Path(tmp), args.tasks, modes)
    except CheckFailed as exc:
        print(f"verifiers-check FAILED: {exc}")
        return 1
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
