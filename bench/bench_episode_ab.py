"""Two checkouts' local-policy episode time, measured in lock step on the same load.

This 2-core VM's speed drifts by up to 40% within a minute, more than a speed
change of a few percent; two ``bench_episode.py`` runs one after the other
cannot tell them apart. Here each checkout (``--base`` and ``--new``, source
trees of this repository) runs in its own process, loads the dev index and
warms up on the first ``--questions`` questions (as ``bench_episode.py`` does),
then the two take turns, one pass each per round (the order alternating), for
``--rounds`` rounds. Prints per round each one's p50 episode wall time and CPU
per episode and the load, then the medians and the median per-round ratio
new / base.

Usage::

    .venv/bin/python bench/bench_episode_ab.py --base /path/to/base-checkout --new .

Needs ``../shared/data/dev`` (each worker skips with a message without it).
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

_WORKER = r"""
import json, statistics, sys, time
from pathlib import Path
sys.path.insert(0, "bench")
from bench_policies import DATASETS, DEV
from thresher.config import Config
from thresher.harness.episode import run_episode
from thresher.index.embedded.store import EmbeddedStore
from thresher.policies.local.options import LocalOptions
from thresher.policies.local.policy import LocalPolicy
from thresher.train.local.data import ensure_index, group_tasks

dataset, questions, cache = sys.argv[1], int(sys.argv[2]), sys.argv[3]
files = [Path(DEV) / f for f in DATASETS[dataset]]
if not all(f.exists() for f in files):
    print("skip", flush=True)
    sys.exit(0)
config = Config()
store = EmbeddedStore(ensure_index(files, Path(cache) / dataset, config), config)
tasks = [t for f in files if f.name != DATASETS["musique"][1] for t in group_tasks([f])]
tasks = tasks[:questions]


def one_pass():
    cpu = time.process_time()
    ms = []
    for task in tasks:
        policy = LocalPolicy(LocalOptions(), config=config)
        ms.append(run_episode(task.question, store, policy, config).wall_s * 1000)
    return statistics.median(ms), (time.process_time() - cpu) * 1000 / len(tasks)


one_pass()
print("ready", flush=True)
for _ in sys.stdin:
    print(json.dumps(one_pass()), flush=True)
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the checkout to compare against")
    ap.add_argument("--new", default=".", help="the checkout measured (default: this one)")
    ap.add_argument("--dataset", default="hotpotqa")
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--cache", default="/tmp/thresher-dev-index")
    args = ap.parse_args()
    workers: dict[str, subprocess.Popen[str]] = {}
    for name, tree in (("base", args.base), ("new", args.new)):
        root = Path(tree).resolve()
        workers[name] = subprocess.Popen(
            [sys.executable, "-c", _WORKER, args.dataset, str(args.questions), args.cache],
            cwd=root,
            env=dict(os.environ, PYTHONPATH=str(root / "src")),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
    for name, worker in workers.items():
        assert worker.stdout is not None
        first = worker.stdout.readline().strip()
        if first != "ready":
            print(f"{name}: skipped ({first or 'no dev data or the worker failed'})")
            return 0
    got: dict[str, list[tuple[float, float]]] = {"base": [], "new": []}
    for r in range(args.rounds):
        for name in ("base", "new") if r % 2 == 0 else ("new", "base"):
            worker = workers[name]
            assert worker.stdin is not None and worker.stdout is not None
            worker.stdin.write("go\n")
            worker.stdin.flush()
            p50, cpu = json.loads(worker.stdout.readline())
            got[name].append((p50, cpu))
        load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
        print(
            f"round {r + 1}: base p50 {got['base'][-1][0]:.1f} ms, CPU {got['base'][-1][1]:.1f}"
            f" ms/episode; new p50 {got['new'][-1][0]:.1f} ms, CPU {got['new'][-1][1]:.1f};"
            f" load {load}",
            flush=True,
        )
    for worker in workers.values():
        assert worker.stdin is not None
        worker.stdin.close()
        worker.wait()
    for name, rows in got.items():
        print(
            f"{name}: median p50 {statistics.median(p for p, _ in rows):.1f} ms, "
            f"median CPU {statistics.median(c for _, c in rows):.1f} ms/episode"
        )
    pairs = list(zip(got["new"], got["base"], strict=True))
    print(
        f"new / base per round, median: p50 {statistics.median(n[0] / b[0] for n, b in pairs):.3f},"
        f" CPU {statistics.median(n[1] / b[1] for n, b in pairs):.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
