"""Latency as users meet it (issue 27), before and after, side by side.

Each figure is measured with the baseline (``git archive BASE`` into a temporary
folder) and with this tree, each in its own processes with its own ``PYTHONPATH``
(as ``bench_index.py`` does), on the pooled HotpotQA dev index (built into
``--cache`` when absent, as ``bench_serve.py`` does):

- CLI ``thresher search Q --index DIR --quiet`` wall time, warm page cache
  (``--cli-runs`` after one untimed run, the two sides interleaved, with the machine's
  load average after them) and cold: before each cold run the pages
  of the index, of its read copies and of the Python packages a search loads
  (thresher, chromadb, onnxruntime, bm25s, scipy, lightgbm, the embedder's model
  files) are dropped from the page cache with ``posix_fadvise(DONTNEED)`` (no root
  needed; other files stay cached);
- ``thresher.search(q, index=PATH)``: the first call in a fresh process (after
  ``import thresher``) and the next calls (p50 over ``--questions``);
- the same with an open Store (``open_store`` then ``thresher.search(q, index=store)``),
  interleaved with the calls above (distinct questions), and the acceptance ratio
  ``search(index=PATH)`` next-call p50 / open-Store p50 (issue 27: within 1.5x);
- where a cold command's time goes: the CPU seconds (every thread) of each phase of
  a first search in a fresh process (imports, token counter, open, first embed, first
  dense search, first chunk read, first and second episode), and whether it imported
  chromadb;
- ``thresher mcp --index DIR`` (stdio): time until it answers ``initialize``, then
  its first ``search`` tool call;
- open time by index size: a fresh process imports the libraries, then times
  ``open_store`` (median of 3, after one untimed open: for this tree that first
  open makes the generation's shared read copy if its commit did not) and its
  first hybrid search; on the dev index and on the synthetic scale indexes of
  ``bench_scale.py`` found in ``--scale-cache`` (10k / 100k / 1M when built).

Usage::

    .venv/bin/python bench/bench_latency.py [--base 66813fa] [--questions 20]
        [--cli-runs 3] [--cache /tmp/thresher-dev-index] [--skip-cold] [--open-only]
        [--cli-only]

Children run as users run them, with bytecode caches (``PYTHONDONTWRITEBYTECODE``
is dropped from their environment). Prints a table; asserts nothing. The machine's
load matters: run it alone, and read the CPU seconds beside each wall time when
other work shares the cores.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
DEV = (HERE / ".." / "shared" / "data" / "dev").resolve()
HOTPOT = ["hotpotqa_rpt_dev.jsonl", "hotpotqa_rpt_train.jsonl"]
SCALE_CACHE = Path.home() / ".cache" / "thresher" / "bench-retrieval"
PACKAGES = ["chromadb", "chromadb_rust_bindings", "onnxruntime", "bm25s", "scipy", "lightgbm",
            "tokenizers", "bpe_openai", "numpy", "opentelemetry", "grpc", "pydantic"]  # fmt: skip


# -- child processes (run with one tree's PYTHONPATH) ---------------------------------
def child_api(index: str, questions: list[str]) -> dict:
    """First and next ``thresher.search(index=PATH)`` calls, interleaved with calls on an
    open Store (distinct questions)."""
    started = time.perf_counter()
    import thresher
    from thresher.config import Config
    from thresher.index.backends import open_store

    out: dict = {"import_s": time.perf_counter() - started}
    first, rest = questions[0], questions[1:]
    out["first_s"] = _timed(lambda: thresher.search(first, index=index))
    on_path, on_store = rest[0::2], rest[1::2]
    opened = time.perf_counter()
    store = open_store(index, Config())
    out["store_open_s"] = time.perf_counter() - opened
    out["store_first_s"] = _timed(lambda: thresher.search(on_store[0], index=store))
    out["next_s"], out["store_next_s"] = [], []
    for a, b in zip(on_path[1:], on_store[1:], strict=False):
        out["next_s"].append(_timed(lambda a=a: thresher.search(a, index=index)))
        out["store_next_s"].append(_timed(lambda b=b: thresher.search(b, index=store)))
    store.close()
    out["cpu_first_s"], out["cpu_store_first_s"] = CPU[0], CPU[1]
    out["cpu_next_s"], out["cpu_store_next_s"] = CPU[2::2], CPU[3::2]
    return out


def child_open(index: str) -> dict:
    """Open time of ``index`` in this fresh process (libraries imported first)."""
    started = time.perf_counter()
    import bm25s  # noqa: F401
    import chromadb  # noqa: F401
    import chromadb.api.rust  # noqa: F401
    import onnxruntime  # noqa: F401

    from thresher.config import Config
    from thresher.index.backends import open_store

    imported = time.perf_counter() - started
    started, cpu = time.perf_counter(), time.process_time()
    store = open_store(index, Config())
    opened, cpu = time.perf_counter() - started, time.process_time() - cpu
    first = _timed(lambda: store.hybrid_search("who founded the university", k=50))
    store.close()
    return {"import_s": imported, "open_s": opened, "open_cpu_s": cpu, "first_search_s": first}


CPU: list[float] = []  # the CPU seconds (every thread) of each _timed call, in order


def child_phases(index: str, question: str) -> dict:
    """Where a cold command's time goes: CPU seconds (every thread) of each phase of a
    first search in a fresh process, in the order a ``thresher search`` meets them."""
    out: dict[str, float] = {}
    mark = time.process_time()

    def phase(name: str) -> None:
        nonlocal mark
        now = time.process_time()
        out[name] = now - mark
        mark = now

    import thresher
    from thresher.config import Config
    from thresher.index.backends import open_store
    from thresher.tokens import get_counter

    phase("import thresher (and numpy)")
    get_counter()
    phase("token counter (o200k)")
    store = open_store(index, Config())
    phase("open the index (chromadb's import and client, where it opens)")
    store.embedder.embed([question])
    phase("query embedder: first embed (onnxruntime, ONNX session, tokenizer)")
    store.dense_search(question, k=50)
    phase("first dense search (exact scan of saved vectors, or HNSW)")
    store.bm25_search(question, k=50)
    phase("BM25 search and the first read of chunks")
    thresher.search(question, index=store)
    phase("first episode (policy weights, lightgbm, the rest)")
    thresher.search(question + " ", index=store)
    phase("second episode")
    store.close()
    out["chromadb imported (1 yes, 0 no)"] = float("chromadb" in sys.modules)
    return out


def _timed(fn) -> float:
    """Wall seconds of ``fn()``; its CPU seconds go to :data:`CPU`."""
    started, cpu = time.perf_counter(), time.process_time()
    fn()
    CPU.append(time.process_time() - cpu)
    return time.perf_counter() - started


# -- the parent -----------------------------------------------------------------------
def checkout(commit: str, into: Path) -> Path:
    """``git archive`` of ``commit`` unpacked into ``into``; returns its ``src`` folder."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(HERE), "archive", commit, "src"],
                             capture_output=True, check=True).stdout  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def _env(src: Path, copies: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(src), "THRESHER_READ_COPIES": str(copies),
           "THRESHER_REUSE_INDEX": "1"}  # fmt: skip
    # as users run it: with bytecode caches (else every command compiles thresher's
    # sources, ~0.3 CPU s, when the shell running the bench forbids writing them)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_child(src: Path, copies: Path, *args: str) -> dict:
    done = subprocess.run([sys.executable, __file__, "--child", *args], env=_env(src, copies),
                          capture_output=True, text=True, timeout=3600)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"child {args[:2]} failed ({src}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def evict(paths: list[Path]) -> None:
    """Drop these files' pages from the page cache (``posix_fadvise DONTNEED``)."""
    for root in paths:
        if root.is_file():
            _evict_file(root)
            continue
        for folder, _dirs, files in os.walk(root):
            for name in files:
                _evict_file(Path(folder) / name)


def _evict_file(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd) if os.access(path, os.W_OK) else None
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    except OSError:
        pass
    finally:
        os.close(fd)


def _cold_paths(src: Path, index: Path, copies: Path) -> list[Path]:
    site = Path(next(p for p in sys.path if p.endswith("site-packages")))
    models = Path.home() / ".cache" / "thresher" / "models"
    return [index, copies, src, models, *[site / p for p in PACKAGES]]


def cli_search(src: Path, copies: Path, index: Path, question: str) -> tuple[float, float]:
    """Wall and CPU (user + system, every thread) seconds of one ``thresher search``."""
    argv = [sys.executable, "-m", "thresher.cli.main", "search", question, "--index", str(index),
            "--quiet"]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, env=_env(src, copies), capture_output=True, text=True)
    took = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"thresher search failed ({src}):\n{done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return took, cpu


def mcp_figures(src: Path, copies: Path, index: Path, question: str) -> dict:
    """Seconds until ``thresher mcp`` answers ``initialize``, then its first search."""
    argv = [sys.executable, "-m", "thresher.cli.main", "mcp", "--index", str(index)]
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=_env(src, copies), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict) -> None:
        proc.stdin.write(json.dumps(message) + "\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    def answer(wanted: int) -> dict:
        while True:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if not line:
                raise SystemExit(f"thresher mcp ended early ({src})")
            message = json.loads(line)
            if message.get("id") == wanted:
                return message

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                         "clientInfo": {"name": "bench", "version": "0"}}})  # fmt: skip
        answer(1)
        ready = time.perf_counter() - started
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        asked = time.perf_counter()
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "search", "arguments": {"question": question}}})  # fmt: skip
        reply = answer(2)
        first = time.perf_counter() - asked
        if "error" in reply or reply.get("result", {}).get("isError"):
            raise SystemExit(f"thresher mcp search failed: {str(reply)[:500]}")
    finally:
        proc.stdin.close()
        proc.terminate()
        proc.wait(timeout=30)
    return {"mcp_ready_s": ready, "mcp_first_search_s": first}


def _list(values: list[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def _cli(runs: list[tuple[float, float]]) -> str:
    walls, cpus = [w for w, _ in runs], [c for _, c in runs]
    return f"{p50(walls):.2f}  (runs {_list(walls)}; CPU p50 {p50(cpus):.2f})"


def p50(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="66813fa", help="baseline commit")
    parser.add_argument("--questions", type=int, default=20, help="questions per API figure")
    parser.add_argument("--cli-runs", type=int, default=3, help="timed CLI runs (warm)")
    parser.add_argument("--cold-runs", type=int, default=2, help="timed CLI runs (cold)")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/thresher-dev-index"))
    parser.add_argument("--scale-cache", type=Path, default=SCALE_CACHE)
    parser.add_argument("--skip-cold", action="store_true", help="no cold CLI runs")
    parser.add_argument("--open-only", action="store_true", help="only the open times by size")
    parser.add_argument("--cli-only", action="store_true", help="only the CLI search rows")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, index, *rest = args.child
        if kind == "phases":
            result = child_phases(index, rest[0])
        elif kind == "api":
            result = child_api(index, json.loads(rest[0]))
        else:
            result = child_open(index)
        print(json.dumps(result))
        return
    if not DEV.is_dir():
        raise SystemExit(f"no development data at {DEV}")
    from thresher.config import Config
    from thresher.tasks.corpus import pooled_index
    from thresher.tasks.readers import load_tasks

    index = Path(pooled_index([DEV / f for f in HOTPOT], args.cache / "hotpotqa", Config(),
                              progress=False))  # fmt: skip
    questions = [t.question for t in load_tasks(DEV / HOTPOT[0])][: 2 * args.questions + 3]
    sizes = [("dev HotpotQA", index)] + [
        (f"{n // 1000}k", args.scale_cache / f"noisy{n}")
        for n in (10_000, 100_000, 300_000, 1_000_000)
        if (args.scale_cache / f"noisy{n}" / "CURRENT").is_file()
    ]
    print(f"latency bench  (index {index}; base {args.base})", flush=True)
    rows: dict[str, dict[str, str]] = {}

    def put(label: str, side: str, value: str) -> None:
        rows.setdefault(label, {})[side] = value
        print(f"  {side:4s} {label:58s} {value}", flush=True)

    with tempfile.TemporaryDirectory(prefix="bench-latency-") as tmp:
        root = Path(tmp)
        sides = {"base": checkout(args.base, root / "base"), "new": HERE / "src"}
        copies = {side: root / f"copies-{side}" for side in sides}
        rest = {} if args.cli_only else sides  # the sides of the rows after the CLI's
        # each figure is taken for both sides in a row, so both see the same load
        for side, src in sides.items():  # untimed: page cache, the read copy
            if args.open_only:
                break
            cli_search(src, copies[side], index, questions[0])
        warm: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
        for q in [] if args.open_only else questions[1 : 1 + args.cli_runs]:
            for side, src in sides.items():  # interleaved: both sides meet the same load
                warm[side].append(cli_search(src, copies[side], index, q))
        for side in [] if args.open_only else sides:
            put("CLI search, warm (p50 s)", side, _cli(warm[side]))
        for side in [] if args.open_only else sides:
            load = f"{os.getloadavg()[0]:.2f}"
            put("machine load (1-minute average, after the warm runs)", side, load)
        for side, src in sides.items():
            if args.skip_cold or args.open_only:
                break
            cold = []
            for q in questions[-args.cold_runs :]:
                evict(_cold_paths(src, index, copies[side]))
                cold.append(cli_search(src, copies[side], index, q))
            put("CLI search, cold page cache (p50 s)", side, _cli(cold))
        for side, src in rest.items():
            if args.open_only:
                break
            for name, cpu in run_child(
                src, copies[side], "phases", str(index), questions[0]
            ).items():
                put(f"cold command, CPU s: {name}", side, f"{cpu:.2f}")
        asked = json.dumps(questions[: 2 * args.questions + 1])
        for side, src in rest.items():
            if args.open_only:
                break
            api = run_child(src, copies[side], "api", str(index), asked)
            put("import thresher (s)", side, f"{api['import_s']:.2f}")
            put("thresher.search(index=PATH) first call (s)", side,
                f"{api['first_s']:.2f}  (CPU {api['cpu_first_s']:.2f})")  # fmt: skip
            put("thresher.search(index=PATH) next calls p50 (s)", side,
                f"{p50(api['next_s']):.3f}  (CPU {p50(api['cpu_next_s']):.3f})")  # fmt: skip
            put("open_store in that process (s)", side, f"{api['store_open_s']:.2f}")
            put("thresher.search(index=store) first call (s)", side,
                f"{api['store_first_s']:.2f}  (CPU {api['cpu_store_first_s']:.2f})")  # fmt: skip
            put("thresher.search(index=store) next calls p50 (s)", side,
                f"{p50(api['store_next_s']):.3f}  (CPU {p50(api['cpu_store_next_s']):.3f})")  # fmt: skip
            ratio = p50(api["next_s"]) / p50(api["store_next_s"])
            cpu_ratio = p50(api["cpu_next_s"]) / p50(api["cpu_store_next_s"])
            put("ratio PATH / open Store, next-call p50 (goal <= 1.5)", side,
                f"{ratio:.2f}x  (CPU {cpu_ratio:.2f}x)")  # fmt: skip
        for side, src in rest.items():
            if args.open_only:
                break
            mcp = mcp_figures(src, copies[side], index, questions[-1])
            put("thresher mcp: start until initialize answered (s)", side,
                f"{mcp['mcp_ready_s']:.2f}")  # fmt: skip
            put("thresher mcp: first search (s)", side, f"{mcp['mcp_first_search_s']:.2f}")
        for name, where in [] if args.cli_only else sizes:
            for side, src in sides.items():
                run_child(src, copies[side], "open", str(where))  # untimed: makes the read copy
            runs: dict[str, list[dict]] = {side: [] for side in sides}
            for _ in range(3):
                for side, src in sides.items():
                    runs[side].append(run_child(src, copies[side], "open", str(where)))
            for side, opens in runs.items():
                put(f"open {name} (median of 3, s)", side,
                    f"{p50([o['open_s'] for o in opens]):.3f}  (CPU "
                    f"{p50([o['open_cpu_s'] for o in opens]):.3f}; first search "
                    f"{p50([o['first_search_s'] for o in opens]):.2f})")  # fmt: skip
    print("\n| figure | base | new |\n|---|---|---|")
    for label, values in rows.items():
        print(f"| {label} | {values.get('base', '')} | {values.get('new', '')} |")


if __name__ == "__main__":
    main()
