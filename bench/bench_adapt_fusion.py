"""Local-policy weights under each fusion, on the held-out part of an index's adapt tasks.

``thresher adapt`` splits the tasks it synthesized (kept in ``IDX/adapted/tasks.jsonl``)
into training and held-out tasks by seed; this bench rebuilds that split and runs the
local policy on the held-out tasks with each weights file given, under each fusion
asked (``plain`` RRF, the index's ``fitted`` fusion weights, or ``own``: the fusion
the weights declare in ``meta.fusion``). It prints the measure ``adapt`` prints:
recall@5 of the tasks' gold documents, the episode reward at beta 2, context tokens
at the end; and per hop count (``--json``: also each task's recall@5, for paired
comparisons).

    PYTHONPATH=src python bench/bench_adapt_fusion.py --index IDX \\
        [--tasks IDX/adapted/tasks.jsonl] [--held-out 0.3] [--seed 0] \\
        --weights shipped,adapted=IDX/adapted/local_policy.json --fusion plain,fitted \\
        [--json OUT]

``shipped`` names the shipped weights; ``LABEL=FILE`` a weights file.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

from thresher.config import Config
from thresher.index.embedded.store import EmbeddedStore
from thresher.policies.local.models import FUSIONS, LocalWeights, load_weights
from thresher.tasks.synthetic import read_synth_tasks, to_eval_task
from thresher.train.local.adapt import split_tasks
from thresher.train.local.tune_runs import LocalEpisodes


def _weights(spec: str) -> tuple[str, LocalWeights]:
    if spec == "shipped":
        return "shipped", load_weights()
    label, _, path = spec.partition("=")
    return (label, load_weights(path)) if path else (Path(spec).stem, load_weights(spec))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", required=True)
    ap.add_argument("--tasks", default=None, help="default: IDX/adapted/tasks.jsonl")
    ap.add_argument("--held-out", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--weights", default="shipped", help="comma-separated: shipped, LABEL=FILE")
    ap.add_argument("--fusion", default="own", help="comma-separated: own, plain, fitted")
    ap.add_argument("--limit", type=int, default=0, help="first N held-out tasks (0: all)")
    ap.add_argument("--json", default=None, metavar="OUT")
    args = ap.parse_args(argv)

    tasks_file = Path(args.tasks or Path(args.index) / "adapted" / "tasks.jsonl")
    synth = read_synth_tasks(tasks_file)
    hops_of = {t.task_id: t.hops for t in synth}
    tasks = [to_eval_task(t) for t in synth]
    train, held = split_tasks(tasks, args.held_out, args.seed)
    print(f"{tasks_file}: {len(tasks)} tasks, train {len(train)}, held out {len(held)}")
    if args.limit:
        held = held[: args.limit]
    hops = [hops_of[t.task_id] for t in held]
    config = Config()
    rows = []
    with EmbeddedStore(Path(args.index), config) as store:
        runs = LocalEpisodes([(held, store)], config)
        for spec in args.weights.split(","):
            label, weights = _weights(spec.strip())
            for fusion in args.fusion.split(","):
                fusion = fusion.strip()
                ran = weights if fusion == "own" else None
                if fusion in FUSIONS:
                    ran = replace(weights, meta={**weights.meta, "fusion": fusion})
                if ran is None:
                    raise SystemExit(f"--fusion {fusion!r}: name own, plain or fitted")
                t = time.perf_counter()
                found = runs.outcomes(ran)
                n = len(found)
                by_hops: dict[int, list[float]] = {}
                for h, o in zip(hops, found, strict=True):
                    by_hops.setdefault(h, []).append(o.recall5)
                row = {
                    "weights": label,
                    "fusion": ran.fusion,
                    "recall5": round(sum(o.recall5 for o in found) / n, 4),
                    "reward": round(sum(o.reward for o in found) / n, 4),
                    "tokens": round(sum(o.tokens for o in found) / n, 1),
                    "by_hops": {h: round(sum(v) / len(v), 4) for h, v in sorted(by_hops.items())},
                    "seconds": round(time.perf_counter() - t, 1),
                    "per_task": {t.task_id: o.recall5 for t, o in zip(held, found, strict=True)},
                }
                rows.append(row)
                per_hop = "  ".join(f"{h}-hop {v:.3f}" for h, v in row["by_hops"].items())
                print(
                    f"{label:>10} {row['fusion']:>6}  recall@5 {row['recall5']:.4f}  "
                    f"reward {row['reward']:.4f}  tokens {row['tokens']:.0f}  {per_hop}  "
                    f"({row['seconds']:.0f} s)",
                    flush=True,
                )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json} (per-task recall@5 in each row's per_task)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
