"""The dense window: what truncating a chunk at MiniLM's 256 word pieces costs, against
mean-pooled windows over the whole chunk.

MiniLM reads at most 256 word pieces; a longer chunk's dense vector comes from
its head only (truncate, as shipped). The alternative measured here: cut the
chunk's word pieces into consecutive windows of at most 254 (plus [CLS] and
[SEP]), run each, and average every word piece's output over all windows
(the same mean pooling, over the whole chunk), then normalize. A third set,
"windows apart", keeps each window's vector as a chunk of its own (a document or
chunk is then found by its best window): what smaller chunks, cut at 254 word
pieces, would give to dense retrieval (the chunker would cut at sentences).

Two measurements, both dense-only (exact search over the vectors, no BM25):

* **dev recall@5** on a pooled dev index already built by ``bench_policies.py``
  (``--index``; the chunk vectors are read from it, and only the chunks longer
  than the window are re-embedded the pooled way): recall@5 of documents over
  the dev questions, with each set of vectors;
* **tail retrieval** on the bench folder of ``bench_index.py`` (real files, many
  chunks past the window): for each chunk longer than the window, its last
  sentence (past the window) is the query; the share of those chunks ranked in
  the dense top 5 with each set of vectors, and the seconds each set took to embed.

Usage::

    .venv/bin/python bench/bench_window.py --index /tmp/thresher-dev-index/hotpotqa/KEY \\
        --tasks ../shared/data/dev/hotpotqa_rpt_dev.jsonl [--embedder minilm-int8]
    .venv/bin/python bench/bench_window.py --folder [--doc-files 20 --copyrights 8 --paragraphs 150]

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from thresher.config import Config
from thresher.index.embed.embedder import MiniLMEmbedder, get_embedder


def pooled(emb: MiniLMEmbedder, texts: Sequence[str]) -> np.ndarray:
    """Mean pooling over every window of each text (see the module docstring)."""
    return windowed(emb, texts)[0]


def windowed(emb: MiniLMEmbedder, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """(one pooled vector per text, one vector per window, the text of each window)."""
    emb.embed(["load"])
    tok = emb._tokenizer
    tok.no_truncation()
    try:
        encodings = tok.encode_batch(list(texts))
    finally:
        tok.enable_truncation(emb.max_length)
    cls, sep = encodings[0].ids[0], encodings[0].ids[-1]
    step = emb.max_length - 2
    windows: list[list[int]] = []
    owner: list[int] = []
    for i, e in enumerate(encodings):
        body = e.ids[1:-1]
        for s in range(0, max(len(body), 1), step):
            windows.append([cls, *body[s : s + step], sep])
            owner.append(i)
    sums = np.zeros((len(texts), emb.dimension), dtype=np.float64)
    counts = np.zeros(len(texts))
    each = np.zeros((len(windows), emb.dimension), dtype=np.float32)
    order = sorted(range(len(windows)), key=lambda w: len(windows[w]))
    for start in range(0, len(order), emb.batch_size):
        batch = order[start : start + emb.batch_size]
        width = max(len(windows[w]) for w in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, w in enumerate(batch):
            ids[row, : len(windows[w])] = windows[w]
            mask[row, : len(windows[w])] = 1
        (hidden,) = emb._session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
        summed = (hidden * mask[:, :, None]).sum(axis=1)
        for row, w in enumerate(batch):
            sums[owner[w]] += summed[row]
            counts[owner[w]] += mask[row].sum()
            each[w] = summed[row] / mask[row].sum()
    out = (sums / counts[:, None]).astype(np.float32)
    each /= np.linalg.norm(each, axis=1, keepdims=True)
    return out / np.linalg.norm(out, axis=1, keepdims=True), each, owner


def pieces(emb: MiniLMEmbedder, texts: Sequence[str]) -> list[int]:
    """Word pieces of each text, untruncated."""
    emb.embed(["load"])
    emb._tokenizer.no_truncation()
    try:
        return [len(e.ids) for e in emb._tokenizer.encode_batch(list(texts))]
    finally:
        emb._tokenizer.enable_truncation(emb.max_length)


def top_docs(scores: np.ndarray, doc_of: Sequence[str], k: int) -> list[str]:
    out: list[str] = []
    for i in np.argsort(-scores):
        if doc_of[i] not in out:
            out.append(doc_of[i])
            if len(out) == k:
                break
    return out


def reembedded(
    base: MiniLMEmbedder,
    other: MiniLMEmbedder,
    vectors: np.ndarray,
    texts: Sequence[str],
    n: Sequence[int],
) -> tuple[np.ndarray, float]:
    """``other``'s vectors of ``texts`` given ``base``'s: with the same graph, only the
    texts longer than the smaller window are run again. Returns them and the seconds."""
    same = base.variant == other.variant
    redo = [i for i, p in enumerate(n) if not same or p > min(base.max_length, other.max_length)]
    started = time.perf_counter()
    out = vectors.copy()
    if redo:
        out[redo] = other.embed([texts[i] for i in redo])
    return out, time.perf_counter() - started


def dev_recall(index: Path, tasks_file: Path, name: str, compare: Sequence[str] = ()) -> None:
    from thresher.index.embedded import layout
    from thresher.index.embedded.records_file import RECORDS, RecordsFile
    from thresher.index.embedded.vectors import Vectors
    from thresher.index.records import indexed_text
    from thresher.train.local.data import group_tasks

    emb = get_embedder(name)
    assert isinstance(emb, MiniLMEmbedder)
    generation = layout.current_generation(index)
    ids = layout.read_manifest(generation).chunk_ids()
    records = RecordsFile.open(generation / RECORDS, len(ids))
    assert records is not None, f"{generation}: no chunk records"
    rows = {r[0]: r for r in records.rows(ids)}
    vectors = np.asarray(Vectors(generation).matrix, dtype=np.float32)  # corpus order
    metas = [json.loads(rows[c][3]) for c in ids]
    texts = [indexed_text(str(m.get("title", "")), rows[c][2]) for c, m in
             zip(ids, metas, strict=True)]  # fmt: skip
    doc_of = [str(m["doc_id"]) for m in metas]
    n = pieces(emb, texts)
    long = [i for i, p in enumerate(n) if p > emb.max_length]
    started = time.perf_counter()
    mean, each, owner = windowed(emb, [texts[i] for i in long])
    seconds = time.perf_counter() - started
    pooled_vecs = vectors.copy()
    pooled_vecs[long] = mean
    short = [i for i in range(len(texts)) if i not in set(long)]
    split_vecs = np.concatenate([vectors[short], each])
    split_doc_of = [doc_of[i] for i in short] + [doc_of[long[o]] for o in owner]
    tasks = group_tasks([tasks_file])
    queries = emb.embed([t.question for t in tasks])
    long_docs = {doc_of[i] for i in long}
    sets = [
        ("truncate", vectors, doc_of, queries),
        ("pooled windows", pooled_vecs, doc_of, queries),
        ("windows apart", split_vecs, split_doc_of, queries),
    ]
    for other_name in compare:
        other = get_embedder(other_name)
        assert isinstance(other, MiniLMEmbedder)
        vecs, took = reembedded(emb, other, vectors, texts, n)
        print(f"{other_name}: re-embedding took {took:.1f} s")
        sets.append((other_name, vecs, doc_of, other.embed([t.question for t in tasks])))
    for label, vecs, owners, query_vecs in sets:
        rec, rec_long = [], []
        for t, q in zip(tasks, query_vecs, strict=True):
            top = set(top_docs(vecs @ q, owners, 5))
            gold = set(t.gold_doc_ids)
            r = len(gold & top) / max(len(gold), 1)
            rec.append(r)
            if gold & long_docs:
                rec_long.append(r)
        print(f"{label:15s} dense recall@5 {np.mean(rec):.4f} over {len(rec)} questions; "
              f"{np.mean(rec_long) if rec_long else float('nan'):.4f} over the {len(rec_long)} "
              "whose gold includes a long chunk")  # fmt: skip
    print(f"{len(long)} of {len(texts)} chunks exceed {emb.max_length} pieces; re-embedding "
          f"them pooled took {seconds:.1f} s")  # fmt: skip


def tail_retrieval(folder_args: argparse.Namespace, name: str, compare: Sequence[str] = ()) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_index import build_folder

    from thresher.corpus import iter_documents
    from thresher.corpus.chunking import chunk_document
    from thresher.index.records import indexed_text
    from thresher.tokens import get_counter

    config = Config()
    counter = get_counter(config.chunking.tokenizer)
    emb = get_embedder(name)
    assert isinstance(emb, MiniLMEmbedder)
    with tempfile.TemporaryDirectory() as tmp:
        folder = build_folder(
            Path(tmp), folder_args.doc_files, folder_args.copyrights, folder_args.paragraphs
        )
        chunks = [c for d in iter_documents([folder])
                  for c in chunk_document(d, config.chunking.max_tokens, counter)]  # fmt: skip
    texts = [indexed_text(c.title, c.text) for c in chunks]
    n = pieces(emb, texts)
    long = [i for i, p in enumerate(n) if p > emb.max_length]
    queries, targets = [], []
    for i in long:
        lines = [s for s in re.split(r"(?<=[.!?])\s+|\n", chunks[i].text) if len(s.split()) >= 5]
        if lines:
            queries.append(lines[-1][:300])
            targets.append(i)
    qv = emb.embed(queries)
    started = time.perf_counter()
    truncated = emb.embed(texts)
    seconds = {"truncate": time.perf_counter() - started}
    started = time.perf_counter()
    mean, each, owner = windowed(emb, texts)
    seconds["pooled windows"] = seconds["windows apart"] = time.perf_counter() - started
    sets = [
        ("truncate", truncated, list(range(len(texts))), qv),
        ("pooled windows", mean, list(range(len(texts))), qv),
        ("windows apart", each, owner, qv),
    ]
    runs = {"truncate": len(texts), "pooled windows": len(each), "windows apart": len(each)}
    for other_name in compare:
        other = get_embedder(other_name)
        started = time.perf_counter()
        sets.append((other_name, other.embed(texts), list(range(len(texts))), other.embed(queries)))
        seconds[other_name] = time.perf_counter() - started
        runs[other_name] = len(other._windows(texts)[0])
    for label, vecs, of, query_vecs in sets:
        hits = 0
        for q, t in zip(query_vecs, targets, strict=True):
            top: list[int] = []
            for i in np.argsort(-(vecs @ q)):
                if of[i] not in top:
                    top.append(of[i])
                if len(top) == 5:
                    break
            hits += t in top
        print(f"{label:15s} tail sentence finds its chunk in the dense top 5: {hits}/{len(targets)} "
              f"({100 * hits / max(len(targets), 1):.0f}%); embedding {len(texts)} chunks took "
              f"{seconds[label]:.1f} s ({runs[label]} model runs)")  # fmt: skip
    print(f"{len(long)} of {len(texts)} chunks exceed {emb.max_length} pieces")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedder", default=Config().retrieval.embedder)
    ap.add_argument("--index", type=Path, help="a pooled dev index (bench_policies' cache)")
    ap.add_argument("--tasks", type=Path, help="the dev questions of that index")
    ap.add_argument("--folder", action="store_true", help="tail retrieval on the bench folder")
    ap.add_argument("--doc-files", type=int, default=20)
    ap.add_argument("--copyrights", type=int, default=8)
    ap.add_argument("--paragraphs", type=int, default=150)
    ap.add_argument(
        "--compare",
        nargs="*",
        default=[],
        metavar="NAME",
        help="other MiniLM embedders measured beside (e.g. minilm-int8-dq-w128 minilm-int8-dq-w128x2)",
    )
    args = ap.parse_args()
    if args.index and args.tasks:
        dev_recall(args.index, args.tasks, args.embedder, args.compare)
    if args.folder:
        tail_retrieval(args, args.embedder, args.compare)


if __name__ == "__main__":
    main()
