"""The synthesis pipeline: explore -> extend -> phrase -> verify -> distract, over any store.

:func:`synthesize_tasks` reads the corpus once through the ``Store``
protocol, then walks seed chunks in a seeded order. Per seed it draws a hop
count (``hop_weights``), grows a chain of that many hops (falling back to
fewer), phrases a question, runs the checks of :mod:`thresher.tasks.generate.verify`
(cheapest first), mines distractors, and keeps the task, or counts the
rejection under its reason. It stops at ``n`` kept tasks or when the seeds run out.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Literal

from thresher.batch.runner import LocalRunner, Runner
from thresher.batch.stores import StoreRef, StoreSource, resolve_store
from thresher.errors import ConfigError, InputError
from thresher.tasks.generate.checking import StoreChecks, prepare, settle
from thresher.tasks.generate.explore import CorpusView, ExploreConfig, read_corpus
from thresher.tasks.generate.extend import Chain, build_chain, extend_chain
from thresher.tasks.generate.phrase import LLMPhraser, Phrasing
from thresher.tasks.generate.verify import REASONS
from thresher.tasks.synthetic import Evidence, SynthTask

__all__ = [
    "SynthReport",
    "synthesize_tasks",
    "candidate_chains",
    "difficulty",
    "DEFAULT_HOP_WEIGHTS",
    "PHRASINGS",
]

DEFAULT_HOP_WEIGHTS: dict[int, float] = {2: 0.3, 3: 0.3, 4: 0.4}
#: the offline phrasings :func:`synthesize_tasks` takes (``auto`` picks one by the corpus)
PHRASINGS = ("auto", "clues", "sentences", "salient")


@dataclass
class SynthReport:
    """What a synthesis run produced and rejected.

    Attributes:
        tasks: the kept tasks, in the order found.
        requested: the ``n`` asked for.
        candidates: chains that reached phrasing (plus seeds that gave no chain).
        rejected: candidates rejected, by reason (every reason of ``REASONS``, zeros included).
        passed: candidates that passed each check.
        by_hops: kept tasks by hop count.
        chunks, documents: the corpus size read.
        single_shot_recall: mean share of evidence chunks that single-shot hybrid
            top-``k`` returned, over kept tasks.
        k: the single-shot cut.
        search: what the chain search read and refused before any candidate
            formed: ``sentences``, ``fact_sentences`` and refused candidate hops
            by reason (``ambiguous_hop``), counted over this run.
        failed: the errors of candidates whose store checks failed twice (counted
            as candidates, neither kept nor rejected by a check).
        seconds: wall time (reading the corpus included); read_seconds: reading alone.
    """

    tasks: list[SynthTask] = field(default_factory=list)
    requested: int = 0
    mode: str = "offline"
    phrasing: str = "clues"
    seed: int = 0
    candidates: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    passed: dict[str, int] = field(default_factory=dict)
    by_hops: dict[int, int] = field(default_factory=dict)
    chunks: int = 0
    documents: int = 0
    single_shot_recall: float = 0.0
    k: int = 5
    search: dict[str, int] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    seconds: float = 0.0
    read_seconds: float = 0.0

    @property
    def kept(self) -> int:
        return len(self.tasks)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe summary (without the tasks themselves)."""
        return {
            "mode": self.mode,
            "phrasing": self.phrasing,
            "seed": self.seed,
            "requested": self.requested,
            "kept": self.kept,
            "candidates": self.candidates,
            "rejected": dict(self.rejected),
            "passed": dict(self.passed),
            "by_hops": {str(h): n for h, n in sorted(self.by_hops.items())},
            "chunks": self.chunks,
            "documents": self.documents,
            "search": dict(self.search),
            "failed": len(self.failed),
            f"single_shot_recall@{self.k}": round(self.single_shot_recall, 4),
            "seconds": round(self.seconds, 2),
            "read_seconds": round(self.read_seconds, 2),
        }


def difficulty(hops: int, found: int) -> float:
    """``0.5 * (hops - 2) / 2 + 0.5 * (1 - found / hops)``: more hops and fewer
    evidence chunks in single-shot top-k make a task harder (0 easiest, 1 hardest)."""
    return round(0.5 * (hops - 2) / 2 + 0.5 * (1 - found / hops), 3)


def _draw_hops(weights: Mapping[int, float], rng: random.Random) -> int:
    hops = sorted(weights)
    return rng.choices(hops, weights=[weights[h] for h in hops])[0]


def _chain_for(
    view: CorpusView,
    seed_chunk: str,
    target: int,
    cfg: ExploreConfig,
    rng: random.Random,
    strict: bool = False,
) -> Chain | None:
    """A chain of ``target`` hops from the seed, else the longest found (at least 2).

    Tries ``target`` hops, then fewer; a shorter chain is then extended hop by
    hop through its answer (:func:`extend_chain`) while that works. ``strict``:
    exactly ``target`` hops or None.
    """
    for n in range(target, 1 if not strict else target - 1, -1):
        chain = build_chain(view, seed_chunk, n, cfg, rng)
        if chain is None:
            continue
        while len(chain.hops) < target:
            longer = extend_chain(view, chain, cfg, rng)
            if longer is None:
                break
            chain = longer
        return chain if not strict or len(chain.hops) == target else None
    return None


def candidate_chains(
    view: CorpusView,
    seed: int,
    hop_weights: Mapping[int, float] | Callable[[], Mapping[int, float]],
    cfg: ExploreConfig,
    strict_hops: bool = False,
) -> Iterator[tuple[str, random.Random, Chain | None]]:
    """Every seed chunk in the run's order with its RNG and chain (None: no chain from it).

    The seed chunks are the corpus's chunk ids sorted, then shuffled by
    ``Random(seed)``; each gets its own ``Random(f"{seed}:{chunk_id}")``, which
    draws the hop count and then grows the chain (and later picks a template).
    With ``strict_hops`` a seed that gives no chain of the drawn length gives
    None. ``hop_weights`` may be a function, asked again before every seed.
    """
    seeds = sorted(view.chunks)
    random.Random(seed).shuffle(seeds)
    for seed_chunk in seeds:
        rng = random.Random(f"{seed}:{seed_chunk}")
        weights = hop_weights() if callable(hop_weights) else hop_weights
        target = _draw_hops(weights, rng)
        yield seed_chunk, rng, _chain_for(view, seed_chunk, target, cfg, rng, strict_hops)


def synthesize_tasks(
    store: StoreSource,
    n: int,
    seed: int = 0,
    mode: Literal["offline", "llm"] = "offline",
    *,
    hop_weights: Mapping[int, float] | None = None,
    explore: ExploreConfig | None = None,
    k: int = 5,
    n_distractors: int = 8,
    min_distractors: int = 2,
    phraser: LLMPhraser | None = None,
    view: CorpusView | None = None,
    strict_hops: bool = False,
    progress: bool = False,
    runner: Runner | None = None,
    phrasing: Literal["auto", "clues", "sentences", "salient"] = "auto",
) -> SynthReport:
    """Synthesize up to ``n`` verified multi-hop tasks from the corpus behind ``store``.

    Args:
        store: any ``Store`` (only its protocol methods are used), or a
            :class:`~thresher.batch.stores.StoreRef` (required by a remote runner).
        n: tasks wanted.
        seed: seeds the order of seed chunks, hop draws and templates; equal
            inputs give equal tasks.
        mode: ``offline`` (template questions) or ``llm`` (questions phrased and
            checked by a chat model, see :class:`LLMPhraser`).
        hop_weights: hop count -> weight (default 2: 0.3, 3: 0.3, 4: 0.4).
        explore: exploration knobs.
        k: the single-shot cut (a task whose evidence is all in the top ``k`` is rejected).
        n_distractors, min_distractors: distractors wanted, and the fewest accepted.
        phraser: the LLM phraser, required in LLM mode (tasks sit below the LLM
            client, so the caller builds it, as the CLI does from ``config.llm``).
        view: an already-read corpus (skips reading the store).
        strict_hops: keep only chains of the drawn hop count (else fall back
            to fewer hops), and fill a quota of ``n * weight`` tasks per hop
            count (a full hop count is no longer drawn), so the kept tasks
            follow ``hop_weights`` when the corpus has enough seeds.
        progress: show a tqdm bar.
        phrasing: offline questions from the hops' own sentences (``sentences``,
            :func:`~thresher.tasks.generate.phrase.phrase_sentences`) or as lettered
            clues (``clues``), or each hop named by a few of its sentence's rarest
            words (``salient``, :func:`~thresher.tasks.generate.phrase.phrase_salient`);
            ``auto``: sentences when the corpus reads as documentation
            (:attr:`CorpusView.is_documentation`), else clues.
        runner: where the store checks run (:mod:`thresher.tasks.generate.checking`);
            default: one at a time here. Any runner keeps the same tasks and counts.

    Returns:
        A :class:`SynthReport` with the kept tasks and the counts per check.

    Raises:
        InputError: ``n`` < 1, an unknown mode, hop weights outside 2..8, or LLM mode
            without a phraser.
        ConfigError: an open store given to a remote runner.
        EndpointUnavailableError / EndpointRequestError: LLM mode, endpoint down or refusing.
    """
    if n < 1:
        raise InputError(f"n must be at least 1, got {n}")
    if mode not in ("offline", "llm"):
        raise InputError(f"mode must be 'offline' or 'llm', got {mode!r}")
    if phrasing not in PHRASINGS:
        raise InputError(f"phrasing must be one of {', '.join(PHRASINGS)}, got {phrasing!r}")
    weights = dict(hop_weights or DEFAULT_HOP_WEIGHTS)
    if not weights or any(h < 2 or h > 8 for h in weights) or sum(weights.values()) <= 0:
        raise InputError(f"hop weights must name hop counts 2..8 with positive total: {weights}")
    if mode == "llm" and phraser is None:
        raise InputError(
            "mode 'llm' needs a phraser: pass phraser=LLMPhraser(ChatClient(settings)) "
            "(thresher.llm.client; `thresher synth-tasks --mode llm` builds it from the config)"
        )
    cfg = explore or ExploreConfig()
    active = runner or LocalRunner(1)
    if active.remote and not isinstance(store, StoreRef):
        raise ConfigError(
            f"the {active.name} runner opens the index in its workers: pass "
            "StoreRef(location, config) instead of an open store"
        )
    started = time.perf_counter()
    if view is None:
        view = read_corpus(resolve_store(store))
    report = SynthReport(requested=n, mode=mode, seed=seed, k=k)
    report.read_seconds = time.perf_counter() - started
    report.chunks, report.documents = len(view.chunks), view.n_docs
    if phrasing == "auto":
        phrasing = "sentences" if view.is_documentation else "clues"
    report.phrasing = phrasing
    rejected: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    refused_before = Counter(view.refused)
    seen_keys: set[tuple[str, ...]] = set()
    recall_sum = 0.0
    bar = _bar(n, progress)
    with contextlib.ExitStack() as cleanup:  # on the way out: the bar, then the runner
        if runner is None:
            cleanup.callback(active.close)
        if bar is not None:
            cleanup.callback(bar.close)
        total = sum(weights.values())
        quota = {h: max(1, round(n * w / total)) for h, w in weights.items() if w > 0}

        def open_weights() -> Mapping[int, float]:
            """The weights of the hop counts whose quota is not full (strict mode)."""
            left = {h: weights[h] for h in quota if report.by_hops.get(h, 0) < quota[h]}
            return left or weights

        draw = open_weights if strict_hops else weights
        candidates = candidate_chains(view, seed, draw, cfg, strict_hops)
        checks = StoreChecks(store, k, n_distractors)
        while report.kept < n:
            # every candidate of a batch is settled (at most n - kept), and none can
            # fill a hop quota before the last one is drawn: weights stay as sequential
            size = min(_batch_limit(active), n - report.kept)
            if strict_hops:
                left = [q - report.by_hops.get(h, 0) for h, q in quota.items()]
                size = min([size, *(x for x in left if x > 0)])
            batch = list(islice(candidates, max(1, size)))
            if not batch:
                break
            prepared = [
                None
                if chain is None
                else prepare(view, chain, mode, phraser, rng, seen_keys, phrasing)
                for _seed_chunk, rng, chain in batch
            ]
            requests = [p.request for p in prepared if p is not None and p.request is not None]
            results = iter(active.map(checks, requests))
            for p in prepared:
                report.candidates += 1
                if p is None:
                    rejected["no_chain"] += 1
                    continue
                passed["no_chain"] += 1
                result = next(results) if p.request is not None else None
                outcome = settle(p, result, mode, phraser, min_distractors, seen_keys, passed)
                if outcome == "check_failed":
                    report.failed.append(result.error if result and result.error else "failed")
                    continue
                if isinstance(outcome, str):
                    rejected[outcome] += 1
                    continue
                task = _task(report.kept, seed, p.chain, outcome.phrasing, outcome.found,
                             outcome.distractors, mode, k)  # fmt: skip
                report.tasks.append(task)
                report.by_hops[task.hops] = report.by_hops.get(task.hops, 0) + 1
                recall_sum += outcome.found / task.hops
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(rejected=sum(rejected.values()), refresh=False)
    report.rejected = {r: rejected.get(r, 0) for r in REASONS}
    report.passed = {r: passed.get(r, 0) for r in REASONS}
    report.single_shot_recall = recall_sum / report.kept if report.kept else 0.0
    report.search = {**view.sentence_counts(), **(view.refused - refused_before)}
    report.seconds = time.perf_counter() - started
    return report


def _bar(n: int, progress: bool) -> Any:
    if not progress:
        return None
    from tqdm import tqdm

    return tqdm(total=n, desc="synth tasks", unit="task", disable=None)


def _batch_limit(runner: Runner) -> int:
    """Candidates checked per batch: one at a time on one worker, else 8 per worker."""
    return 1 if runner.workers == 1 else 8 * runner.workers


def _task(
    index: int,
    seed: int,
    chain: Chain,
    phrasing: Phrasing,
    found: int,
    distractors: list[str],
    mode: str,
    k: int,
) -> SynthTask:
    hops = len(chain.hops)
    evidence = tuple(
        Evidence(i + 1, (h.chunk_id,), h.doc_id, h.sentence, h.out if i < hops - 1 else None)
        for i, h in enumerate(chain.hops)
    )
    numbers = (chain.answer.replace(",", ""),) if chain.answer_kind == "number" else ()
    aliases = tuple(a for a in numbers if a != chain.answer)
    return SynthTask(
        task_id=f"synth-{seed}-{index:05d}",
        question=phrasing.question,
        answer=chain.answer,
        evidence=evidence,
        final_chunk_id=chain.hops[-1].chunk_id,
        answer_aliases=aliases,
        distractor_ids=tuple(distractors),
        difficulty=difficulty(hops, found),
        anchor=chain.anchor,
        mode=mode,
        seed=seed,
        checks={
            f"single_shot_found@{k}": found,
            "quotes": len(phrasing.quotes),
            "answer_kind": chain.answer_kind,
        },
    )
