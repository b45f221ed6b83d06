"""``thresher synth world --seed N --out DIR [--size small|medium|large | --documents N]``."""

from __future__ import annotations

import argparse
import time

from thresher.cli._common import print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=0, help="any integer (default 0)")
    parser.add_argument(
        "--out", required=True, metavar="DIR", help="a new or empty folder (or an earlier world)"
    )
    size = parser.add_mutually_exclusive_group()
    size.add_argument(
        "--size",
        choices=("small", "medium", "large"),
        help="small ~80 documents (default), medium ~600, large ~1,900 (over 2,000 chunks)",
    )
    size.add_argument("--documents", type=int, metavar="N", help="about N documents")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def run(args: argparse.Namespace) -> int:
    from thresher.synth.world import generate_world

    size: str | int = args.documents if args.documents is not None else (args.size or "small")
    start = time.perf_counter()
    manifest = generate_world(args.seed, size, args.out)
    seconds = time.perf_counter() - start
    counts = manifest.counts
    demo = manifest.chains[0].question if manifest.chains else None
    if args.json:
        print_json(
            {
                "out": str(manifest.out_dir),
                "seed": manifest.seed,
                "size": manifest.size,
                "counts": counts,
                "demo_question": demo,
                "seconds": round(seconds, 3),
            }
        )
        return 0
    print(
        f"wrote a fictional world (seed {manifest.seed}, {manifest.size}) to {manifest.out_dir}: "
        f"{counts['documents']} documents (web {counts['web']}, filings {counts['filings']}, "
        f"patents {counts['patents']}, email {counts['email']}) and {counts['chains']} planted "
        f"chains in {seconds:.1f} s"
    )
    print(f"metadata: {manifest.out_dir}/.world/ (world.json, chains.jsonl; not ingested)")
    if demo:
        print(f"demo question: {demo}")
    return 0
