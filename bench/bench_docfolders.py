"""Top-5 recall on a real mixed documentation folder: the retrievers against the local policy.

The folder is the documentation of Flask, Click, Werkzeug, Jinja, attrs and
Django, extracted from pinned PyPI sdists (:mod:`docfolders.build`; built
under ``--folder`` when absent), indexed once into ``--index`` (reused when
present: delete it to rebuild). The questions (``docfolders/questions-*.jsonl``
or ``--questions``) were written by reading those files; each names the
document every hop needs, and each is in the ``tune`` or the ``test`` split,
fixed before any measurement.

Every policy runs through :func:`thresher.search` with ``k=5``: ``single-shot``
(hybrid), ``bm25``, ``dense``, ``hybrid-rerank`` and ``local`` (the shipped
weights, or the index's adapted ones (``thresher adapt``), or ``--weights FILE`` for
this policy and ``hybrid-rerank``). A hop
counts as found when any of its documents is in the top 5; a question's
recall is its found hops over its hops (:func:`bench_policies.hop_scores`).
Printed per split, then per hop count, per question file, for the questions
sharing no content word with a later hop's proving line, and over first and
later hops (pooled) inside it, with
the best single retriever (BM25, dense, hybrid) of each row and the local
policy's margin over it. ``--json OUT`` writes every question's top-5
documents and scores per policy.

``--where`` also prints where the local policy lost each hop it missed (first
and later hops apart): *not listed* (no search's candidates held a document of
the hop), *listed, not shown* (a search's candidates held one, the scorer showed
none), *shown, ranked out* (shown, then ranked below the answer's top 5 and
pruned), and how many of the lost hops single-shot's top 5 held (with
``single-shot`` among the policies). Read from the policy's own recorder (the
rows training collects), the same episode as without it.

Usage::

    .venv/bin/python bench/bench_docfolders.py [--split tune|test|all]
        [--questions FILE ...] [--folder DIR] [--index DIR] [--cache DIR]
        [--policies single-shot,bm25,dense,hybrid-rerank,local] [--weights FILE] [--json OUT]
        [--where]

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from bench_policies import _pct, hop_scores  # bench/: on sys.path
from docfolders.build import (
    QUESTION_FILES,
    SDISTS,
    SdistError,
    TaggedQuestion,
    build_folder,
    later_hop_overlap,
    load_questions,
    usable_questions,
)

import thresher
from thresher.config import Config
from thresher.policies.local.candidate import Candidate
from thresher.policies.local.options import LocalOptions
from thresher.policies.local.policy import LocalPolicy

#: the policies run by default, in column order
POLICIES = ("single-shot", "bm25", "dense", "hybrid-rerank", "local")
#: the single retrievers a row's best is taken over (policy name -> column label)
SINGLE = {"single-shot": "hybrid", "bm25": "bm25", "dense": "dense"}
#: policies that take ``--weights``
WEIGHTED = {"local", "hybrid-rerank"}


def ensure_folder(folder: Path, cache: Path | None) -> None:
    """Build the documentation folder under ``folder`` unless it is already there."""
    if folder.is_dir() and any(folder.iterdir()):
        print(f"folder {folder} (reused)")
        return
    t0 = time.perf_counter()
    built = build_folder(folder, cache)
    counts = ", ".join(f"{p} {len(v)}" for p, v in built.items())
    print(
        f"folder {folder}: {sum(len(v) for v in built.values())} files ({counts})"
        f" in {time.perf_counter() - t0:.0f}s"
    )


def ensure_index(folder: Path, index: Path, config: Config) -> None:
    """Index ``folder`` into ``index`` unless an index is already there."""
    from thresher.corpus import iter_documents
    from thresher.index.backends import ingest

    if index.is_dir() and any(index.glob("gen-*")):
        print(f"index {index} (reused)")
        return
    t0 = time.perf_counter()
    ingest(iter_documents([folder]), index, config, progress=False)
    print(f"index {index}: built in {time.perf_counter() - t0:.0f}s", flush=True)


@dataclass(frozen=True)
class Answer:
    """One policy's answer to one question: its top-5 documents and their scores."""

    id: str
    docs: list[str]
    recall: float  # found hops / hops
    all_gold: float  # 1.0 when every hop is found
    found: list[bool]  # per hop: one of its documents is in the top 5
    ms: float


@dataclass
class Seen:
    """The documents one local episode's searches listed as candidates and showed."""

    listed: set[str]
    shown: set[str]


def recording_local(weights: str | None, config: Config, seen: Seen) -> LocalPolicy:
    """The local policy (``weights``, else the shipped ones) noting in ``seen`` every
    document its searches list and show (its recorder: the rows training collects)."""

    def record(kind: str, question: str, cands: list[Candidate], *_: np.ndarray) -> None:
        docs = {c.chunk.doc_id for c in cands}
        if kind == "pool":
            seen.listed |= docs
        elif kind == "shown":
            seen.shown |= docs

    return LocalPolicy(LocalOptions(weights=weights), config=config, recorder=record)


def run_policy(
    name: str,
    questions: Sequence[TaggedQuestion],
    index: Path,
    config: Config,
    weights: str | None,
    ran: dict[str, dict[str, object]] | None = None,
    seen: list[Seen] | None = None,
) -> list[Answer]:
    """One answer per question (``weights`` for the policies that take them); ``ran``
    gets what the policy recorded of itself (``policy_info``: which weights ran);
    ``seen``: for ``local``, filled with what each episode's searches listed and showed."""
    options = {"weights": weights} if weights and name in WEIGHTED else None
    out: list[Answer] = []
    for q in questions:
        t0 = time.perf_counter()
        if name == "local" and seen is not None:
            seen.append(Seen(set(), set()))
            policy = recording_local(weights, config, seen[-1])
            result = thresher.search(
                q.question, index=str(index), policy=policy, config=config, k=5
            )
        else:
            result = thresher.search(
                q.question,
                index=str(index),
                policy=name,
                config=config,
                k=5,
                policy_options=options,
            )
        if ran is not None and result.trace and name not in ran:
            ran[name] = dict(getattr(result.trace[0], "policy_info", {}) or {})
        docs = [d.doc_id for d in result.documents][:5]
        recall, all_gold = hop_scores(docs, q)
        found = [any(doc in docs for doc, _ in hop) for hop in q.hops]
        ms = 1000 * (time.perf_counter() - t0)
        out.append(Answer(q.qid, docs, recall, all_gold, found, ms))
    return out


def rows_of(
    questions: Sequence[TaggedQuestion],
) -> list[tuple[str, Callable[[TaggedQuestion], bool]]]:
    """The table's rows: all, by hop count, by question file, and the questions sharing no
    content word with a later hop's proving line (:func:`docfolders.build.later_hop_overlap`)."""
    rows: list[tuple[str, Callable[[TaggedQuestion], bool]]] = [("all", lambda q: True)]
    for h in sorted({len(q.hops) for q in questions}):
        rows.append((f"{h}-hop", lambda q, h=h: len(q.hops) == h))
    for source in sorted({q.source for q in questions}):
        rows.append((source.removesuffix(".jsonl"), lambda q, s=source: q.source == s))
    rows.append(("no later-hop word", lambda q: not later_hop_overlap(q)))
    return rows


def hop_rows(runs: dict[str, list[Answer]]) -> list[tuple[str, int, dict[str, float]]]:
    """Rows over hops rather than questions: the first hop, and every later hop pooled
    (the part the question's own words do not lead to), share found in points."""
    rows = []
    for label, pick in (("first hop", slice(0, 1)), ("later hops", slice(1, None))):
        flags = {n: [f for a in answers for f in a.found[pick]] for n, answers in runs.items()}
        size = len(next(iter(flags.values())))
        if size:
            rows.append((label, size, {n: 100 * statistics.fmean(v) for n, v in flags.items()}))
    return rows


def table(
    split: str,
    questions: Sequence[TaggedQuestion],
    runs: dict[str, list[Answer]],
) -> list[dict[str, object]]:
    """Print one split's table (top-5 recall, points); returns its rows as records."""
    names = list(runs)
    print(f"\n{split} ({len(questions)} questions): top-5 recall over gold documents")
    head = f"  {'row':<22} {'n':>3}" + "".join(f" {n:>13}" for n in names)
    print(head + f" {'best single':>17} {'local-best':>10}")
    rows: list[tuple[str, int, dict[str, float]]] = []
    for label, keep in rows_of(questions):
        idx = [i for i, q in enumerate(questions) if keep(q)]
        if idx:
            means = {n: 100 * statistics.fmean(runs[n][i].recall for i in idx) for n in names}
            rows.append((label, len(idx), means))
    rows += hop_rows(runs)
    records: list[dict[str, object]] = []
    for label, size, means in rows:
        singles = {SINGLE[n]: v for n, v in means.items() if n in SINGLE}
        best = max(singles.items(), key=lambda kv: kv[1]) if singles else None
        margin = means["local"] - best[1] if best and "local" in means else None
        line = f"  {label:<22} {size:>3}" + "".join(f" {means[n]:13.1f}" for n in names)
        line += f" {best[0] + ' ' + format(best[1], '.1f'):>17}" if best else f" {'-':>17}"
        line += f" {margin:+10.1f}" if margin is not None else f" {'-':>10}"
        print(line)
        records.append(
            {
                "split": split,
                "row": label,
                "n": size,
                "recall": means,
                "best_single": best[0] if best else None,
                "local_minus_best": margin,
            }
        )
    print("  ms p50:" + "".join(f" {n} {_pct([r.ms for r in runs[n]], 0.5):.0f}" for n in names))
    return records


def where_lost(
    questions: Sequence[TaggedQuestion],
    local: Sequence[Answer],
    seen: Sequence[Seen],
    single: Sequence[Answer] | None,
) -> dict[tuple[str, str], int]:
    """Print where the local policy lost the hops it missed (see the module docstring);
    returns the counts by (``first hop``/``later hops``, column)."""
    counts: dict[tuple[str, str], int] = {}
    for i, q in enumerate(questions):
        for h, hop in enumerate(q.hops):
            if local[i].found[h]:
                continue
            part = "first hop" if h == 0 else "later hops"
            docs = {doc for doc, _ in hop}
            where = (
                "shown, ranked out"
                if docs & seen[i].shown
                else "listed, not shown"
                if docs & seen[i].listed
                else "not listed"
            )
            for key in (where, "lost") + (("in single-shot's 5",) if single else ()):
                if key != "in single-shot's 5" or single is not None and single[i].found[h]:
                    counts[(part, key)] = counts.get((part, key), 0) + 1
    keys = ["lost", "not listed", "listed, not shown", "shown, ranked out", "in single-shot's 5"]
    print("  where local lost its missed hops: " + ", ".join(keys))
    for part in ("first hop", "later hops"):
        print(f"  {part:<22}" + "".join(f" {counts.get((part, k), 0):>5}" for k in keys))
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--split",
        choices=["tune", "test", "all"],
        default="all",
        help="which questions (all: both splits, reported apart)",
    )
    ap.add_argument(
        "--questions",
        nargs="+",
        type=Path,
        default=list(QUESTION_FILES),
        help="question files (default: docfolders/questions-*.jsonl)",
    )
    ap.add_argument(
        "--folder",
        type=Path,
        default=Path("/tmp/docfolders/docs"),
        help="the documentation folder (built when absent)",
    )
    ap.add_argument(
        "--index",
        type=Path,
        default=Path("/tmp/docfolders/index"),
        help="its index (built when absent, else reused)",
    )
    ap.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="sdist cache (default ~/.cache/thresher-bench/sdists)",
    )
    ap.add_argument("--policies", default=",".join(POLICIES), help="comma-separated policy names")
    ap.add_argument(
        "--weights",
        default=None,
        metavar="FILE",
        help="local policy weights for local and hybrid-rerank (default: shipped)",
    )
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a config override for indexing and every run",
    )
    ap.add_argument("--json", type=Path, default=None, metavar="OUT", help="write every result")
    ap.add_argument(
        "--where", action="store_true", help="where the local policy lost the hops it missed"
    )
    args = ap.parse_args(argv)

    config = (
        Config().override(dict(kv.partition("=")[::2] for kv in args.set)) if args.set else Config()
    )
    print("sdists: " + ", ".join(f"{s.name}=={s.version}" for s in SDISTS))
    try:
        ensure_folder(args.folder, args.cache)
    except SdistError as exc:
        print(f"skipped: {exc}")
        return 2
    asked = load_questions(args.questions)
    questions, dropped = usable_questions(asked, args.folder)
    for path in args.questions:
        n = sum(q.source == path.name for q in questions)
        print(f"  {path.name}: {n} questions" if path.is_file() else f"  {path.name}: absent")
    if dropped:
        print(f"  skipped (a proving line absent from the folder): {', '.join(dropped)}")
    if args.split != "all":
        questions = [q for q in questions if q.split == args.split]
    if not questions:
        print("no questions")
        return 1
    ensure_index(args.folder, args.index, config)

    names = [n.strip() for n in args.policies.split(",") if n.strip()]
    runs: dict[str, list[Answer]] = {}
    ran: dict[str, dict[str, object]] = {}
    seen: list[Seen] | None = [] if args.where else None
    for name in names:
        t0 = time.perf_counter()
        runs[name] = run_policy(name, questions, args.index, config, args.weights, ran, seen)
        weights = f" (weights: {ran[name]['weights']})" if ran.get(name, {}).get("weights") else ""
        print(
            f"  ran {name} on {len(questions)} questions in {time.perf_counter() - t0:.0f}s"
            f"{weights}",
            flush=True,
        )
    records: list[dict[str, object]] = []
    splits = ["tune", "test"] if args.split == "all" else [args.split]
    for split in splits:
        part = [i for i, q in enumerate(questions) if q.split == split]
        if part:
            records += table(
                split,
                [questions[i] for i in part],
                {n: [r[i] for i in part] for n, r in runs.items()},
            )
            if seen and "local" in runs:
                single = runs.get("single-shot")
                where_lost(
                    [questions[i] for i in part],
                    [runs["local"][i] for i in part],
                    [seen[i] for i in part],
                    [single[i] for i in part] if single else None,
                )
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {
                    "weights": args.weights or ran.get("local", {}).get("weights", "shipped"),
                    "policy_info": ran,
                    "sdists": [f"{s.name}=={s.version}" for s in SDISTS],
                    "questions": [
                        {
                            "id": q.qid,
                            "split": q.split,
                            "hops": len(q.hops),
                            "source": q.source,
                            **{n: asdict(runs[n][i]) for n in names},
                        }
                        for i, q in enumerate(questions)
                    ],
                    "table": records,
                },
                indent=1,
            )
        )
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
