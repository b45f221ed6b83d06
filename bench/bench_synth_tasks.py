"""Figures for task synthesis: time, kept/rejected per check, single-shot recall@5.

    .venv/bin/python bench/bench_synth_tasks.py --index IDX [--n 500] [--seed 0]
    .venv/bin/python bench/bench_synth_tasks.py --world-size large   # generates + indexes first

Prints figures only (never asserts on time). The machine's load average is
printed next to the timings, since other processes share the CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from thresher.config import Config
from thresher.eval.metrics import all_gold_at_k, recall_at_k
from thresher.index.backends import open_store
from thresher.tasks.generate.pipeline import synthesize_tasks


def build_world(size: str, seed: int) -> Path:
    from thresher.corpus.loaders import iter_documents
    from thresher.index.backends import ingest
    from thresher.synth.world import generate_world

    root = Path(tempfile.mkdtemp(prefix="bench-synth-"))
    generate_world(seed, size, root / "world")
    started = time.perf_counter()
    ingest(iter_documents([root / "world"]), root / "index", Config(), progress=False)
    print(f"indexed the {size} world in {time.perf_counter() - started:.1f} s")
    return root / "index"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--index", help="an index folder")
    parser.add_argument("--world-size", default="large", help="world to build when no --index")
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    index = Path(args.index) if args.index else build_world(args.world_size, args.seed)
    config = Config().override({"grep.timeout_s": 300.0})
    store = open_store(index, config)
    try:
        load_before = os.getloadavg()
        report = synthesize_tasks(store, args.n, args.seed, progress=True)
        load_after = os.getloadavg()
        doc_recall, all_gold = [], []
        started = time.perf_counter()
        for task in report.tasks:
            ranked = [h.chunk.doc_id for h in store.hybrid_search(task.question, k=5)]
            doc_recall.append(recall_at_k(ranked, task.gold_doc_ids, 5))
            all_gold.append(all_gold_at_k(ranked, task.gold_doc_ids, 5))
        single_shot_s = time.perf_counter() - started
    finally:
        store.close()
    summary = report.to_dict()
    summary["single_shot_doc_recall@5"] = round(sum(doc_recall) / max(1, len(doc_recall)), 4)
    summary["single_shot_all_gold@5"] = round(sum(all_gold) / max(1, len(all_gold)), 4)
    summary["single_shot_seconds"] = round(single_shot_s, 2)
    summary["load_average_before_after"] = [round(load_before[0], 2), round(load_after[0], 2)]
    summary["cpus"] = os.cpu_count()
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
