"""``thresher eval --a CONFIG --b CONFIG TASKS...``: the paired protocol, with a report.

CONFIG: a registered policy name or a TOML/JSON file (``[policy] name = ...`` plus
any config sections). TASKS: dataset files in any supported format; without
``--index`` their pooled corpus is indexed once and cached. ``--prices FILE``: a
price table (TOML for ``.toml``, else JSON; :mod:`thresher.eval.cost`) for the
cost lines of the report. ``--workers N`` runs tasks on N threads; ``--ray
[ADDRESS]`` runs them as Ray tasks (a local instance, or a cluster), each worker
opening the index once; the outputs are the same either way.
"""

from __future__ import annotations

import argparse

from thresher.cli._common import (
    add_config_args,
    add_runner_args,
    load_config,
    make_runner,
    print_json,
    show_progress,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tasks", nargs="+", metavar="TASKS", help="task files (any format)")
    parser.add_argument("--a", required=True, metavar="CONFIG", help="policy name or config file")
    parser.add_argument("--b", required=True, metavar="CONFIG", help="policy name or config file")
    parser.add_argument(
        "--index", metavar="DIR|URL", help="index to search (default: the cached pooled index)"
    )
    parser.add_argument(
        "--pool",
        action="append",
        default=[],
        metavar="FILE",
        help="another file whose documents join the pooled corpus (repeatable)",
    )
    parser.add_argument(
        "--corpus",
        choices=("pooled", "question"),
        default="pooled",
        help="pooled (every question's paragraphs, default) or each question's own",
    )
    parser.add_argument("--cache-dir", metavar="DIR", help="where pooled indexes are cached")
    parser.add_argument("--out", default="thresher-eval", metavar="DIR", help="output folder")
    parser.add_argument(
        "--limit", type=int, metavar="N",
        help="first N tasks only (the pooled index then holds only their paragraphs)",
    )  # fmt: skip
    parser.add_argument(
        "--sample", type=int, metavar="N",
        help="N tasks drawn at random (--seed), each hop count keeping its share "
        "(the pooled index then holds only their paragraphs)",
    )  # fmt: skip
    parser.add_argument("--workers", type=int, default=1, metavar="N", help="concurrent tasks")
    add_runner_args(parser, workers=False)
    parser.add_argument("--rollouts", type=int, default=1, metavar="K", help="episodes per task")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="random seed")
    parser.add_argument(
        "--test", choices=("randomization", "bootstrap"), default="randomization",
        help="paired significance test (default randomization)",
    )  # fmt: skip
    parser.add_argument("--resamples", type=int, default=10000, metavar="N")
    parser.add_argument(
        "--prices",
        metavar="FILE",
        help="price table for the cost lines: {model or label: {prompt, completion "
        "(USD per 1M tokens), gpu_hour}} (TOML or JSON)",
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bar (implied by --json)"
    )
    add_config_args(parser)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from thresher.batch.stores import StoreRef
    from thresher.errors import ConfigError, InputError
    from thresher.eval.protocol import compare, load_run_config
    from thresher.eval.report import summary_dict, summary_markdown, write_report
    from thresher.tasks.corpus import pooled_index, task_corpora
    from thresher.tasks.readers import load_tasks
    from thresher.tasks.sampling import sample_by_hops

    if args.limit is not None and args.limit < 1:
        raise ConfigError(f"--limit must be >= 1, got {args.limit}")
    if args.limit is not None and args.sample is not None:
        raise ConfigError("give --limit N (the first N tasks) or --sample N (drawn), not both")
    prices = _read_prices(args.prices) if args.prices else None  # before any work
    base = load_config(args)
    run_a, run_b = load_run_config(args.a, base), load_run_config(args.b, base)
    tasks = [t for path in args.tasks for t in load_tasks(path)]
    seen: set[str] = set()
    for t in tasks:
        if t.task_id in seen:
            raise InputError(f"task id {t.task_id!r} appears in two task files; ids must be unique")
        seen.add(t.task_id)
    chosen: list[str] | None = None  # the tasks that run, when not all of them
    if args.sample is not None:
        tasks = sample_by_hops(tasks, args.sample, args.seed)
    elif args.limit:
        tasks = tasks[: args.limit]
    if args.sample is not None or args.limit:
        chosen = [t.task_id for t in tasks]
    progress = show_progress(args)  # bars stay off anyway when stderr is not a terminal
    index = args.index or str(
        pooled_index(
            [*args.tasks, *args.pool], args.cache_dir, base, progress=progress, tasks=chosen
        )
    )
    corpora = None
    if args.corpus == "question":
        corpora = {k: v for path in args.tasks for k, v in task_corpora(path).items()}
    out = Path(args.out)
    # workers (threads here, or Ray processes) open the index once each, by location
    location = index if "://" in index else str(Path(index).resolve())
    with make_runner(args) as runner:
        report = compare(
            tasks, StoreRef(location, base), run_a, run_b,
            rollouts=args.rollouts, workers=args.workers, seed=args.seed, out_dir=out,
            corpora=corpora, progress=progress, test=args.test, resamples=args.resamples,
            runner=runner,
        )  # fmt: skip
    report.settings["index"] = index
    report.settings["task_files"] = [str(p) for p in args.tasks]
    if prices is not None:
        report.settings["prices"], report.settings["prices_file"] = prices, args.prices
    paths = write_report(report, out)
    if args.json:
        print_json(
            {"summary": summary_dict(report), "files": {k: str(v) for k, v in paths.items()}}
        )
        return 0
    print(summary_markdown(report))
    print(f"\nreport: {paths['html']}\ntasks: {paths['tasks']}\nsummary: {paths['summary_md']}")
    return 0


def _read_prices(path: str) -> dict[str, dict[str, float]]:
    """The price table in ``path`` (TOML for ``.toml``, else JSON), checked.

    Raises:
        ConfigError: naming the file and what is wrong (unreadable, not TOML/JSON,
            or a table :func:`thresher.eval.cost.parse_prices` refuses).
    """
    import json
    import tomllib
    from pathlib import Path

    from thresher.errors import ConfigError
    from thresher.eval.cost import parse_prices

    file = Path(path)
    toml = file.suffix.lower() == ".toml"
    try:
        raw = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"price file {file}: cannot read it ({exc})") from exc
    try:
        data = tomllib.loads(raw) if toml else json.loads(raw)
    except ValueError as exc:  # TOMLDecodeError and JSONDecodeError are ValueErrors
        raise ConfigError(
            f"price file {file} is not valid {'TOML' if toml else 'JSON'}: {exc}"
        ) from exc
    table = parse_prices(data, f"price file {file}")
    return {name: price.to_dict() for name, price in table.items()}
