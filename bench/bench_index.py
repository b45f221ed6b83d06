"""Index figures: ingest throughput of this tree against a baseline commit, side by side.

Builds a real multi-format folder from files on the machine, then ingests it
with the baseline (``git archive BASE`` into a temporary folder) and with this
tree, each in its own process with its own ``PYTHONPATH``, alternating
(base, new, base, new, ...) so both see the same load. The folder:

* the first ``--doc-files`` ``.txt`` / ``.md`` / ``.html`` files under
  ``/usr/share/doc`` (sorted paths), copied with their folder;
* the first ``--copyrights`` ``/usr/share/doc/*/copyright`` files, copied as
  ``copyright/<package>.txt`` (long plain text: many full-size chunks);
* a ``paragraphs.jsonl`` of the first ``--paragraphs`` distinct paragraphs of the
  HotpotQA dev file (``../shared/data/dev/hotpotqa_rpt_dev.jsonl``) as records.

Each process warms the embedder, then times ``ingest`` (read, chunk, embed, write,
commit) into a fresh index; the figures are chunks/s and documents/s (wall time),
and documents per CPU second of the process (all its threads: steadier than wall
time on a loaded machine). It also prints how many chunks exceed the window of
this tree's embedder.

Usage::

    .venv/bin/python bench/bench_index.py [--base 389fb84] [--rounds 2]
        [--doc-files 150] [--copyrights 40] [--paragraphs 600] [--search]
        [--set KEY=VALUE ...]

``--set`` overrides a config setting for this tree's ingests only (the
baseline runs its defaults), e.g. ``retrieval.embedder=minilm-int8`` to time
this tree with the packaged model's vectors (the default is ``minilm-int8-dq-w128``).

``--search`` then times each search over a fresh index of the folder (this tree).
Prints figures; asserts nothing. The machine's load matters: compare within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
DEV = HERE / ".." / "shared" / "data" / "dev"
DOC = Path("/usr/share/doc")

_WORKER = """
import json, sys, time
from thresher.config import Config
from thresher.corpus import iter_documents
from thresher.index.backends import ingest
from thresher.index.embed.embedder import get_embedder
folder, index = sys.argv[1], sys.argv[2]
config = Config().override(dict(kv.split("=", 1) for kv in sys.argv[3:]))
get_embedder(config.retrieval.embedder).embed(["warm up"])
started, cpu = time.perf_counter(), time.process_time()
report = ingest(iter_documents([folder]), index, config, progress=False)
seconds = time.perf_counter() - started
print(json.dumps({"seconds": seconds, "cpu": time.process_time() - cpu,
                  "documents": report.documents_added, "chunks": report.chunks_added}))
"""


def build_folder(root: Path, doc_files: int, copyrights: int, paragraphs: int) -> Path:
    """The bench folder under ``root`` (see the module docstring)."""
    folder = root / "corpus"
    kinds = (".txt", ".md", ".html")
    found = sorted(p for p in DOC.rglob("*") if p.is_file() and p.suffix in kinds)
    for src in found[:doc_files]:
        dst = folder / "doc" / src.relative_to(DOC)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
    (folder / "copyright").mkdir(parents=True)
    for src in sorted(DOC.glob("*/copyright"))[:copyrights]:
        shutil.copyfile(src, folder / "copyright" / f"{src.parent.name}.txt")
    seen: dict[tuple[str, str], None] = {}
    with (DEV / "hotpotqa_rpt_dev.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            ctx = json.loads(line)["context"]
            for title, sentences in zip(ctx["title"], ctx["sentences"], strict=True):
                seen.setdefault((title, "".join(sentences)), None)
            if len(seen) >= paragraphs:
                break
    with (folder / "paragraphs.jsonl").open("w", encoding="utf-8") as out:
        for i, (title, text) in enumerate(list(seen)[:paragraphs]):
            out.write(json.dumps({"id": f"para-{i}", "title": title, "text": text}) + "\n")
    return folder


def checkout(commit: str, into: Path) -> Path:
    """``git archive`` of ``commit`` unpacked into ``into``; returns its ``src`` folder."""
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(HERE), "archive", commit, "src"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def run_ingest(
    src: Path, folder: Path, index: Path, settings: list[str] | None = None
) -> dict[str, float]:
    """One ingest of ``folder`` by the thresher in ``src``, in a fresh process.

    ``settings``: ``KEY=VALUE`` config overrides for that process.
    """
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", _WORKER, str(folder), str(index), *(settings or [])],
        capture_output=True, text=True, env=env, check=False, timeout=7200,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"ingest with {src} failed:\n{done.stderr[-3000:]}")
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def truncated_share(folder: Path, settings: list[str]) -> str:
    """How many chunks of ``folder`` exceed the window of this tree's embedder (with
    ``settings``; a MiniLM one) and how much of them it reads (this tree's chunking)."""
    from thresher.config import Config
    from thresher.corpus import iter_documents
    from thresher.corpus.chunking import chunk_document
    from thresher.index.embed.embedder import is_minilm, minilm_from_name
    from thresher.index.records import indexed_text
    from thresher.tokens import get_counter

    config = Config().override(dict(kv.split("=", 1) for kv in settings))
    if not is_minilm(config.retrieval.embedder):
        return f"{config.retrieval.embedder} is not a MiniLM embedder"
    counter = get_counter(config.chunking.tokenizer)
    emb = minilm_from_name(config.retrieval.embedder)
    emb.embed(["load"])
    texts = [
        indexed_text(c.title, c.text)
        for d in iter_documents([folder])
        for c in chunk_document(d, config.chunking.max_tokens, counter)
    ]
    emb._tokenizer.no_truncation()
    pieces = [len(e.ids) for e in emb._tokenizer.encode_batch(texts)]
    emb._tokenizer.enable_truncation(emb.max_length)
    read = emb.max_length * emb.windows  # about: each window repeats [CLS] and [SEP]
    over = sum(1 for n in pieces if n > read)
    lost = sum(max(0, n - read) for n in pieces) / max(sum(pieces), 1)
    return (
        f"{emb.name}: {over} of {len(texts)} chunks ({100 * over / max(len(texts), 1):.0f}%) "
        f"exceed {read} word pieces; {100 * lost:.0f}% of all word pieces are not read "
        f"(median chunk {statistics.median(pieces):.0f} pieces)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="389fb84", help="baseline commit (default 389fb84)")
    parser.add_argument("--rounds", type=int, default=2, help="ingests per side, alternating")
    parser.add_argument("--doc-files", type=int, default=150)
    parser.add_argument("--copyrights", type=int, default=40)
    parser.add_argument("--paragraphs", type=int, default=600)
    parser.add_argument("--search", action="store_true", help="also time searches")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a config override for this tree's ingests (e.g. retrieval.embedder=minilm-int8)",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-index-") as tmp:
        root = Path(tmp)
        folder = build_folder(root, args.doc_files, args.copyrights, args.paragraphs)
        sides = {"base": checkout(args.base, root / "base"), "new": HERE / "src"}
        print(f"folder: {sum(1 for p in folder.rglob('*') if p.is_file())} files; "
              f"base {args.base}, new = this tree; load {os.getloadavg()[0]:.1f}")  # fmt: skip
        print("window: " + truncated_share(folder, args.set))
        results: dict[str, list[dict[str, float]]] = {name: [] for name in sides}
        for r in range(args.rounds):
            for name, src in sides.items():
                got = run_ingest(
                    src, folder, root / f"idx-{name}-{r}", args.set if name == "new" else []
                )
                results[name].append(got)
                print(f"  round {r + 1} {name}: {got['chunks']:.0f} chunks, "
                      f"{got['documents']:.0f} documents in {got['seconds']:.1f} s "
                      f"({got['chunks'] / got['seconds']:.2f} chunks/s; {got['cpu']:.1f} s of "
                      f"CPU; load {os.getloadavg()[0]:.1f})", flush=True)  # fmt: skip
        rate, docs_rate, cpu_rate = {}, {}, {}
        for name, runs in results.items():
            seconds, cpu = sum(x["seconds"] for x in runs), sum(x["cpu"] for x in runs)
            chunks, docs = sum(x["chunks"] for x in runs), sum(x["documents"] for x in runs)
            rate[name], docs_rate[name], cpu_rate[name] = (
                chunks / seconds,
                docs / seconds,
                docs / cpu,
            )
            print(f"{name:5s} {chunks / seconds:7.2f} chunks/s  {docs / seconds:7.2f} docs/s  "
                  f"({len(runs)} ingests, {seconds:.1f} s; {docs / cpu:.2f} docs per CPU "
                  f"second)")  # fmt: skip
        print(f"speed-up (new / base): chunks/s {rate['new'] / rate['base']:.2f}x, docs/s "
              f"{docs_rate['new'] / docs_rate['base']:.2f}x, docs per CPU second "
              f"{cpu_rate['new'] / cpu_rate['base']:.2f}x")  # fmt: skip
        if args.search:
            search_figures(folder, root / "idx-new-0")


def search_figures(folder: Path, index: Path) -> None:
    """Time each search over ``index`` with queries made of the folder's titles."""
    from contextlib import closing

    from thresher.config import Config
    from thresher.index.backends import open_store

    questions = [json.loads(line)["title"] for line in (folder / "paragraphs.jsonl").open()][:100]
    with closing(open_store(index, Config())) as store:
        timings: dict[str, list[float]] = {}
        for q in questions:
            for name, fn in (("hybrid", store.hybrid_search), ("bm25", store.bm25_search),
                             ("dense", store.dense_search)):  # fmt: skip
                started = time.perf_counter()
                fn(q, k=50)
                timings.setdefault(name, []).append(time.perf_counter() - started)
        for name, samples in timings.items():
            p50 = statistics.median(samples) * 1000
            print(f"{name:8s} median {p50:6.1f} ms   (n={len(samples)})")


if __name__ == "__main__":
    main()
