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
budget or the termination, an id resolved to another document than shown, an
answer with no documents or after every tool failed: must be 0). The attack
questions are then run through the server's own ``SearchService`` and anything
that outlived its episode (a slot, a live trace, an episode thread, a file
handle) counts as a harness-level success too, and so does a connection flood
(200 idle and 200 slow-header sockets, ``bench/bench_connections.py``) during
which ``thresher serve`` or ``thresher mcp --transport http`` over the same index
leaves a request unanswered or a flood socket open (``--no-floods`` skips it).
Then a few attribution lines, and last::

    N attacks, harness-level successes: K

where N counts attack episodes (attacks x policies). Exit code 1 when K > 0.

Usage::

    .venv/bin/python bench/bench_attacks.py [--size small] [--seed 0] [--classes stop prune ...]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import itertools
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench_connections import run_floods  # bench/: on sys.path

from thresher.config import Config
from thresher.corpus.loaders import iter_documents
from thresher.index.backends import ingest
from thresher.index.embedded.store import EmbeddedStore
from thresher.synth.attacks.admit import admitted
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


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0


def serve_leaks(index: Path, questions: list[str], trace_dir: Path) -> list[str]:
    """Run ``questions`` twice through the server's own :class:`SearchService` (4 at a
    time, the rest queued, traces written to ``trace_dir``) and list what outlived its
    episode: a slot (the gate's count), a live trace, an episode not ended, file handles
    (half a handle per episode or more kept open over the second round)."""
    from thresher.serve.service import SearchService
    from thresher.serve.settings import ServeSettings

    settings = ServeSettings(
        {"attacks": str(index)}, max_queued=len(questions), trace_dir=str(trace_dir)
    )
    service = SearchService(settings)
    service.open_all()

    async def one_round() -> None:
        await asyncio.gather(*(service.search(q) for q in questions), return_exceptions=True)
        for _ in range(100):  # a slot is freed once its episode's last step has returned
            if service.gate.running == 0 and not service.open_episodes():
                return
            await asyncio.sleep(0.05)

    async def two_rounds() -> tuple[int, int]:
        # the first round warms up what lives as long as the process (worker threads and
        # their store connections, the loop's executor); a handle kept per episode would
        # then show as one more per question in the second
        await one_round()
        before = _open_fds()
        await one_round()
        return before, _open_fds()

    before, after = asyncio.run(two_rounds())
    leaks = []
    if service.gate.running or service.gate.waiting:
        leaks.append(f"slots: {service.gate.running} running, {service.gate.waiting} waiting")
    if service.traces.running():
        leaks.append(f"traces: {service.traces.running()} still live")
    if service.open_episodes():
        leaks.append(f"episodes: {service.open_episodes()} started and never ended")
    if after - before >= max(2, len(questions) // 2):
        leaks.append(f"file handles: {after - before} more open after the second round")
    service.close()
    return [f"serve ({2 * len(questions)} episodes): {line}" for line in leaks]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="small", help="world size (small, medium, or a count)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--classes", nargs="+", choices=ATTACK_CLASSES, default=list(ATTACK_CLASSES)
    )
    parser.add_argument("--policies", nargs="+", choices=POLICIES, default=list(POLICIES))
    parser.add_argument("--json", metavar="FILE", help="also write every outcome as JSON")
    parser.add_argument(
        "--no-floods", action="store_true", help="skip the connection floods against the servers"
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-attacks-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        generate_world(args.seed, args.size, root / "world")
        attacks = build_attacks(build_world_docs(args.seed, args.size), tuple(args.classes))
        write_attacks(root / "world", attacks)
        docs, refused = admitted(list(iter_documents([root / "world"])))
        ingest(docs, root / "index", progress=False)
        built = time.perf_counter() - started
        print(
            f"world seed {args.seed} ({args.size}) + {len(attacks)} attack documents "
            f"indexed in {built:.1f} s ({len(refused)} refused at ingestion: hostile ids); "
            f"policies: {', '.join(args.policies)}",
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
        questions = list(dict.fromkeys(a.question for a in attacks))
        leaks = serve_leaks(root / "index", questions, root / "traces")
        floods = None
        if not args.no_floods:
            print("connection floods against both HTTP servers over this index:", flush=True)
            floods = run_floods(root / "index", questions[0], rounds=1)
    print(f"ran {len(outcomes)} attack episodes in {ran:.1f} s\n")
    print(format_table(summarize(outcomes)))
    breached: list[Any] = [o for o in outcomes if o.breaches]
    for o in breached:
        print(f"HARNESS BREACH {o.attack_id} ({o.policy}): {'; '.join(o.breaches)}")
    print(
        f"\nserved through the server's SearchService ({len(questions)} questions, twice): "
        + (
            "; ".join(leaks)
            if leaks
            else "no slot, live trace, unended episode or file handle left"
        )
    )
    breached += leaks
    if floods is not None:
        print(
            "connection floods (serve, mcp over HTTP): "
            + ("; ".join(floods) if floods else "every request answered, every flood socket closed")
        )
        breached += floods
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
