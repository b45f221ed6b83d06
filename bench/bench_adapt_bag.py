"""``thresher adapt``'s order refit across LightGBM seeds, one booster against a bag of them.

``adapt`` refits the local policy's LambdaRank order model from the shipped trees on
rows collected from an index's synthetic tasks; LightGBM's seed (bagging and feature
sampling) alone moves the result. This bench collects the rows once, as ``adapt``
does (the tasks' split by ``--seed``, the shipped weights under plain RRF), then for
each order seed and each bag size fits the order model as ``adapt --order-seed S
--bag N`` does, and prints per setting: the fit's seconds, one order-model call's
median milliseconds on 40 rows (a ranking), recall@5 and reward on the held-out tasks (``adapt``'s "after" figure), and, with ``--docfolders``, the
documentation benchmark's tune split (top-5 recall of gold documents: all, first
hop, later hops, and the local policy's episode ms p50) by running
``bench_docfolders.py --split tune --policies local --weights FILE``. Then the mean
and spread (max - min) over the seeds per bag size.

    PYTHONPATH=src python bench/bench_adapt_bag.py --index IDX --tasks TASKS.jsonl \\
        [--order-seeds 0,1,2] [--bags 1,5] [--docfolders] [--out DIR] [--json OUT]

The weights of each setting are written to ``--out`` (``seed{S}-bag{N}.json``).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from thresher.config import Config
from thresher.index.embedded.store import EmbeddedStore
from thresher.policies.local.models import Model, load_weights
from thresher.tasks.synthetic import read_synth_tasks, to_eval_task
from thresher.train.local.adapt import DEFAULT_ANCHOR, DEFAULT_ORDER_ROUNDS, split_tasks
from thresher.train.local.trainer import collect, fit_weights
from thresher.train.local.tune_runs import LocalEpisodes

BENCH = Path(__file__).resolve().parent


def _docfolders(index: str, weights: Path) -> dict[str, float]:
    """The tune split's recall (all, first hop, later hops) and ms p50 of local with ``weights``."""
    with_json = weights.with_suffix(".tune.json")
    cmd = [
        sys.executable,
        str(BENCH / "bench_docfolders.py"),
        "--index",
        index,
        "--split",
        "tune",
        "--policies",
        "local",
        "--weights",
        str(weights),
        "--json",
        str(with_json),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    records = json.loads(with_json.read_text(encoding="utf-8"))["table"]
    by_row = {r["row"]: r["recall"]["local"] for r in records if r["split"] == "tune"}
    ms = re.search(r"ms p50: local (\d+)", out)
    return {
        "tune": by_row["all"],
        "first": by_row["first hop"],
        "later": by_row["later hops"],
        "ms_p50": float(ms.group(1)) if ms else float("nan"),
    }


def _order_ms(model: Model, rows: int = 40, calls: int = 200) -> float:
    """Median milliseconds of one call of the order model on ``rows`` rows (a ranking)."""
    x = np.random.default_rng(0).normal(size=(rows, len(model.features)))
    model.logits(x)  # the boosters are built once, on the first call
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        model.logits(x)
        times.append(1000 * (time.perf_counter() - t))
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", required=True)
    ap.add_argument("--tasks", default=None, help="default: IDX/adapted/tasks.jsonl")
    ap.add_argument("--held-out", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=0, help="the split's seed (as adapt --seed)")
    ap.add_argument("--order-seeds", default="0,1,2")
    ap.add_argument("--bags", default="1,5")
    ap.add_argument("--order-rounds", type=int, default=DEFAULT_ORDER_ROUNDS)
    ap.add_argument("--limit", type=int, default=0, help="first N tasks of each part (0: all)")
    ap.add_argument("--docfolders", action="store_true", help="also run the tune split")
    ap.add_argument("--out", default="/tmp/bench-adapt-bag", help="folder for the weights")
    ap.add_argument("--json", default=None, metavar="OUT")
    args = ap.parse_args(argv)

    tasks_file = Path(args.tasks or Path(args.index) / "adapted" / "tasks.jsonl")
    tasks = [to_eval_task(t) for t in read_synth_tasks(tasks_file)]
    train, held = split_tasks(tasks, args.held_out, args.seed)
    if args.limit:
        train, held = train[: args.limit], held[: args.limit]
    print(f"{tasks_file}: {len(tasks)} tasks, train {len(train)}, held out {len(held)}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    config = Config()
    shipped = load_weights()
    collecting = replace(shipped, meta={**shipped.meta, "fusion": "plain"})
    rows: list[dict[str, Any]] = []
    with EmbeddedStore(Path(args.index), config) as store:
        t = time.perf_counter()
        data = collect(train, store, collecting, config=config)
        print(f"collected rows on {len(train)} tasks in {time.perf_counter() - t:.0f} s")
        runs = LocalEpisodes([(held, store)], config)
        for bag in (int(b) for b in args.bags.split(",")):
            for seed in (int(s) for s in args.order_seeds.split(",")):
                t = time.perf_counter()
                fitted = fit_weights(
                    data,
                    start=shipped,
                    anchor=DEFAULT_ANCHOR,
                    order_rounds=args.order_rounds,
                    only=("order",),
                    seed=seed,
                    order_bag=bag,
                )
                fit_s = time.perf_counter() - t
                adapted = replace(
                    shipped, meta={**fitted.meta, "fusion": "plain"}, order=fitted.order
                )
                path = adapted.save(out / f"seed{seed}-bag{bag}.json")
                t = time.perf_counter()
                found = runs.outcomes(adapted)
                row: dict[str, Any] = {
                    "order_seed": seed,
                    "bag": bag,
                    "fit_s": round(fit_s, 2),
                    "held_s": round(time.perf_counter() - t, 1),
                    "held_recall5": 100 * statistics.fmean(o.recall5 for o in found),
                    "held_reward": statistics.fmean(o.reward for o in found),
                    "order_ms": _order_ms(fitted.order) if fitted.order else float("nan"),
                    "weights": str(path),
                }
                if args.docfolders:
                    row.update(_docfolders(args.index, path))
                rows.append(row)
                print(
                    "  ".join(
                        f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}"
                        for k, v in row.items()
                        if k != "weights"
                    ),
                    flush=True,
                )
    measures = ["held_recall5", "held_reward", "fit_s", "held_s", "order_ms"]
    if args.docfolders:
        measures += ["tune", "first", "later", "ms_p50"]
    print("\nper bag size over order seeds: mean [min..max] (spread)")
    for bag in sorted({r["bag"] for r in rows}):
        part = [r for r in rows if r["bag"] == bag]
        print(f"bag {bag} ({len(part)} seeds)")
        for m in measures:
            v = [r[m] for r in part]
            print(
                f"  {m:<13} {statistics.fmean(v):8.2f} [{min(v):.2f}..{max(v):.2f}] "
                f"({max(v) - min(v):.2f})"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
