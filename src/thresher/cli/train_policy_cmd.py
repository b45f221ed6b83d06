"""``thresher train-policy --data FILES... --out DIR``: reproduce the local policy's weights.

Each ``--data`` value is one corpus group: files separated by commas are
indexed together (the pooled setting), e.g. both HotpotQA files, or the
MuSiQue questions file and its corpus file. Indexes are built once into
``--index-cache`` (default ``DIR/indexes``) and reused. The weights are
written to ``DIR/local_policy.json``; load them with
``thresher search --policy local --set policy.weights=PATH`` and
``LocalPolicy(LocalOptions(weights=PATH))``, or copy
them over ``src/thresher/policies/local/weights/local_policy.json`` to ship them.

``--tasks-index FILE:DIR`` adds a task file whose documents are already
indexed in ``DIR`` (e.g. synthetic tasks and their world's index; repeatable).
With ``--curriculum N`` those tasks are drawn N times by the hop curriculum
(2 -> 4 hops, :func:`~thresher.train.local.trainer.curriculum_tasks`); the
``--data`` corpora are used as they are.

``--tune FILE:DIR`` (repeatable: the tasks of several task files, e.g. of
several generated worlds, are tuned on together; the first ``--tune-limit`` of
each file) then tunes the policy's controls (when to stop hopping, chunks shown
per follow-up search) by the episode reward on those tasks
(:mod:`thresher.train.local.tune`; ``--tune-controls none`` skips it), then
the constants ``--tune-constants`` names (default: the bridge, clue and count
constants of :data:`~thresher.train.local.tune_constants.DEFAULT_TUNED`;
``none`` skips them) by a coordinate search on the same tasks
(:mod:`thresher.train.local.tune_constants`), and saves both with the weights;
the constants' section names every task file and count they were tuned on.
``--tune-margin`` is the paired standard errors a step must win by;
``--tune-workers N`` runs each setting's episodes in N processes (the same
outcomes, :mod:`thresher.train.local.tune_runs`). ``--controls`` are set
before the tuning (it runs under them) and again after (an explicit control
wins over a tuned one).

``--weights FILE`` starts from an existing weights file instead of collecting
and fitting (no ``--data`` / ``--tasks-index``): only ``--controls`` and the
``--tune`` searches run on top of its models, e.g. to tune the constants of the
shipped weights without refitting them.

Progress (questions loaded, training rounds, the tuning bar and grid) goes to
stderr; ``--json`` silences it and prints only the result on stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any

from thresher.cli._common import add_config_args, live_view, load_config, print_json, show_progress

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data",
        action="append",
        default=[],
        metavar="FILE[,FILE...]",
        help="task files of one pooled corpus, comma-separated (repeat for more corpora)",
    )
    parser.add_argument(
        "--tasks-index",
        action="append",
        default=[],
        metavar="FILE:DIR",
        help="a task file and the existing index of its documents (repeatable)",
    )
    parser.add_argument(
        "--curriculum",
        type=int,
        default=0,
        metavar="N",
        help="draw the --tasks-index tasks N times by the hop curriculum (default: off)",
    )
    parser.add_argument(
        "--weights",
        metavar="FILE",
        help="start from this weights file: no collection or fit, only --controls and --tune",
    )
    parser.add_argument(
        "--tune",
        action="append",
        default=[],
        metavar="FILE:DIR",
        help="tune controls and constants by reward on these tasks (e.g. synthetic ones; "
        "repeatable: the files' tasks together)",
    )
    parser.add_argument(
        "--tune-limit",
        type=int,
        default=200,
        metavar="N",
        help="tasks of each --tune file used (the first N)",
    )
    parser.add_argument(
        "--tune-controls",
        choices=["grid", "none"],
        default="grid",
        help="'grid': tune stop_at and hop_k by reward first (default); 'none': keep the controls",
    )
    parser.add_argument(
        "--tune-constants",
        default="default",
        metavar="NAMES",
        help="constants --tune sets by coordinate search (comma-separated; 'default': the "
        "bridge, clue and count constants; 'none': only the controls)",
    )
    parser.add_argument(
        "--tune-margin",
        type=float,
        default=1.0,
        metavar="SE",
        help="paired standard errors of reward a tuning step must win by (default 1.0)",
    )
    parser.add_argument(
        "--tune-workers",
        type=int,
        default=1,
        metavar="N",
        help="processes running the tuning episodes (default 1: this one)",
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="where to write the weights")
    parser.add_argument("--index-cache", metavar="DIR", help="index folder (default DIR/indexes)")
    parser.add_argument("--rounds", type=int, default=1, help="collect-and-fit rounds (default 1)")
    parser.add_argument(
        "--kind", choices=["logistic", "mlp"], default="logistic", help="chunk model kind"
    )
    parser.add_argument(
        "--controls",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a policy control in the weights (stop_at, hop_k, bridges_per_hop, max_hops); "
        "applied after --tune (repeatable)",
    )
    add_config_args(parser)


def with_controls(weights: Any, items: list[str]) -> Any:
    """``weights`` with the controls ``KEY=VALUE`` set; raises ``InputError`` naming a bad one."""
    from dataclasses import replace

    from thresher.errors import InputError
    from thresher.policies.local.policy import DEFAULT_CONTROLS

    controls = dict(weights.controls)
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or key not in DEFAULT_CONTROLS:
            raise InputError(
                f"--controls {item!r}: expected KEY=VALUE with KEY one of "
                f"{', '.join(DEFAULT_CONTROLS)}"
            )
        kind = type(DEFAULT_CONTROLS[key])
        try:
            controls[key] = kind(value)
        except ValueError as exc:
            raise InputError(f"--controls {item!r}: {key} takes a {kind.__name__}") from exc
    meta = {**weights.meta, "controls_set": sorted(items)}
    return replace(weights, controls=controls, meta=meta)


def collection_options(items: list[str]) -> dict[str, Any]:
    """The ``--controls`` that shape what collection sees (hops, follow-ups per hop,
    chunks shown); ``stop_at`` is left out: collection always runs every hop."""
    from thresher.policies.local.policy import DEFAULT_CONTROLS

    out: dict[str, Any] = {}
    for item in items:
        key, _, value = item.partition("=")
        if key in DEFAULT_CONTROLS and key != "stop_at":
            out[key] = type(DEFAULT_CONTROLS[key])(value)
    return out


def split_pair(value: str) -> tuple[Path, Path]:
    """``FILE:DIR`` -> (file, index dir); raises ``InputError`` naming the value."""
    from thresher.errors import InputError

    file, sep, index = value.rpartition(":")
    if not sep or not file or not index:
        raise InputError(f"--tasks-index {value!r}: expected FILE:DIR, e.g. tasks.jsonl:idx")
    if not Path(index).is_dir():
        raise InputError(f"--tasks-index {value!r}: no index folder {index}; build it first")
    return Path(file), Path(index)


def constant_names(value: str) -> tuple[str, ...]:
    """``--tune-constants``: ``default``, ``none`` or comma-separated constant names."""
    from thresher.train.local.tune_constants import DEFAULT_TUNED

    if value.strip() == "default":
        return DEFAULT_TUNED
    if value.strip() in ("", "none"):
        return ()
    return tuple(n.strip() for n in value.split(",") if n.strip())


def tune_sets(pairs: list[str], limit: int) -> list[Any]:
    """The :class:`~thresher.train.local.tune_runs.TuneSet` of each ``FILE:DIR`` of
    ``--tune``: the first ``limit`` tasks of each file."""
    from thresher.train.local.data import group_tasks
    from thresher.train.local.tune_runs import TuneSet

    out = []
    for pair in pairs:
        file, index = split_pair(pair)
        out.append(TuneSet(file, index, tuple(group_tasks([file])[:limit])))
    return out


def tune(
    pairs: list[str],
    limit: int,
    weights: Any,
    config: Any,
    *,
    quiet: bool = False,
    controls: bool = True,
    constants: tuple[str, ...] = (),
    margin: float = 1.0,
    workers: int = 1,
) -> Any:
    """``weights`` with controls tuned by reward on the tasks of ``pairs`` (FILE:DIR each;
    unless not ``controls``), then the ``constants`` named by a coordinate search on the
    same tasks.

    Shows a progress bar (on a terminal) and prints the tuning grid and the
    constants' trials on stderr unless ``quiet``.
    """
    from contextlib import ExitStack
    from dataclasses import replace

    from tqdm import tqdm

    from thresher.index.backends import open_store
    from thresher.train.local.tune import tune_controls
    from thresher.train.local.tune_constants import tune_constants
    from thresher.train.local.tune_runs import Episodes, LocalEpisodes, WorkerEpisodes, describe

    sets = tune_sets(pairs, limit)
    source = describe(sets)
    files = [s.label for s in sets]
    bar = tqdm(desc="tuning controls", unit="episode", disable=True if quiet else None)
    with ExitStack() as stack:
        episodes: Episodes
        if workers > 1:
            episodes = stack.enter_context(WorkerEpisodes(sets, config, workers=workers))
        else:
            stores = [open_store(s.index, config) for s in sets]
            for store in stores:
                stack.callback(store.close)
            groups = [(s.tasks, store) for s, store in zip(sets, stores, strict=True)]
            episodes = LocalEpisodes(groups, config)
        stack.enter_context(bar)

        def step(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        if controls:
            report = tune_controls(episodes, weights, margin=margin, progress=step)
            for line in [] if quiet else report.lines():
                print(line, file=sys.stderr)
            meta = {**weights.meta, "tuned": report.to_dict() | {"tasks_files": files}}
            chosen = {**weights.controls, **report.chosen.controls}
            weights = replace(weights, controls=chosen, meta=meta)
        if constants:
            bar.reset()
            bar.set_description("tuning constants")
            found = tune_constants(
                episodes, weights, names=constants, source=source, margin=margin, progress=step
            )
            for line in [] if quiet else found.lines():
                print(line, file=sys.stderr)
            meta = {**weights.meta, "tuned_constants": found.to_dict()}
            weights = replace(weights, constants=found.constants, meta=meta)
    return weights


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from thresher.errors import InputError

    if args.weights and (args.data or args.tasks_index):
        raise InputError(
            "train-policy --weights FILE tunes an existing file: drop --data/--tasks-index "
            "(or drop --weights to collect and fit new models)"
        )
    if not args.weights and not args.data and not args.tasks_index:
        raise InputError(
            "train-policy needs --data FILE[,FILE...], --tasks-index FILE:DIR, "
            "or --weights FILE to tune"
        )
    if args.weights and not (args.tune or args.controls):
        raise InputError("train-policy --weights FILE: give --tune FILE:DIR or --controls")

    config = load_config(args)
    say = (lambda line: print(line, file=sys.stderr, flush=True)) if live_view(args) else None
    out = Path(args.out)
    if args.weights:
        from thresher.policies.local.models import load_weights

        start = load_weights(args.weights)
        weights = replace(start, meta={**start.meta, "tuned_from": Path(args.weights).name})
    else:
        weights = fit(args, config, say)
    if args.controls:  # the tuning runs under them
        weights = with_controls(weights, args.controls)
    if args.tune:  # after closing: the tuning index may be one of the training indexes
        weights = tune(
            args.tune,
            args.tune_limit,
            weights,
            config,
            quiet=say is None,
            controls=args.tune_controls == "grid",
            constants=constant_names(args.tune_constants),
            margin=args.tune_margin,
            workers=args.tune_workers,
        )
    if args.controls:  # an explicit control wins over a tuned one
        weights = with_controls(weights, args.controls)
    path = weights.save(out / "local_policy.json")
    if args.json:
        print_json({"weights": str(path), "meta": weights.meta})
    else:
        print(f"wrote {path} ({weights.meta.get('rows')} rows, {weights.meta.get('kind')})")
    return 0


def fit(args: argparse.Namespace, config: Any, say: Any) -> Any:
    """Collect rows over the ``--data`` and ``--tasks-index`` tasks and fit the models."""
    from thresher.index.backends import open_store
    from thresher.train.local.data import ensure_index, group_tasks, index_dir_for
    from thresher.train.local.trainer import curriculum_tasks, train

    out = Path(args.out)
    cache = Path(args.index_cache) if args.index_cache else out / "indexes"
    corpora = []
    files_used: list[str] = []
    with contextlib.ExitStack() as opened:  # every store opened is closed on the way out
        for group in args.data:
            files = [f.strip() for f in group.split(",") if f.strip()]
            files_used.extend(Path(f).name for f in files)
            tasks = group_tasks(files)
            index = ensure_index(
                files, index_dir_for(files, cache), config, progress=show_progress(args)
            )
            store = open_store(index, config)
            opened.callback(store.close)
            corpora.append((tasks, store))
            if say:
                say(f"{len(tasks)} questions from {', '.join(files)}")
        for pair in args.tasks_index:
            file, index = split_pair(pair)
            files_used.append(file.name)
            tasks = group_tasks([file])
            if args.curriculum:
                tasks = curriculum_tasks(tasks, args.curriculum)
            store = open_store(index, config)
            opened.callback(store.close)
            corpora.append((tasks, store))
            if say:
                say(f"{len(tasks)} questions from {file} (index {index})")
        weights = train(
            corpora,
            rounds=args.rounds,
            kind=args.kind,
            config=config,
            policy_options=collection_options(args.controls),
            meta={
                "data": files_used,
                "questions": sum(len(t) for t, _ in corpora),
                **({"curriculum": args.curriculum} if args.curriculum else {}),
            },
            progress=say,
        )
    return weights
