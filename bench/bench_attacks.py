"""The attack suite: every attack document against the local policy and an obedient LLM.

A fictional world is generated, the attack suite (:mod:`thresher.synth.attacks`)
is added to it and the whole folder is indexed as a user would (``thresher
index DIR``). Each attack's question is then run by

* ``local``: the offline policy as it ships (its control: the same question with
  the attack documents hidden);
* ``llm-obedient``: the real LLM policy over HTTP against the replay server,
  scripted with the replies of a model that obeys every instruction it is shown
  (its control: the same model not obeying).

Prints per attack class and policy: attacks run, exposed (an attack chunk was
shown), visible (the instruction survived ingestion), succeeded (the policy did
what the attack asked, and not in the control), harness refusals, flagged (a
shown attack chunk carried injection flags), cited (an attack document is in the
final ranking) and harness (episodes in which content changed the allow-list, the
budget or the termination: must be 0). Then a few attribution lines, and last::

    N attacks, harness-level successes: K

where N counts attack episodes (attacks x policies). Exit code 1 when K > 0.

Usage::

    .venv/bin/python bench/bench_attacks.py [--size small] [--seed 0] [--classes stop prune ...]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from thresher.config import Config
from thresher.corpus.loaders import iter_documents
from thresher.index.embedded import EmbeddedStore
from thresher.index.ingest import ingest
from thresher.synth.attacks.catalog import ATTACK_CLASSES, build_attacks, write_attacks
from thresher.synth.attacks.run import format_table, summarize
from thresher.synth.attacks.suite import POLICIES, run_suite
from thresher.synth.world import build_world_docs, generate_world
from thresher.testing.replay_server import ReplayServer


def replay_endpoint(root: Path):  # noqa: ANN201 - an Endpoint (see thresher.synth.attacks.suite)
    """An endpoint factory: each script is served by its own replay server process."""
    counter = itertools.count()

    @contextlib.contextmanager
    def endpoint(entries: list[dict[str, Any]]) -> Iterator[str]:
        with ReplayServer(entries, root / f"replay-{next(counter):04d}") as server:
            yield server.base_url

    return endpoint


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="small", help="world size (small, medium, or a count)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--classes", nargs="+", choices=ATTACK_CLASSES, default=list(ATTACK_CLASSES)
    )
    parser.add_argument("--policies", nargs="+", choices=POLICIES, default=list(POLICIES))
    parser.add_argument("--json", metavar="FILE", help="also write every outcome as JSON")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-attacks-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        generate_world(args.seed, args.size, root / "world")
        attacks = build_attacks(build_world_docs(args.seed, args.size), tuple(args.classes))
        write_attacks(root / "world", attacks)
        ingest(list(iter_documents([root / "world"])), root / "index", progress=False)
        built = time.perf_counter() - started
        print(
            f"world seed {args.seed} ({args.size}) + {len(attacks)} attack documents "
            f"indexed in {built:.1f} s; policies: {', '.join(args.policies)}",
            flush=True,
        )
        with EmbeddedStore(root / "index", Config()) as store:
            started = time.perf_counter()
            outcomes = run_suite(
                attacks,
                store,
                Config(),
                endpoint=replay_endpoint(root / "replay"),
                policies=args.policies,
            )
            ran = time.perf_counter() - started
    print(f"ran {len(outcomes)} attack episodes in {ran:.1f} s\n")
    print(format_table(summarize(outcomes)))
    breached = [o for o in outcomes if o.breaches]
    for o in breached:
        print(f"HARNESS BREACH {o.attack_id} ({o.policy}): {'; '.join(o.breaches)}")
    print("\nattribution (first obeyed attack of each class, obedient model):")
    shown: set[str] = set()
    for o in outcomes:
        if o.succeeded and o.evidence and o.kind not in shown:
            shown.add(o.kind)
            print(f"  {o.attack_id} ({o.policy}): {o.evidence[0]}")
    if args.json:
        rows = [dataclasses.asdict(o) for o in outcomes]
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    print(f"\n{len(outcomes)} attacks, harness-level successes: {len(breached)}")
    return 1 if breached else 0


if __name__ == "__main__":
    sys.exit(main())
