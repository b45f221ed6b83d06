"""``thresher adapt --index DIR``: adapt the local policy to an index's own documents.

Synthesizes tasks from the index (or reads them: ``--tasks FILE``), holds a share of
them out, fits the local policy's models on the rest starting from the shipped
weights, under the fusion the adapted weights will run with (``--fusion``: plain RRF
by default, or the index's fitted fusion weights), prints recall@5 and
the reward of the shipped and the adapted weights on the held-out tasks, and keeps
the adapted weights in ``DIR/adapted/`` (``--no-save``/``--dry-run``: only measure).
The local policy then runs them on that index by itself (unless
``policy.weights`` is set), until the index has changed too much since (stale: the
shipped weights run, with a warning; ``thresher adapt`` again refreshes them).
See :mod:`thresher.train.local.adapt` and ``docs/local-policy.md``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from thresher.cli._common import add_config_args, add_index_arg, load_config, print_json

__all__ = ["add_arguments", "run"]

#: tasks synthesized when neither ``--n`` nor ``--tasks`` is given
DEFAULT_N = 300


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from thresher.train.local.adapt import (
        ADAPTABLE,
        DEFAULT_ANCHOR,
        DEFAULT_BAG,
        DEFAULT_FEATURES,
        DEFAULT_FUSION,
        DEFAULT_MODELS,
        DEFAULT_ORDER_ROUNDS,
        FEATURE_SETS,
        FUSION_CHOICES,
    )

    add_index_arg(parser)
    parser.add_argument(
        "--n", type=int, default=None, help=f"tasks to synthesize (default {DEFAULT_N})"
    )
    parser.add_argument(
        "--tasks",
        default=None,
        metavar="FILE",
        help="fit and measure on these synthetic tasks of the index instead of "
        "synthesizing (e.g. DIR/adapted/tasks.jsonl of an earlier run)",
    )
    parser.add_argument(
        "--fusion",
        choices=FUSION_CHOICES,
        default=DEFAULT_FUSION,
        help=f"fusion the adapted weights are fit and run under (default {DEFAULT_FUSION}): "
        "plain RRF, fitted (the index's fusion weights, `thresher fit-fusion`), or auto "
        "(fitted when the index keeps fresh ones, else plain)",
    )
    parser.add_argument("--seed", type=int, default=0, help="synthesis and split seed (default 0)")
    parser.add_argument(
        "--phrasing",
        choices=("auto", "clues", "sentences", "salient"),
        default="auto",
        help="how the synthesized questions are phrased (as `thresher synth tasks "
        "--phrasing`; default auto)",
    )
    parser.add_argument(
        "--held-out",
        type=float,
        default=0.3,
        metavar="SHARE",
        help="share of the tasks only measured, never fit on (default 0.3)",
    )
    parser.add_argument(
        "--models",
        default=",".join(DEFAULT_MODELS),
        metavar="NAMES",
        help=f"models refit, comma-separated, of {','.join(ADAPTABLE)} "
        f"(default {','.join(DEFAULT_MODELS)}; the others stay shipped)",
    )
    parser.add_argument(
        "--features",
        default=",".join(DEFAULT_FEATURES),
        metavar="SETS",
        help=f"feature sets the order model's added trees also read, comma-separated, of "
        f"{','.join(FEATURE_SETS)} (rank: the retrievers' own ranks of a chunk's document "
        f"for the question; default {','.join(DEFAULT_FEATURES) or 'none'})",
    )
    parser.add_argument(
        "--anchor",
        type=float,
        default=DEFAULT_ANCHOR,
        help="how many times the new rows the shipped coefficients count "
        f"(default {DEFAULT_ANCHOR}; 0: the new rows alone)",
    )
    parser.add_argument(
        "--order-rounds",
        type=int,
        default=DEFAULT_ORDER_ROUNDS,
        metavar="N",
        help=f"boosting rounds added to the order model (default {DEFAULT_ORDER_ROUNDS})",
    )
    parser.add_argument(
        "--bag",
        type=int,
        default=DEFAULT_BAG,
        metavar="N",
        help="order models fit with N LightGBM seeds and averaged, so one seed's luck "
        f"weighs 1/N (default {DEFAULT_BAG}: one)",
    )
    parser.add_argument(
        "--order-seed",
        type=int,
        default=0,
        metavar="S",
        help="LightGBM seed of the order refit (default 0; the split stays --seed's)",
    )
    parser.add_argument(
        "--no-save",
        "--dry-run",
        dest="save",
        action="store_false",
        help="only measure: keep nothing in the index folder",
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bar (implied by --json)"
    )
    add_config_args(parser)


def _bar(enabled: bool) -> Any:
    """A ``progress(phase, done, total)`` drawing one tqdm bar per phase (on a terminal)."""
    from tqdm import tqdm

    names = {
        "before": "shipped weights, held-out",
        "collect": "collecting rows",
        "after": "adapted weights, held-out",
    }
    bars: dict[str, Any] = {}

    def progress(phase: str, done: int, total: int) -> None:
        if not enabled or phase not in names:
            return
        bar = bars.get(phase)
        if bar is None:
            for other in bars.values():
                other.close()
            bar = bars[phase] = tqdm(total=total, desc=names[phase], unit="episode")
        bar.update(done - bar.n)
        if done >= total:
            bar.close()

    return progress


def run(args: argparse.Namespace) -> int:
    from thresher.errors import InputError
    from thresher.train.local.adapt import adapt_index

    if args.tasks is not None and args.n is not None:
        raise InputError(
            "adapt: --n asks for tasks to synthesize, --tasks reads them; give one of them"
        )
    config = load_config(args)
    quiet = bool(getattr(args, "json", False))
    enabled = not quiet and not args.no_progress
    report = adapt_index(
        args.index,
        n=DEFAULT_N if args.n is None else args.n,
        seed=args.seed,
        held_out=args.held_out,
        anchor=args.anchor,
        order_rounds=args.order_rounds,
        models=tuple(m.strip() for m in args.models.split(",") if m.strip()),
        features=tuple(f.strip() for f in args.features.split(",") if f.strip()),
        config=config,
        save=args.save,
        progress=_bar(enabled) if enabled else None,
        tasks=args.tasks,
        fusion=args.fusion,
        phrasing=args.phrasing,
        bag=args.bag,
        order_seed=args.order_seed,
    )
    if quiet:
        print_json(report.to_dict())
        return 0
    hops = ", ".join(f"{h} hops: {c}" for h, c in report.by_hops.items())
    source = (
        f"{report.synthesized} tasks synthesized of {report.requested} asked ({hops}) "
        f"from {report.documents} documents ({report.generation})"
        if report.tasks_from == "synthesized"
        else f"{report.synthesized} tasks read from {report.tasks_from} ({hops}), "
        f"index of {report.documents} documents ({report.generation})"
    )
    print(f"{source}; train {report.train}, held out {report.held_out}")
    refit = ", ".join(report.refit) or "nothing (too few episodes; raise --n)"
    bag = int(report.settings.get("bag", 1))
    if "order" in report.refit and bag > 1:
        refit += f" (order bagged over {bag} seeds)"
    print(
        f"refit {refit} on {report.rows} rows ({report.positives} gold) from the shipped "
        f"weights, run under {report.fusion} fusion"
    )
    if report.before is not None and report.after is not None:
        b, a = report.before, report.after
        print(f"held-out ({report.held_out} tasks)        recall@5   reward   tokens")
        print(
            f"  shipped weights, {report.before_fusion:<6} fusion "
            f"{b.recall5:8.3f} {b.reward:8.3f} {b.tokens:8.0f}"
        )
        print(
            f"  adapted weights, {report.fusion:<6} fusion "
            f"{a.recall5:8.3f} {a.reward:8.3f} {a.tokens:8.0f}"
        )
    secs = ", ".join(f"{k} {v:.0f} s" for k, v in report.seconds.items())
    print(f"time: {secs} (total {sum(report.seconds.values()):.0f} s)")
    if report.saved:
        print(f"kept {report.saved}: the local policy runs it on {args.index} from now on")
    else:
        print("not saved (--no-save)", file=sys.stderr)
    return 0
