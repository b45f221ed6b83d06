"""Are the local policy's answer scores calibrated? A reliability table on a dev pool.

Runs the local policy on the first ``--limit`` questions of a dev pool (indexes
as in ``bench_policies.py``) and prints, per score bin, how many answered
documents fell in it, their mean score and the share of them that are gold,
with the expected calibration error (ECE: the bins' gaps weighted by their
size) and how many answers had scores that never rise with rank.

The shipped weights are fit on every dev question, so with them the figures are
in-sample; ``--weights FILE`` scores with other weights (e.g. fit without the
pool).

Usage::

    .venv/bin/python bench/bench_score_calibration.py [--dataset hotpotqa] [--limit 100]

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench_policies import DATASETS, DEV

from thresher.config import Config
from thresher.harness.episode import run_episode
from thresher.index.embedded.store import EmbeddedStore
from thresher.policies.local.policy import LocalPolicy
from thresher.train.local.data import ensure_index, group_tasks

BINS = (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--dataset", choices=list(DATASETS), default="hotpotqa")
    ap.add_argument("--limit", type=int, default=100, help="first N questions of its first file")
    ap.add_argument("--cache", default="/tmp/thresher-dev-index", help="index folder")
    ap.add_argument("--data", default=str(DEV), help="the dev data folder")
    ap.add_argument("--weights", default=None, help="a weights file (default: the shipped one)")
    args = ap.parse_args(argv)
    config = Config()
    files = [Path(args.data) / f for f in DATASETS[args.dataset]]
    tasks = group_tasks(files[:1])[: args.limit]
    scored: list[tuple[float, bool]] = []
    monotone = 0
    with EmbeddedStore(ensure_index(files, Path(args.cache) / args.dataset, config), config) as s:
        policy = LocalPolicy(args.weights, config=config)
        for task in tasks:
            docs = run_episode(task.question, s, policy, config).documents
            scores = [d.score if d.score is not None else float("nan") for d in docs]
            monotone += all(a >= b for a, b in zip(scores, scores[1:], strict=False))
            gold = set(task.gold_doc_ids)
            scored += [(sc, d.doc_id in gold) for sc, d in zip(scores, docs, strict=True)]
    print(f"{args.dataset}: {len(tasks)} questions, {len(scored)} answered documents")
    print(f"  {'score bin':<10} {'docs':>6} {'mean score':>11} {'share gold':>11}")
    ece = 0.0
    for lo, hi in zip(BINS, BINS[1:], strict=False):
        part = [(sc, g) for sc, g in scored if lo <= sc < hi or (hi == 1.0 and sc == 1.0)]
        if not part:
            continue
        mean = sum(sc for sc, _ in part) / len(part)
        share = sum(g for _, g in part) / len(part)
        ece += len(part) / len(scored) * abs(mean - share)
        print(f"  {lo:.1f}-{hi:.1f}    {len(part):6d} {mean:11.3f} {share:11.3f}")
    print(f"  ECE {ece:.3f}; answers with scores never rising with rank: {monotone}/{len(tasks)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
