"""``thresher train-policy --data FILES... --out DIR``: reproduce the local policy's weights.

Each ``--data`` value is one corpus group: files separated by commas are
indexed together (the pooled setting), e.g. both HotpotQA files, or the
MuSiQue questions file and its corpus file. Indexes are built once into
``--index-cache`` (default ``DIR/indexes``) and reused. The weights are
written to ``DIR/local_policy.json``; load them with
``thresher search --policy local`` and ``LocalPolicy(weights=PATH)``, or copy
them over ``src/thresher/policies/local/weights/local_policy.json`` to ship them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from thresher.cli._common import add_config_args, load_config, print_json

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data",
        action="append",
        required=True,
        metavar="FILE[,FILE...]",
        help="task files of one pooled corpus, comma-separated (repeat for more corpora)",
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="where to write the weights")
    parser.add_argument("--index-cache", metavar="DIR", help="index folder (default DIR/indexes)")
    parser.add_argument("--rounds", type=int, default=1, help="collect-and-fit rounds (default 1)")
    parser.add_argument(
        "--kind", choices=["logistic", "mlp"], default="logistic", help="chunk model kind"
    )
    add_config_args(parser)


def run(args: argparse.Namespace) -> int:
    from thresher.index.embedded import EmbeddedStore
    from thresher.policies.local.data import ensure_index, group_tasks, index_dir_for
    from thresher.policies.local.train import train

    config = load_config(args)
    out = Path(args.out)
    cache = Path(args.index_cache) if args.index_cache else out / "indexes"
    corpora = []
    stores = []
    files_used: list[str] = []
    try:
        for group in args.data:
            files = [f.strip() for f in group.split(",") if f.strip()]
            files_used.extend(Path(f).name for f in files)
            tasks = group_tasks(files)
            index = ensure_index(files, index_dir_for(files, cache), config)
            store = EmbeddedStore(index, config)
            stores.append(store)
            corpora.append((tasks, store))
            print(f"{len(tasks)} questions from {', '.join(files)}", file=sys.stderr)
        weights = train(
            corpora,
            rounds=args.rounds,
            kind=args.kind,
            config=config,
            meta={"data": files_used, "questions": sum(len(t) for t, _ in corpora)},
            progress=lambda line: print(line, file=sys.stderr, flush=True),
        )
    finally:
        for store in stores:
            store.close()
    path = weights.save(out / "local_policy.json")
    if args.json:
        print_json({"weights": str(path), "meta": weights.meta})
    else:
        print(f"wrote {path} ({weights.meta.get('rows')} rows, {weights.meta.get('kind')})")
    return 0
