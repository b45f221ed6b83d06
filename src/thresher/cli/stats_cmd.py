"""``thresher stats --index DIR``: what an index holds."""

from __future__ import annotations

import argparse

from thresher.cli._common import add_config_args, add_index_arg, load_config, print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_index_arg(parser)
    add_config_args(parser)


def run(args: argparse.Namespace) -> int:
    from thresher.index.backends import open_store

    store = open_store(args.index, load_config(args))
    try:
        stats = store.stats()
    finally:
        store.close()
    if args.json:
        print_json(stats.to_dict())
        return 0
    for key, value in stats.to_dict().items():
        if key == "extra":
            for k, v in value.items():
                print(f"{k:>16}: {v}")
        else:
            print(f"{key:>16}: {value}")
    return 0
