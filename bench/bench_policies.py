"""Policy benchmark on the pooled dev sets: baselines against the local policy.

For each dataset (HotpotQA: the paragraphs of both dev files in one index;
MuSiQue: the questions file plus its 1,890-passage corpus; 2WikiMultihopQA:
the 500 questions' context paragraphs) and each policy it prints: recall@5 of
the final ranked documents, the share of questions with every gold document in
the top 5, recall@5 by hop count (h2/h3/h4: the task's number of gold
documents), context tokens at termination, turns, tool calls, and ms per
episode p50/p95 (wall, query embeddings cold), plus, for the local policy, ms
p50/p95 with query embeddings cached (the policy and harness cost, "query
embedding aside").

Held-out figures (the default for the learned policies): the scorer is never
trained on the questions it is evaluated on. Feature rows are collected once
by running the local policy with the hand-set bootstrap weights on every
question; then for HotpotQA a model fit on the questions of
``hotpotqa_rpt_train.jsonl`` (+ all MuSiQue questions when loaded) is
evaluated on the questions of ``hotpotqa_rpt_dev.jsonl`` and the reverse;
for MuSiQue and 2Wiki, 5 folds by question (+ all questions of the other pools).
The no-prune row runs the local rows' search (their ``--local`` options) with
pruning off.
``--shipped`` also runs the shipped weights (fit on every dev question: in-sample).
The held-out (and LODO) fits carry the *constants* of the weights file
(``--weights FILE``, default the shipped file: the section ``train-policy
--tune`` sets) and the policy's default controls (``--local`` sets one); the
rows that run a whole weights file (``--shipped``, the real folder, ``--no-dev
--lowercase``) load ``--weights``.
``--extra-train FILE:DIR`` (repeatable) adds the rows of extra tasks (e.g.
synthetic tasks from ``thresher synth tasks``, never a dev question) to every
fold's training set; DIR is their index, or ``hotpotqa`` / ``musique`` for the
bench's own pooled index (synthetic tasks mined from the dev corpus itself).
Evaluation stays held-out: a fold never trains on an extra task whose evidence
documents include a gold document of a question it evaluates.
``--extra-weight W`` scales those rows in the fits (default 1.0);
``--curriculum N`` draws the extra tasks N times by the hop curriculum first.
``--tune FILE:DIR`` (DIR as above; repeatable, a dataset's own pair first)
tunes the local policy's controls by reward on those tasks
(:mod:`thresher.train.local.tune`, first ``--tune-limit`` tasks; on a dev
index, tasks touching any gold document of the dataset's questions are
skipped) with the first split's weights, and adds a ``local (tuned,
held-out)`` row: every split's held-out weights with those controls.

Generalization (issue 24; each section also runs alone with ``--dataset none``
for the real folder, or with ``--only`` naming the policies it needs):

- ``--lodo``: leave one dataset out. For each pool, the local policy's models
  are fit on the *other* pools' rows only (plus every ``--extra-train`` task,
  e.g. the synthetic worlds of the shipped recipe, fold-filtered as above) and
  run on this pool; the row ``local (LODO)`` sits under ``local (held-out)``
  (fit on the other pools *and* the other folds of this pool) with the drop
  in recall@5 points.
- ``--lowercase``: every string of the pools' files lowercased
  (:mod:`lowercase`: questions, titles, passages; indexed under
  ``CACHE/NAME-lower``); hybrid single-shot and local (each question with its
  cased held-out weights) against the cased rows.
- ``--realfolder``: a folder of this machine's account and login
  documentation (manual pages rendered to text, /usr/share/doc READMEs and
  copyright files; :mod:`realfolder.build`) with 35 multi-hop questions written
  by reading it (``realfolder/questions.jsonl``: gold documents per hop, each
  with the line that proves it). Single-shot hybrid and local (the shipped
  weights: the folder is never trained on); recall@5 per gold document and
  all-gold@5 (a hop counts when any document stating its fact is in the top 5).
  Skipped, with the reason, when the machine lacks ``man``/``groff`` or the
  documents. ``--realfolder-size large`` puts the same documents among every
  manual page of sections 1, 5, 7 and 8 and every README and copyright file of
  the machine (:mod:`realfolder.large`; the generated ``gcloud`` reference
  pages left out, ``all`` keeps them) and adds the questions of
  ``realfolder/questions-large.jsonl``, reporting the original, new and all
  questions apart; ``--realfolder-reuse`` keeps a folder an earlier run built.

Usage::

    .venv/bin/python bench/bench_policies.py [--dataset all|both|hotpotqa|musique|2wiki|none] [--limit 50]
        [--lodo] [--lowercase] [--realfolder [--realfolder-size small|large|all]]

Indexes are built into ``--cache`` (default /tmp/thresher-dev-index) when absent.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from lowercase import lowercase_index, lowercased_copies  # bench/: on sys.path
from realfolder.build import (
    Question,
    build_folder,
    load_questions,
    tools_missing,
    usable_questions,
)
from realfolder.large import GENERATED, QUESTIONS_LARGE, build_large_folder

from thresher.config import Config
from thresher.eval.metrics import all_gold_at_k, recall_at_k
from thresher.harness.episode import run_episode
from thresher.index.embedded.store import EmbeddedStore
from thresher.policies.baselines import (
    HYBRID_RERANK,
    Bm25SingleShotPolicy,
    DenseSingleShotPolicy,
    hybrid_rerank_policy,
    no_prune_policy,
)
from thresher.policies.local.constants import DEFAULT_CONSTANTS, Constants
from thresher.policies.local.models import LocalWeights, load_weights
from thresher.policies.local.options import LocalOptions
from thresher.policies.local.policy import LocalPolicy
from thresher.policies.single_shot import SingleShotPolicy
from thresher.tasks.task import Task
from thresher.train.local.data import ensure_index, group_tasks
from thresher.train.local.trainer import (
    TrainingData,
    collect,
    collect_repeats,
    curriculum_tasks,
    fit_weights,
    prior_weights,
)
from thresher.train.local.tune import tune_controls
from thresher.train.local.tune_runs import LocalEpisodes

REPO = Path(__file__).resolve().parents[1]
DEV = (REPO / ".." / "shared" / "data" / "dev").resolve()
DATASETS = {
    "hotpotqa": ["hotpotqa_rpt_dev.jsonl", "hotpotqa_rpt_train.jsonl"],
    "musique": ["musique_train_hipporag.json", "musique_train_hipporag_corpus.json"],
    "2wiki": ["2wiki_train_migres.json"],
}
#: ``--dataset`` shorthands
GROUPS: dict[str, list[str]] = {
    "both": ["hotpotqa", "musique"],
    "all": ["hotpotqa", "musique", "2wiki"],
    "none": [],
}


def parse_local(pairs: Sequence[str]) -> dict[str, float | int]:
    """``--local KEY=VALUE`` settings: a number with a dot is a float, else an int."""
    return {k: float(v) if "." in v else int(v) for k, _, v in (o.partition("=") for o in pairs)}


@dataclass
class Row:
    recall: float
    all_gold: float
    tokens: int
    turns: int
    calls: int
    ms: float
    hops: int  # gold documents of the task: the hop count of its chain


def run(
    tasks: Sequence[Task], store: EmbeddedStore, make: Callable[[Task], object], config: Config
) -> list[Row]:
    rows = []
    for task in tasks:
        policy = make(task)
        result = run_episode(task.question, store, policy, config)  # type: ignore[arg-type]
        docs = [d.doc_id for d in result.documents]
        rows.append(
            Row(
                recall_at_k(docs, task.gold_doc_ids, 5),
                all_gold_at_k(docs, task.gold_doc_ids, 5),
                result.usage.used,
                result.turns,
                sum(result.tool_calls.values()),
                result.wall_s * 1000,
                len(task.gold_doc_ids),
            )
        )
    return rows


def _pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def summary(name: str, rows: list[Row], warm: Sequence[float] = ()) -> str:
    """One table line: recall, by hop count, tokens, turns, calls, ms p50/p95 (cold, warm)."""

    def mean(f: Callable[[Row], float], rs: Sequence[Row] = rows) -> float:
        return statistics.fmean(f(r) for r in rs) if rs else float("nan")

    by_hop = []
    for h in (2, 3, 4):
        part = [r for r in rows if r.hops == h]
        by_hop.append(f"{100 * mean(lambda r: r.recall, part):6.1f}" if part else f"{'-':>6}")
    ms = [r.ms for r in rows]
    warm_txt = f"{_pct(warm, 0.5):6.0f}/{_pct(warm, 0.95):<4.0f}" if warm else " " * 11
    return (
        f"  {name:<26} {100 * mean(lambda r: r.recall):6.1f} {100 * mean(lambda r: r.all_gold):7.1f}"
        f" {''.join(by_hop)} {mean(lambda r: r.tokens):8.0f} {mean(lambda r: r.turns):6.2f}"
        f" {mean(lambda r: r.calls):6.2f} {_pct(ms, 0.5):6.0f}/{_pct(ms, 0.95):<4.0f}{warm_txt}"
    )


HEADER = (
    f"  {'policy':<26} {'R@5':>6} {'AllG@5':>7} {'h2':>6}{'h3':>6}{'h4':>6} {'ctx_tok':>8}"
    f" {'turns':>6} {'calls':>6} {'ms p50/p95':>11} {'warm p50/p95':>12}"
)


def held_out_models(
    name: str,
    tasks: list[Task],
    data: TrainingData,
    others: set[str],
    extra: TrainingData | None = None,
    extra_docs: dict[str, set[str]] | None = None,
    order: bool = True,
    constants: Constants = DEFAULT_CONSTANTS,
) -> list[tuple[list[Task], LocalWeights]]:
    """(evaluated tasks, weights fit without them, with ``constants``) per split.

    ``extra_docs`` maps each extra task id to its evidence documents; an extra
    task sharing a document with an evaluated question's gold is left out of
    that split's training set.
    """
    if name == "hotpotqa":
        by_file: dict[str, list[Task]] = {}
        for t in tasks:
            by_file.setdefault(t.metadata.get("_file", ""), []).append(t)
        splits = list(by_file.values())
    else:
        ids = sorted(t.task_id for t in tasks)
        folds = [set(ids[i::5]) for i in range(5)]
        splits = [[t for t in tasks if t.task_id in f] for f in folds]
    out = []
    for evaluated in splits:
        ev = {t.task_id for t in evaluated}
        train_ids = {t.task_id for t in tasks if t.task_id not in ev} | others
        train = data.subset(train_ids)
        if extra is not None:
            gold = {d for t in evaluated for d in t.gold_doc_ids}
            docs = extra_docs or {}
            keep = set(extra.groups) | set(extra.stop_groups)
            keep = {g for g in keep if not docs.get(g, set()) & gold}
            train.extend(extra.subset(keep))
        weights = fit_weights(train, meta={"held_out": sorted(ev)[:3]}, order=order)
        out.append((evaluated, replace(weights, constants=constants)))
    return out


def lodo_model(
    tasks: list[Task],
    data: TrainingData,
    others: set[str],
    extra: TrainingData | None = None,
    extra_docs: dict[str, set[str]] | None = None,
    order: bool = True,
    constants: Constants = DEFAULT_CONSTANTS,
) -> LocalWeights:
    """Weights fit on the other pools' rows only (``others``: their task ids), plus the
    extra tasks sharing no document with a gold document of ``tasks``: no row of this
    pool's questions, its folds included (with ``constants``)."""
    train = data.subset(others)
    if extra is not None:
        gold = {d for t in tasks for d in t.gold_doc_ids}
        docs = extra_docs or {}
        keep = set(extra.groups) | set(extra.stop_groups)
        train.extend(extra.subset({g for g in keep if not docs.get(g, set()) & gold}))
    weights = fit_weights(train, meta={"leave_one_dataset_out": True}, order=order)
    return replace(weights, constants=constants)


def pool_tasks(name: str, data: Path, limit: int) -> list[Task]:
    """The questions of dataset ``name``'s files under ``data`` (the first ``limit`` of
    each file when set), each marked with its file's name (``_file``)."""
    loaded: list[Task] = []
    for f in (data / n for n in DATASETS[name]):
        if f.name == DATASETS["musique"][1]:  # the corpus file: passages, no questions
            continue
        part = group_tasks([f])
        for t in part[:limit] if limit else part:
            t.metadata["_file"] = f.name
            loaded.append(t)
    return loaded


def mean_recall(rows: Sequence[Row]) -> float:
    """Mean recall@5 of ``rows`` in points."""
    return 100 * statistics.fmean(r.recall for r in rows) if rows else float("nan")


def hop_scores(
    docs: Sequence[str],
    q: Question,
    k: int = 5,
    copies: Callable[[str], set[str]] | None = None,
) -> tuple[float, float]:
    """(share of ``q``'s hops with a proving document in the top ``k``, 1.0 if all are).

    ``copies``: a gold document's byte-identical copies in the folder (counted as it)."""
    top = set(docs[:k])
    found = [
        any(doc in top or (copies is not None and copies(doc) & top) for doc, _ in hop)
        for hop in q.hops
    ]
    return sum(found) / len(found), float(all(found))


def identical_copies(folder: Path, questions: Sequence[Question]) -> dict[str, set[str]]:
    """Each gold document of ``questions`` -> the other files of ``folder`` with its bytes
    (several packages ship the same copyright file: ``doc/libpam0g/copyright`` is
    ``doc/libpam-modules/copyright``)."""
    import hashlib

    def digest(path: Path) -> str:
        return hashlib.sha256(path.read_bytes()).hexdigest()

    gold = {doc for q in questions for hop in q.hops for doc, _ in hop}
    sizes = {(folder / doc).stat().st_size: digest(folder / doc) for doc in gold}
    wanted = {digest(folder / doc): doc for doc in gold}
    out: dict[str, set[str]] = {doc: set() for doc in gold}
    for path in folder.rglob("*"):
        if path.is_file() and path.stat().st_size in sizes:
            rel = path.relative_to(folder).as_posix()
            twin = wanted.get(digest(path))
            if twin is not None and rel != twin:
                out[twin].add(rel)
    return out


def real_folder(
    cache: Path,
    config: Config,
    only: Callable[[str], bool],
    size: str = "small",
    reuse: bool = False,
    weights: LocalWeights | None = None,
) -> None:
    """Single-shot hybrid and local (``weights``, else the shipped ones) on the real
    folder's questions.

    ``size``: ``small`` (the 77 account and login documents) or ``large`` (those
    among every manual page of sections 1, 5, 7, 8 and every README and copyright
    file of this machine: :mod:`realfolder.large`), which also asks the questions
    of ``questions-large.jsonl``. ``reuse``: keep a folder built by an earlier run
    (the large one takes minutes to render) and update its index incrementally.
    """
    from thresher.corpus import iter_documents
    from thresher.index.backends import ingest

    print(f"\nreal folder, {size} (this machine's documentation)")
    lacking = tools_missing()
    if lacking:
        print(f"  skipped: this machine lacks {', '.join(lacking)} (needed to render manual pages)")
        return
    root = cache / ("realfolder" if size == "small" else f"realfolder-{size}")
    folder, index = root / "docs", root / "index"
    sets = {"questions.jsonl": load_questions()}
    t0 = time.perf_counter()
    if reuse and folder.is_dir():
        written = [p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()]
        print(f"  reusing {folder} ({len(written)} documents)")
    elif size == "small":
        written, missing = build_folder(folder)
        print(f"  {len(written)} documents ({len(missing)} absent here)")
    else:
        built = build_large_folder(folder, GENERATED if size == "large" else ())
        written = built.written
        sections = ", ".join(f"{k} {v}" for k, v in sorted(built.by_section.items()))
        print(
            f"  {len(written)} documents in {time.perf_counter() - t0:.0f}s: {built.man_pages}"
            f" manual pages ({sections}), {built.doc_files} README/copyright files;"
            f" skipped {built.links} page links, {built.failed} unreadable,"
            f" {built.generated} generated ({', '.join(GENERATED)});"
            f" {len(built.missing)} of the small folder's absent here"
        )
    if size != "small":
        sets[QUESTIONS_LARGE.name] = load_questions(QUESTIONS_LARGE)
    if not written:
        print("  skipped: none of the folder's documents exists on this machine")
        return
    questions: list[Question] = []
    for name, asked in sets.items():
        kept, dropped = usable_questions(asked, folder)
        questions += kept
        print(
            f"  {name}: {len(kept)} questions"
            + (
                f" ({len(dropped)} skipped: a gold line absent here: {', '.join(dropped)})"
                if dropped
                else ""
            )
        )
    if not questions:
        return
    t0 = time.perf_counter()
    ingest(iter_documents([folder]), index, config, progress=False)
    print(f"  indexed in {time.perf_counter() - t0:.1f}s", flush=True)
    policies: list[tuple[str, Callable[[], object]]] = [
        ("hybrid single-shot", SingleShotPolicy),
        ("local (shipped)", lambda: LocalPolicy(LocalOptions(weights=weights), config=config)),
    ]
    subsets = {"all": [True] * len(questions)}
    if len(sets) > 1:
        first = {q.qid for q in sets["questions.jsonl"]}
        subsets["original"] = [q.qid in first for q in questions]
        subsets["new"] = [q.qid not in first for q in questions]
    print(
        f"  {'policy':<26} {'set':<9} {'n':>3} {'R@5/doc':>8} {'AllG@5':>7} {'h2':>6} {'h3':>6}"
        f" {'ms p50':>7}"
    )
    per_policy: dict[str, list[tuple[float, float]]] = {}
    twins = identical_copies(folder, questions)
    copied: dict[str, tuple[float, float]] = {}
    with EmbeddedStore(index, config) as store:
        for label, make in policies:
            if not only(label.split()[0]):
                continue
            scores: list[tuple[float, float]] = []
            ms: list[float] = []
            answers: list[list[str]] = []
            for q in questions:
                result = run_episode(q.question, store, make(), config)  # type: ignore[arg-type]
                answers.append([d.doc_id for d in result.documents])
                scores.append(hop_scores(answers[-1], q))
                ms.append(result.wall_s * 1000)
            per_policy[label] = scores
            if any(twins.values()):
                both = [
                    hop_scores(a, q, copies=lambda d: twins.get(d, set()))
                    for a, q in zip(answers, questions, strict=True)
                ]
                copied[label] = (
                    100 * statistics.fmean(s[0] for s in both),
                    100 * statistics.fmean(s[1] for s in both),
                )
            for subset, mask in subsets.items():
                part = [
                    (s, len(q.hops)) for s, q, m in zip(scores, questions, mask, strict=True) if m
                ]
                by_hop = []
                for h in (2, 3):
                    got = [s[0] for s, n in part if n == h]
                    by_hop.append(f"{100 * statistics.fmean(got):6.1f}" if got else f"{'-':>6}")
                print(
                    f"  {label:<26} {subset:<9} {len(part):>3}"
                    f" {100 * statistics.fmean(s[0] for s, _ in part):8.1f}"
                    f" {100 * statistics.fmean(s[1] for s, _ in part):7.1f} {' '.join(by_hop)}"
                    f" {_pct(ms, 0.5):7.0f}",
                    flush=True,
                )
    if copied:
        shared = {d: sorted(c) for d, c in twins.items() if c}
        print(f"  gold documents with byte-identical copies in the folder: {shared}")
        for label, (recall, all_gold) in copied.items():
            print(
                f"  {label:<26} all, a copy counted as its gold: R@5/doc {recall:.1f},"
                f" AllG@5 {all_gold:.1f}"
            )
    if len(per_policy) == 2:
        single, local = per_policy.values()
        won = [q.qid for q, a, b in zip(questions, single, local, strict=True) if b[1] > a[1]]
        lost = [q.qid for q, a, b in zip(questions, single, local, strict=True) if b[1] < a[1]]
        print(f"  all-gold@5, local over single-shot: won {won or '-'}; lost {lost or '-'}")


def lowercase_section(
    names: Sequence[str],
    tasks: dict[str, list[Task]],
    stores: dict[str, EmbeddedStore],
    indexes: dict[str, Path],
    held_weights: dict[str, dict[str, LocalWeights]],
    held_local: dict[str, list[Row]],
    args: argparse.Namespace,
    config: Config,
    local_options: dict[str, float | int],
    shipped: LocalWeights | None = None,
) -> None:
    """Hybrid single-shot and local on the lowercased pools, against the cased rows.

    Each lowercased question runs with the held-out weights of its cased twin
    (same file, same position), so the scorer never saw it either way.
    """
    lower_data = Path(args.cache) / "lowercase-data"
    for name in names:
        files = lowercased_copies([Path(args.data) / f for f in DATASETS[name]], lower_data)
        index = lowercase_index(files, indexes[name], Path(args.cache) / f"{name}-lower", config)
        store = EmbeddedStore(index, config)
        lower = pool_tasks(name, lower_data, args.limit)
        cased = tasks[name]
        if len(lower) != len(cased):
            print(f"\n{name} lowercased: {len(lower)} questions vs {len(cased)} cased; skipped")
            store.close()
            continue
        docs_cased, docs_lower = stores[name].stats().documents, store.stats().documents
        print(
            f"\n{name} lowercased ({len(lower)} questions, {docs_lower} docs; cased {docs_cased}:"
            f" {docs_cased - docs_lower} titles merge by case)"
        )
        print(HEADER)
        cased_single = run(cased, stores[name], lambda t: SingleShotPolicy(), config)
        lower_single = run(lower, store, lambda t: SingleShotPolicy(), config)
        print(summary("hybrid single-shot (cased)", cased_single))
        print(summary("hybrid single-shot (lower)", lower_single), flush=True)
        twin = {lt.task_id: ct.task_id for lt, ct in zip(lower, cased, strict=True)}
        which = held_weights.get(name)
        if which is None:  # no held-out run (--no-dev): ``shipped`` (--weights) on both sides
            cased_local = run(
                cased,
                stores[name],
                lambda t: LocalPolicy(
                    LocalOptions(weights=shipped, **local_options), config=config
                ),
                config,
            )
            lower_local = run(
                lower,
                store,
                lambda t: LocalPolicy(
                    LocalOptions(weights=shipped, **local_options), config=config
                ),
                config,
            )
            tag = "shipped"
        else:
            lower_local = run(
                lower,
                store,
                lambda t, w=which, tw=twin: LocalPolicy(
                    LocalOptions(weights=w[tw[t.task_id]], **local_options), config=config
                ),
                config,
            )
            cased_local, tag = held_local.get(name, []), "held-out"
        print(summary(f"local {tag} (cased)", cased_local))
        print(summary(f"local {tag} (lower)", lower_local), flush=True)
        print(
            f"  lowercase change, recall@5 points: single-shot "
            f"{mean_recall(lower_single) - mean_recall(cased_single):+.1f}, local "
            f"{mean_recall(lower_local) - mean_recall(cased_local):+.1f}",
            flush=True,
        )
        store.close()


def tune_for(
    pair: str,
    limit: int,
    name: str,
    dev_tasks: list[Task],
    stores: dict[str, EmbeddedStore],
    weights: LocalWeights,
    config: Config,
) -> dict[str, float | int]:
    """Controls tuned by reward on the tasks of ``pair`` (FILE:DIR or FILE:dataset)."""
    file, _, index = pair.rpartition(":")
    tune_tasks = group_tasks([file])
    if index in stores:  # mined from a dev corpus: stay clear of every dev question's gold
        gold = {d for t in dev_tasks for d in t.gold_doc_ids}
        tune_tasks = [t for t in tune_tasks if not set(t.gold_doc_ids) & gold]
        store = stores[index]
    else:
        store = EmbeddedStore(Path(index), config)
    tune_tasks = tune_tasks[:limit]
    t0 = time.perf_counter()
    try:
        report = tune_controls(LocalEpisodes([(tune_tasks, store)], config), weights)
    finally:
        if index not in stores:
            store.close()
    print(f"  tuned on {len(tune_tasks)} tasks of {file} in {time.perf_counter() - t0:.0f}s:")
    for line in report.lines():
        print("   " + line)
    return dict(report.chosen.controls)


LEARNED = ("hybrid-rerank", "no-prune", "local")
"""The rows that need feature rows collected (the baselines do not)."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--dataset", choices=[*DATASETS, *GROUPS], default="all", help="all = the three pools"
    )
    ap.add_argument("--limit", type=int, default=0, help="first N questions of each task file")
    ap.add_argument("--cache", default="/tmp/thresher-dev-index", help="index folder")
    ap.add_argument("--data", default=str(DEV), help="the dev data folder")
    ap.add_argument("--shipped", action="store_true", help="also run the shipped weights")
    ap.add_argument(
        "--weights",
        metavar="FILE",
        help="the weights file whose constants the held-out fits carry and that the shipped"
        " rows load (default: the shipped file)",
    )
    ap.add_argument("--only", nargs="*", help="policy names to run (default all)")
    ap.add_argument("--warm", type=int, default=30, help="episodes re-run warm for ms")
    ap.add_argument(
        "--extra-train",
        action="append",
        default=[],
        metavar="FILE:DIR",
        help="extra training tasks and their index, added to every fold (repeatable)",
    )
    ap.add_argument("--extra-weight", type=float, default=1.0, help="weight of extra rows")
    ap.add_argument("--curriculum", type=int, default=0, help="curriculum draws of extra tasks")
    ap.add_argument(
        "--tune",
        action="append",
        default=[],
        metavar="FILE:DIR",
        help="tune the local controls on these tasks (DIR a dataset name: that dataset only)",
    )
    ap.add_argument("--tune-limit", type=int, default=200, help="tasks used by --tune")
    ap.add_argument(
        "--order",
        choices=["lambdarank", "none"],
        default="lambdarank",
        help="the final answer's order: LambdaRank (default) or the ranker's probabilities",
    )
    ap.add_argument(
        "--local",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a LocalPolicy option for the local and no-prune rows (e.g. max_hops=4; repeatable)",
    )
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a config override for every index and run (e.g. retrieval.embedder=minilm-int8-dq)",
    )
    ap.add_argument("--lodo", action="store_true", help="leave-one-dataset-out local rows")
    ap.add_argument("--lowercase", action="store_true", help="lowercased pools: single-shot, local")
    ap.add_argument("--realfolder", action="store_true", help="the real folder's questions")
    ap.add_argument(
        "--realfolder-size",
        choices=["small", "large", "all"],
        default="small",
        help="small: 77 account/login documents; large: among every man page (sections"
        " 1, 5, 7, 8; no gcloud reference) and README/copyright file; all: with gcloud's",
    )
    ap.add_argument(
        "--realfolder-reuse",
        action="store_true",
        help="keep the real folder an earlier run built (its index is updated incrementally)",
    )
    ap.add_argument(
        "--no-dev",
        action="store_true",
        help="skip collection and the held-out dev rows (--lowercase then uses shipped weights)",
    )
    args = ap.parse_args(argv)
    shipped = load_weights(args.weights)
    print(f"weights {args.weights or 'shipped'}; constants: {shipped.constants.tuned_on}")
    local_options = parse_local(args.local)
    # collection runs the hops the local rows may take (stop_at aside: it runs them all)
    collect_opts = {k: v for k, v in local_options.items() if k != "stop_at"}
    names = GROUPS.get(args.dataset, [args.dataset])
    config = Config().override(dict(kv.split("=", 1) for kv in args.set))
    stores: dict[str, EmbeddedStore] = {}
    tasks: dict[str, list[Task]] = {}
    indexes: dict[str, Path] = {}
    for name in names:
        t0 = time.perf_counter()
        files = [Path(args.data) / f for f in DATASETS[name]]
        indexes[name] = ensure_index(files, Path(args.cache) / name, config)
        stores[name] = EmbeddedStore(indexes[name], config)
        tasks[name] = pool_tasks(name, Path(args.data), args.limit)
        print(
            f"{name}: {len(tasks[name])} questions, {stores[name].stats().documents} docs "
            f"(index ready in {time.perf_counter() - t0:.1f}s)",
            flush=True,
        )
    # one collection of feature rows per dataset with the bootstrap weights
    collected: dict[str, TrainingData] = {}
    learned_wanted = not args.only or any(p in args.only for p in LEARNED)
    for name in [] if args.no_dev or not learned_wanted else names:
        t0 = time.perf_counter()
        collected[name] = collect(
            tasks[name], stores[name], prior_weights(), config=config, policy_options=collect_opts
        )
        print(f"collected {name} rows in {time.perf_counter() - t0:.0f}s", flush=True)
    merged = TrainingData()
    for d in collected.values():
        merged.extend(d)
    extra: TrainingData | None = None
    extra_docs: dict[str, set[str]] = {}
    for n, pair in enumerate(args.extra_train):
        file, _, index = pair.rpartition(":")
        extra_tasks = group_tasks([file])
        for t in extra_tasks:  # ids unique across files (synthetic ids restart per file)
            t.task_id = f"x{n}:{t.task_id}"
            extra_docs[t.task_id] = set(t.gold_doc_ids)
        if args.curriculum:
            extra_tasks = curriculum_tasks(extra_tasks, args.curriculum)
        t0 = time.perf_counter()
        if index in stores:
            rows = collect_repeats(
                extra_tasks,
                stores[index],
                prior_weights(),
                config=config,
                policy_options=collect_opts,
            )
        else:
            with EmbeddedStore(Path(index), config) as extra_store:
                rows = collect_repeats(
                    extra_tasks,
                    extra_store,
                    prior_weights(),
                    config=config,
                    policy_options=collect_opts,
                )
        extra = extra or TrainingData()
        extra.extend(rows.weighted(args.extra_weight) if args.extra_weight != 1.0 else rows)
        print(
            f"collected {len(extra_tasks)} extra tasks from {file} in "
            f"{time.perf_counter() - t0:.0f}s",
            flush=True,
        )

    def wanted(policy: str) -> bool:
        return not args.only or policy in args.only

    held_local: dict[str, list[Row]] = {}  # the held-out local rows, per pool
    held_weights: dict[str, dict[str, LocalWeights]] = {}  # per pool: task id -> weights
    lodo_local: dict[str, list[Row]] = {}

    for name in [] if args.no_dev else names:
        store, ts = stores[name], tasks[name]
        others = {t.task_id for n, tl in tasks.items() if n != name for t in tl}
        print(f"\n{name} (pooled, {len(ts)} questions); learned policies held-out")
        print(HEADER)
        baselines: list[tuple[str, Callable[[Task], object], dict[str, str]]] = [
            ("bm25 single-shot", lambda t: Bm25SingleShotPolicy(), {"retrieval.mode": "bm25"}),
            ("dense single-shot", lambda t: DenseSingleShotPolicy(), {"retrieval.mode": "dense"}),
            ("hybrid single-shot", lambda t: SingleShotPolicy(), {}),
        ]
        for label, make, over in baselines:
            if wanted(label.split()[0]):
                print(summary(label, run(ts, store, make, config.override(over))), flush=True)
        if not learned_wanted:
            continue
        splits = held_out_models(
            name,
            ts,
            merged,
            others,
            extra,
            extra_docs,
            order=args.order == "lambdarank",
            constants=shipped.constants,
        )
        which = {t.task_id: w for evaluated, w in splits for t in evaluated}
        held_weights[name] = which
        learned: list[tuple[str, Callable[[LocalWeights], object]]] = [
            (
                "hybrid-rerank",
                lambda w: hybrid_rerank_policy(replace(HYBRID_RERANK, weights=w), config=config),
            ),
            # the same search as the local rows (their options), pruning off
            (
                "no-prune",
                lambda w: no_prune_policy(LocalOptions(weights=w, **local_options), config=config),
            ),
            (
                "local",
                lambda w: LocalPolicy(LocalOptions(weights=w, **local_options), config=config),
            ),
        ]
        for label, factory in learned:
            if not wanted(label):
                continue

            def make(
                t: Task,
                f: Callable[[LocalWeights], object] = factory,
                by_task: dict[str, LocalWeights] = which,
            ) -> object:
                return f(by_task[t.task_id])

            rows = run(ts, store, make, config)
            if label == "local":
                held_local[name] = rows
            warm: list[float] = []
            if label == "local" and args.warm:
                warm = [r.ms for r in run(ts[: args.warm], store, make, config)]
            print(summary(label + " (held-out)", rows, warm), flush=True)
        if args.lodo and others and wanted("local"):
            lodo_w = lodo_model(
                ts,
                merged,
                others,
                extra,
                extra_docs,
                args.order == "lambdarank",
                constants=shipped.constants,
            )
            rows = run(
                ts,
                store,
                lambda t, w=lodo_w: LocalPolicy(
                    LocalOptions(weights=w, **local_options), config=config
                ),
                config,
            )
            lodo_local[name] = rows
            print(summary("local (LODO)", rows), flush=True)
            if name in held_local:
                drop = mean_recall(held_local[name]) - mean_recall(rows)
                print(f"  LODO drop: {drop:+.1f} points recall@5 (held-out minus LODO)", flush=True)
        own = [p for p in args.tune if p.rpartition(":")[2] == name]
        shared = [p for p in args.tune if p.rpartition(":")[2] not in DATASETS]
        tune_pair = (own or shared or [None])[0]
        if tune_pair and wanted("local"):
            controls = tune_for(tune_pair, args.tune_limit, name, ts, stores, splits[0][1], config)

            def make_tuned(
                t: Task,
                c: dict[str, float | int] = controls,
                by_task: dict[str, LocalWeights] = which,
            ) -> object:
                return LocalPolicy(
                    LocalOptions(weights=replace(by_task[t.task_id], controls=c)), config=config
                )

            rows = run(ts, store, make_tuned, config)
            tuned_warm = [r.ms for r in run(ts[: args.warm], store, make_tuned, config)]
            print(summary("local (tuned, held-out)", rows, tuned_warm), flush=True)
        if args.shipped:
            for label, factory in learned:
                if wanted(label):
                    rows = run(ts, store, lambda t, f=factory: f(shipped), config)
                    print(summary(label + " (shipped)", rows), flush=True)
    if args.lowercase:
        lowercase_section(
            names,
            tasks,
            stores,
            indexes,
            held_weights,
            held_local,
            args,
            config,
            local_options,
            shipped,
        )
    for s in stores.values():
        s.close()
    if args.realfolder:
        real_folder(
            Path(args.cache),
            config,
            wanted,
            args.realfolder_size,
            args.realfolder_reuse,
            shipped,
        )
    if args.lodo and lodo_local:
        print("\nleave-one-dataset-out, local recall@5: held-out folds / LODO / drop")
        for name, rows in lodo_local.items():
            held = mean_recall(held_local.get(name, []))
            print(
                f"  {name:<10} {held:6.1f} {mean_recall(rows):6.1f} {held - mean_recall(rows):+6.1f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
