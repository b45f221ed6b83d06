"""Choose the local policy's "not found" floor on training tasks (never evaluation ones).

Runs the local policy (its weights' models and constants, the floor set to 0 so every
answer is whole) on tasks of a training index, e.g. a generated world's
``synth tasks`` (the shipped floor: world seed 8, the world the constants were tuned
on), and reads, for each candidate floor, what leaving out the answered documents
scored below it would do in the top ``--k``: the share of gold documents lost and the
share of non-gold documents (fillers) left out, with the mean answer length. The
answer's scores are calibrated probabilities (isotonic fit of the ranker's), so a floor
``t`` drops documents each of which is evidence with probability below ``t``; the
chosen floor is the largest candidate that loses at most ``--max-lost`` of the gold
documents (default none: a lost gold document costs far more than a filler, and the
dev questions, all of 2-4 gold documents, must keep their recall).

Usage::

    .venv/bin/python bench/bench_answer_floor.py --tasks W/8/tasks.jsonl --index W/8/index

Prints figures and the chosen floor; asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from thresher.config import Config
from thresher.harness.episode import run_episode
from thresher.index.embedded.store import EmbeddedStore
from thresher.policies.local.models import load_weights
from thresher.policies.local.options import LocalOptions
from thresher.policies.local.policy import LocalPolicy
from thresher.tasks.readers import load_tasks

FLOORS = (0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--tasks", required=True, help="a tasks JSONL of a training index")
    ap.add_argument("--index", required=True, help="its index folder")
    ap.add_argument("--limit", type=int, default=150, help="first N tasks")
    ap.add_argument("--k", type=int, default=5, help="answer length measured")
    ap.add_argument("--max-lost", type=float, default=0.0, help="gold share a floor may lose")
    ap.add_argument("--weights", default=None, help="a weights file (default: the shipped one)")
    args = ap.parse_args(argv)
    config = Config()
    weights = load_weights(args.weights) if args.weights else load_weights()
    weights = replace(weights, constants=replace(weights.constants, answer_floor=0.0))
    tasks = load_tasks(args.tasks)[: args.limit]
    scored: list[tuple[float, bool]] = []  # (score, gold) of each answered document in the top k
    gold_total = 0
    with EmbeddedStore(Path(args.index), config) as store:
        policy = LocalPolicy(LocalOptions(weights=weights), config=config)
        for task in tasks:
            docs = run_episode(task.question, store, policy, config).documents[: args.k]
            gold = set(task.gold_doc_ids)
            gold_total += len(gold)
            scored += [(d.score if d.score is not None else 1.0, d.doc_id in gold) for d in docs]
    found = sum(g for _, g in scored)
    fillers = len(scored) - found
    print(f"{len(tasks)} tasks, {gold_total} gold documents, top {args.k}: {found} found")
    print(f"  {'floor':>6} {'gold lost':>10} {'fillers out':>12} {'docs/answer':>12}")
    chosen = 0.0
    for floor in FLOORS:
        lost = sum(g for s, g in scored if s < floor)
        out = sum(not g for s, g in scored if s < floor)
        kept = sum(s >= floor for s, _ in scored)
        lost_share = lost / found if found else 0.0
        print(
            f"  {floor:6.3f} {lost_share:10.4f} {out / fillers if fillers else 0.0:12.3f}"
            f" {kept / len(tasks):12.2f}"
        )
        if lost_share <= args.max_lost:
            chosen = floor
    print(f"chosen floor (gold lost <= {args.max_lost}): {chosen}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
