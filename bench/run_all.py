"""Run every benchmark of ``bench/`` in turn: quick sizes by default, ``--full`` for real ones.

Each benchmark runs as its own process (the same Python) and prints its own
figures; this script adds a header before each and a table at the end (exit
code and wall time per benchmark). Quick sizes keep the whole run to a few
minutes on a 2-core machine once the development indexes exist (the first run
builds them, which takes longer); ``--full`` runs each benchmark with its own
defaults (the sizes its figures are quoted at).

Benchmarks that read the development data (``../shared/data/dev``) are skipped,
with a note, when it is absent. The exit code is 1 when any benchmark failed
(a crash, or a non-zero exit), else 0. Timings are printed, never asserted.

Usage::

    .venv/bin/python bench/run_all.py [--full] [--only bench_harness ...]

``bench_llm_real`` (a real model on llama.cpp), ``bench_docfolders`` (a documentation
folder built from PyPI sdists) and ``bench_rl`` (SFT and GRPO with torch and TRL, which live
only in the rl virtualenv: run it as ``make rl-bench``) run only when named with ``--only``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
DEV = BENCH.parent / ".." / "shared" / "data" / "dev"


@dataclass(frozen=True)
class Bench:
    """One benchmark script: its quick flags, whether it needs the development data, and
    whether it runs only when named (``--only``: it builds or starts something that takes
    far longer than the others, such as a llama.cpp server)."""

    script: str
    quick: tuple[str, ...]
    needs_dev: bool = False
    on_request: bool = False


#: every benchmark, cheapest first; a new bench_*.py must be added here (a test checks)
BENCHES: tuple[Bench, ...] = (
    Bench("bench_harness.py", ("--docs", "80", "--repeats", "2", "--turns", "4")),
    Bench("bench_docstrings.py", ()),
    Bench(
        "bench_backends.py", ("--queries", "10", "--opens", "1", "--writes", "1"), needs_dev=True
    ),
    Bench("bench_startup_costs.py", ("--runs", "1", "--chunks", "5000", "--threads", "100")),
    Bench("bench_synth_tasks.py", ("--world-size", "small", "--n", "20")),
    Bench("bench_attacks.py", ("--size", "small")),
    Bench("bench_ingest_bounds.py", ("--size-mb", "256", "--docx-mb", "200")),
    Bench("bench_kills.py", ("--kills", "20", "--server-kills", "3")),
    Bench("bench_serve.py", ("--n", "20")),
    Bench("bench_retrieve.py", ("--rounds", "3")),
    Bench("bench_connections.py", ("--idle", "50", "--slow", "50", "--rounds", "1")),
    Bench("bench_reuse.py", ("--docs", "100", "--calls", "3")),
    Bench(
        "bench_index.py",
        ("--rounds", "1", "--doc-files", "10", "--copyrights", "5", "--paragraphs", "60"),
        needs_dev=True,
    ),
    Bench("bench_policies.py", ("--limit", "10", "--warm", "3"), needs_dev=True),
    Bench("bench_episode.py", ("--questions", "10", "--passes", "2"), needs_dev=True),
    Bench(
        "bench_episode_ab.py",
        ("--base", ".", "--questions", "10", "--rounds", "1"),
        needs_dev=True,
        on_request=True,
    ),
    Bench("bench_score_calibration.py", ("--limit", "10"), needs_dev=True),
    Bench(
        "bench_latency.py", ("--questions", "3", "--cli-runs", "1", "--skip-cold"), needs_dev=True
    ),
    Bench(
        "bench_window.py",
        ("--folder", "--doc-files", "5", "--copyrights", "2", "--paragraphs", "20"),
        needs_dev=True,
    ),
    Bench("bench_filters.py", ("--queries", "10"), needs_dev=True),
    Bench("bench_open_checks.py", ("--paragraphs", "300", "--rounds", "2"), needs_dev=True),
    Bench(
        "bench_world_chains.py",
        ("--size", "small", "--n", "12", "--cache", "/tmp/thresher-world-bench-quick"),
    ),
    Bench(
        "bench_retrieval.py",
        ("--queries", "20", "--big", "20000", "--ingest-docs", "100"),
        needs_dev=True,
    ),
    Bench(
        "bench_scale.py", ("--sizes", "10k", "--queries", "20", "--episodes", "3"), needs_dev=True
    ),
    # downloads six pinned sdists from PyPI once and indexes 843 documents (~12 min on 2
    # cores) before its first run: only when named
    Bench("bench_docfolders.py", ("--policies", "single-shot,bm25,local"), on_request=True),
    # times embedders on that documentation folder (built by bench_docfolders): only when named
    Bench("bench_embed_cost.py", ("--chunks", "32", "--queries", "10"), on_request=True),
    # needs a generated world's tasks and index (docs/local-policy.md): only when named
    Bench(
        "bench_answer_floor.py",
        ("--tasks", "world/tasks.jsonl", "--index", "world/index", "--limit", "20"),
        on_request=True,
    ),
    # needs a documentation folder and questions of the user's (docs/local-policy.md)
    Bench(
        "bench_query_noise.py",
        ("--folder", "docs", "--questions", "bench/query_noise/dev_questions.jsonl"),
        on_request=True,
    ),
    # needs an index adapted by `thresher adapt` (its tasks and fusion weights): only when named
    Bench(
        "bench_adapt_fusion.py",
        ("--index", "idx", "--weights", "shipped", "--fusion", "plain,fitted", "--limit", "20"),
        on_request=True,
    ),
    # refits adapt's order model per LightGBM seed and bag size on an adapted index's
    # tasks (`thresher adapt` first): only when named
    Bench(
        "bench_adapt_bag.py",
        ("--index", "idx", "--order-seeds", "0", "--bags", "1,2", "--limit", "30"),
        on_request=True,
    ),
    # builds llama.cpp once (~40 min on 2 cores) and runs a real model: only when named
    Bench("bench_llm_real.py", ("--tasks", "2", "--max-turns", "4"), on_request=True),
    # SFT then GRPO on a small model (torch and TRL: run it in the rl virtualenv, `make
    # rl-bench`; the main .venv has neither): only when named
    Bench("bench_rl.py", ("--seeds", "0", "--grpo-steps", "4"), on_request=True),
)


@dataclass
class Outcome:
    """How one benchmark ended: ``code`` None when it was skipped."""

    name: str
    code: int | None
    seconds: float
    note: str = ""


def run_one(script: Path, flags: Sequence[str]) -> Outcome:
    """Run ``script`` with ``flags``, its output going straight to ours; never raises."""
    started = time.perf_counter()
    try:
        code = subprocess.run([sys.executable, str(script), *flags], check=False).returncode
        note = "" if code == 0 else f"exit code {code}"
    except OSError as exc:  # the interpreter or the script could not be started
        code, note = 1, f"could not start: {exc}"
    return Outcome(script.stem, code, time.perf_counter() - started, note)


def run_all(
    benches: Sequence[Bench], *, full: bool = False, bench_dir: Path = BENCH, dev: Path = DEV
) -> list[Outcome]:
    """Run each of ``benches`` in turn (quick flags unless ``full``) and say how each ended."""
    outcomes = []
    for bench in benches:
        name = Path(bench.script).stem
        if bench.needs_dev and not dev.is_dir():
            outcomes.append(Outcome(name, None, 0.0, f"skipped: no development data at {dev}"))
            print(f"\n=== {name}: skipped (no development data at {dev})", flush=True)
            continue
        flags = () if full else bench.quick
        print(f"\n=== {name} {' '.join(flags)}".rstrip(), flush=True)
        outcomes.append(run_one(bench_dir / bench.script, flags))
    return outcomes


def main(
    argv: Sequence[str] | None = None,
    *,
    benches: Sequence[Bench] = BENCHES,
    bench_dir: Path = BENCH,
    dev: Path = DEV,
) -> int:
    """Parse the arguments, run the benchmarks, print the table; 1 when any failed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--full", action="store_true", help="each benchmark's own (real) sizes; takes hours"
    )
    names = [Path(b.script).stem for b in benches]
    parser.add_argument("--only", nargs="+", choices=names, metavar="NAME", help="these only")
    args = parser.parse_args(argv)
    chosen = [
        b for b in benches if (Path(b.script).stem in args.only if args.only else not b.on_request)
    ]
    outcomes = run_all(chosen, full=args.full, bench_dir=bench_dir, dev=dev)
    print("\n| benchmark | result | seconds |\n|---|---|---|")
    for o in outcomes:
        result = "skipped" if o.code is None else "ok" if o.code == 0 else f"FAILED ({o.note})"
        print(f"| {o.name} | {result} | {o.seconds:.0f} |")
    failed = [o.name for o in outcomes if o.code not in (None, 0)]
    if failed:
        print(f"failed: {', '.join(failed)} (their output is above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
