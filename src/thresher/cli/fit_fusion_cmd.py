"""``thresher fit-fusion --index DIR``: fit the hybrid search's fusion weights to an index.

Synthesizes tasks from the index's own documents (or reads ``--tasks``), fits the
weighted RRF on part of them (:func:`thresher.train.fusion.fit_fusion`), prints
recall before and after on the held-out part, and keeps the weights with the index
(``DIR/fusion.json``, :mod:`thresher.index.embedded.fitted`) when they do at least as
well there as plain RRF; every hybrid search on the index then uses them. One
generation is read throughout (an ingest meanwhile does not mix in).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from thresher.cli._common import (
    add_config_args,
    add_index_arg,
    load_config,
    print_json,
    show_progress,
    warnings_on_stderr,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_index_arg(parser)
    parser.add_argument(
        "--tasks",
        metavar="FILE",
        help="synthetic tasks of this index (thresher synth tasks --k 1); default: synthesize",
    )
    parser.add_argument("--n", type=int, default=300, help="tasks to synthesize (default 300)")
    parser.add_argument("--seed", type=int, default=0, help="synthesis and split seed (default 0)")
    parser.add_argument("--k", type=int, default=5, help="documents counted per task (default 5)")
    parser.add_argument(
        "--held-out",
        type=float,
        default=0.3,
        metavar="SHARE",
        help="share of the tasks held out to report on (default 0.3)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="measure only: write nothing into the index"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_config_args(parser)


def _pct(x: float) -> str:
    return f"{100 * x:5.1f}"


def run(args: argparse.Namespace) -> int:
    from thresher.errors import InputError
    from thresher.index.embedded import fitted
    from thresher.index.embedded.store import EmbeddedStore
    from thresher.tasks.synthetic import read_synth_tasks
    from thresher.train.fusion import fit_fusion

    if "://" in args.index:
        raise InputError(
            "fit-fusion keeps its weights in an index folder; a Chroma server index "
            "fuses on the server (retrieval.rrf_k): give a folder built by thresher index"
        )
    index_dir = Path(args.index)
    config = load_config(args)
    # reading the whole corpus is one grep over every chunk: give it time
    config = config.override({"grep.timeout_s": max(config.grep.timeout_s, 300.0)})
    progress = show_progress(args)
    with (
        warnings_on_stderr("thresher", enabled=not args.json),
        EmbeddedStore(index_dir, config) as store,
    ):
        pinned = store.pinned()  # one generation throughout
        generation = str(pinned.stats().extra["generation"])
        if args.tasks:
            tasks = read_synth_tasks(args.tasks)
            made = None
        else:
            from thresher.tasks.generate.pipeline import synthesize_tasks

            # k=1: keep the tasks today's hybrid search already solves (fit_fusion's docs)
            report = synthesize_tasks(pinned, args.n, args.seed, k=1, progress=progress)
            tasks, made = report.tasks, report
        fit = fit_fusion(pinned, tasks, k=args.k, held_out=args.held_out, seed=args.seed,
                         progress=progress)  # fmt: skip
        fitted_on = fitted.fingerprint(index_dir / generation)
    saved: Path | None = None
    removed = False
    if not args.dry_run:
        if fit.holds:
            saved = fitted.save_fusion(index_dir, fit.weights, fitted_on, fit.to_dict())
        elif (index_dir / fitted.FUSION_FILE).exists():
            (index_dir / fitted.FUSION_FILE).unlink()  # superseded by this fit
            removed = True
    summary: dict[str, Any] = {
        "index": str(index_dir),
        "generation": generation,
        "tasks": len(tasks),
        "synthesized": made is not None,
        **fit.to_dict(),
        "holds": fit.holds,
        "saved": str(saved) if saved else None,
        "removed_earlier_file": removed,
    }
    if args.json:
        print_json(summary)
        return 0
    source = f"synthesized {len(tasks)} tasks" if made is not None else f"read {len(tasks)} tasks"
    print(f"{source} on {index_dir} ({generation}); fit on {fit.fit_tasks}, "
          f"held out {fit.held_out_tasks}; recall@{fit.k} over each task's hops")  # fmt: skip
    w, d = fit.weights, fit.default
    print(f"  plain RRF   bm25 {d.bm25:g} dense {d.dense:g} rrf_k {d.rrf_k}")
    print(f"  fitted      bm25 {w.bm25:g} dense {w.dense:g} rrf_k {w.rrf_k}")
    print("                fit   held-out")
    print(f"  before      {_pct(fit.fit_before)}   {_pct(fit.held_out_before)}")
    print(f"  after       {_pct(fit.fit_after)}   {_pct(fit.held_out_after)}")
    print(f"  held-out, one retriever alone: bm25 {_pct(fit.bm25_alone).strip()}, "
          f"dense {_pct(fit.dense_alone).strip()}")  # fmt: skip
    if args.dry_run:
        print("dry run: nothing written")
    elif saved is not None:
        print(f"wrote {saved}: hybrid searches on this index use these weights")
    else:
        note = "; removed the earlier fusion.json" if removed else ""
        print(f"not kept: the fitted weights did worse than plain RRF on the held-out tasks{note}")
    return 0
