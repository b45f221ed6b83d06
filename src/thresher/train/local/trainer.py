"""Training the local policy: run episodes on tasks, label what was seen, fit, save.

1. :func:`collect` runs the local policy (with the current weights) on each
   task through the real harness and records the feature rows it computes:
   every candidate pool a search returned (``pool``), the cached chunks at the
   final ranking (``final``), and the state at each stop decision (``stop``).
   Chunks are labelled 1 when their document is gold; a stop state is
   labelled 1 when the current top ``k`` already holds every gold document
   the episode's searches ever show (run to the last hop): hopping on from
   there finds nothing the answer lacks.
2. :func:`fit_weights` fits ``base`` on base features, ``full`` on base and
   link features (both logistic by default, pools and finals pooled),
   ``final`` on the final rows alone (the final ranking's own distribution),
   and ``stop`` on stop states. The recipe's columns (:data:`RECIPE_BASE`,
   :data:`RECIPE_FULL`) leave the question-search rank features
   (:data:`~thresher.policies.local.features.RANK_FEATURES`) out; the order model
   reads them when asked (``order_features``, as ``thresher adapt --features rank``
   does).
3. :func:`train` does two rounds (the second collects with the first round's
   weights, so features match the policy's own behaviour) and saves.

:func:`curriculum_tasks` orders (and re-weights by repetition) a pool of
synthetic tasks by a :class:`~thresher.train.curriculum.Curriculum`: 2-hop
tasks first, 4-hop tasks last; a task drawn twice contributes its rows twice.

Held-out figures come from :func:`train` on some questions and
``bench/bench_policies.py`` on the others.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from thresher.config import Config
from thresher.index.store import Store
from thresher.policies.local.candidate import Candidate
from thresher.policies.local.features import BASE_FEATURES, LINK_FEATURES, RANK_FEATURES
from thresher.policies.local.models import LocalWeights, Model
from thresher.policies.local.stop import STOP_FEATURES
from thresher.tasks.task import Task
from thresher.train.local.fit import fit_lambdarank, fit_logistic, fit_mlp, prior_model

__all__ = [
    "FULL_FEATURES",
    "RECIPE_BASE",
    "RECIPE_FULL",
    "TrainingData",
    "prior_weights",
    "collect",
    "collect_repeats",
    "curriculum_tasks",
    "fit_weights",
    "train",
]

#: the columns of a full-feature row the policy computes (base, then link features)
FULL_FEATURES = BASE_FEATURES + LINK_FEATURES
#: the base columns the recipe fits on: all but the question-search rank features (a
#: global refit with them did worse on the dev pools; docs/local-policy.md, "Do no harm")
RECIPE_BASE = tuple(f for f in BASE_FEATURES if f not in RANK_FEATURES)
#: the full columns the recipe fits on (:data:`RECIPE_BASE`, then the link features)
RECIPE_FULL = RECIPE_BASE + LINK_FEATURES
_BASE_COLS = [BASE_FEATURES.index(f) for f in RECIPE_BASE]
_FULL_COLS = [FULL_FEATURES.index(f) for f in RECIPE_FULL]


def prior_weights() -> LocalWeights:
    """Hand-set weights to bootstrap the first round of data collection."""
    base = {
        "bm25_q_norm": 2.0,
        "dense_q": 4.0,
        "dense_q_gap": 4.0,
        "bm25_s_norm": 1.0,
        "dense_s": 1.0,
        "inv_log_rank": 1.0,
        "title_in_q": 2.0,
        "title_cov_q": 1.0,
        "q_cov": 1.0,
        "title_in_s": 1.5,
        "title_cov_s": 1.0,
        "via_held": 1.0,
        "ask_cov": 1.0,
    }
    full = dict(base, linked_to=2.0, links_from=0.5, complement=1.0, redundancy=-0.5)
    return LocalWeights(
        prior_model(RECIPE_BASE, base, -6.0),
        prior_model(RECIPE_FULL, full, -6.0),
        None,
        {"kind": "prior", "note": "hand-set bootstrap weights"},
    )


@dataclass
class TrainingData:
    """Labelled feature rows, with the question each came from (for grouped splits)."""

    base: list[np.ndarray] = field(default_factory=list)
    full: list[np.ndarray] = field(default_factory=list)
    labels: list[np.ndarray] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    stop_x: list[np.ndarray] = field(default_factory=list)
    stop_y: list[float] = field(default_factory=list)
    stop_groups: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)  # per block: pool or final
    weights: list[float] = field(default_factory=list)  # per block; empty: all 1.0
    stop_weights: list[float] = field(default_factory=list)  # per stop row; empty: all 1.0

    def _block_weights(self) -> list[float]:
        return self.weights or [1.0] * len(self.labels)

    def stop_sample_weights(self) -> list[float]:
        """Per-stop-row weights (1.0 unless set)."""
        return self.stop_weights or [1.0] * len(self.stop_y)

    def extend(self, other: TrainingData) -> None:
        """Append ``other``'s rows (with their sample weights)."""
        weights = self._block_weights() + other._block_weights()
        stop_weights = self.stop_sample_weights() + other.stop_sample_weights()
        for name in self.__dataclass_fields__:
            if name not in ("weights", "stop_weights"):
                getattr(self, name).extend(getattr(other, name))
        self.weights, self.stop_weights = weights, stop_weights

    def weighted(self, factor: float) -> TrainingData:
        """A copy whose every row counts ``factor`` times in the fits (e.g. 0.3 for
        synthetic rows next to real ones). Raises ``ValueError`` unless ``factor`` > 0."""
        if not factor > 0:
            raise ValueError(f"weighted: factor must be > 0, got {factor}")
        out = TrainingData()
        out.extend(self)
        out.weights = [w * factor for w in out.weights]
        out.stop_weights = [w * factor for w in out.stop_weights]
        return out

    def subset(self, keep: set[str]) -> TrainingData:
        """The rows of the questions (task ids) in ``keep``."""
        out = TrainingData()
        start = 0
        kinds = self.kinds or ["pool"] * len(self.labels)
        blocks = zip(self.base, self.full, self.labels, kinds, self._block_weights(), strict=True)
        for b, f, y, k, w in blocks:
            groups = self.groups[start : start + len(y)]
            start += len(y)
            if groups and groups[0] in keep:
                out.base.append(b)
                out.full.append(f)
                out.labels.append(y)
                out.groups.extend(groups)
                out.kinds.append(k)
                out.weights.append(w)
        stops = zip(
            self.stop_x, self.stop_y, self.stop_groups, self.stop_sample_weights(), strict=True
        )
        for sx, sy, sg, sw in stops:
            if sg in keep:
                out.stop_x.append(sx)
                out.stop_y.append(sy)
                out.stop_groups.append(sg)
                out.stop_weights.append(sw)
        return out

    def arrays(self, kind: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Stacked (base, full, labels) rows, of one block kind or all."""
        kinds = self.kinds or ["pool"] * len(self.labels)
        pick = [i for i, k in enumerate(kinds) if kind is None or k == kind]
        if not pick:
            return np.zeros((0, len(BASE_FEATURES))), np.zeros((0, len(FULL_FEATURES))), np.zeros(0)
        return (
            np.vstack([self.base[i] for i in pick]),
            np.vstack([self.full[i] for i in pick]),
            np.concatenate([self.labels[i] for i in pick]),
        )

    def sample_weights(self, kind: str | None = None) -> np.ndarray:
        """Per-row weights matching :meth:`arrays` (same ``kind``)."""
        kinds = self.kinds or ["pool"] * len(self.labels)
        bw = self._block_weights()
        pick = [i for i, k in enumerate(kinds) if kind is None or k == kind]
        if not pick:
            return np.zeros(0)
        return np.concatenate([np.full(len(self.labels[i]), bw[i]) for i in pick])


def collect(
    tasks: Iterable[Task],
    store: Store,
    weights: LocalWeights,
    *,
    config: Config | None = None,
    policy_options: dict[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
    top_k: int = 5,
) -> TrainingData:
    """Run the local policy on ``tasks`` and return labelled feature rows.

    Args:
        tasks: tasks whose gold documents are in ``store``.
        store: the index.
        weights: the weights the policy runs with while collecting.
        config: harness settings.
        policy_options: extra LocalPolicy options.
        progress: called with the number of episodes done.
        top_k: a stop state is sufficient when this top holds every gold document the
            episode's searches show, run to its last hop.
    """
    from thresher.harness.episode import run_episode
    from thresher.policies.local.options import LocalOptions
    from thresher.policies.local.policy import LocalPolicy

    data = TrainingData()
    cfg = config or Config()
    for n, task in enumerate(tasks, 1):
        gold = set(task.gold_doc_ids)
        # held per episode and added in (hop, subquery) order: the rows are the same, in
        # the same order, on every run (the harness reranks in call order anyway)
        pools: list[tuple[int, str, np.ndarray, np.ndarray, np.ndarray]] = []
        finals: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        stops: list[tuple[np.ndarray, set[str]]] = []  # state features, top-k documents
        shown: set[str] = set()  # every document a search of the episode showed

        def record(
            kind: str,
            question: str,
            cands: list[Candidate],
            bx: np.ndarray,
            lx: np.ndarray,
            gold: set[str] = gold,
            task_id: str = task.task_id,
            pools: list[tuple[int, str, np.ndarray, np.ndarray, np.ndarray]] = pools,
            finals: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = finals,
            stops: list[tuple[np.ndarray, set[str]]] = stops,
            shown: set[str] = shown,
        ) -> None:
            if kind == "stop":
                stops.append((bx[0], {c.chunk.doc_id for c in cands[:top_k]}))
                return
            if kind == "shown":
                shown.update(c.chunk.doc_id for c in cands)
                return
            if not cands:
                return
            labels = np.asarray([c.chunk.doc_id in gold for c in cands], dtype=float)
            full = np.hstack([bx, lx])
            if kind == "pool":
                pools.append((cands[0].hop, cands[0].subquery, bx, full, labels))
            else:
                finals.append((bx, full, labels))

        options = {"stop_at": 1.01, **(policy_options or {})}
        policy = LocalPolicy(LocalOptions(weights=weights, **options), recorder=record)
        run_episode(task.question, store, policy, cfg)
        # a stop state is sufficient when its top k already holds every gold document
        # the whole search (every hop the controls allow) ever showed: hopping on
        # would find nothing more
        reached = gold & shown
        for x, top in stops:
            data.stop_x.append(x)
            data.stop_y.append(float(reached <= top))
            data.stop_groups.append(task.task_id)
        blocks = [("pool", b, f, y) for _, _, b, f, y in sorted(pools, key=lambda p: p[:2])]
        blocks += [("final", b, f, y) for b, f, y in finals]
        for kind, bx, full, labels in blocks:
            data.base.append(bx)
            data.full.append(full)
            data.labels.append(labels)
            data.groups.extend([task.task_id] * len(labels))
            data.kinds.append(kind)
        if progress is not None:
            progress(n)
    return data


def collect_repeats(
    tasks: Sequence[Task],
    store: Store,
    weights: LocalWeights,
    *,
    config: Config | None = None,
    policy_options: dict[str, Any] | None = None,
) -> TrainingData:
    """:func:`collect`, running each distinct task id once and repeating its rows per
    occurrence in ``tasks`` (a curriculum draw's repeats weight its rows)."""
    ids = [t.task_id for t in tasks]
    opts = policy_options
    if len(set(ids)) == len(ids):
        return collect(tasks, store, weights, config=config, policy_options=opts)
    once: dict[str, TrainingData] = {}
    for task in tasks:
        if task.task_id not in once:
            once[task.task_id] = collect([task], store, weights, config=config, policy_options=opts)
    out = TrainingData()
    for task_id in ids:
        out.extend(once[task_id])
    return out


def curriculum_tasks(tasks: Sequence[Task], steps: int, *, seed: int = 0) -> list[Task]:
    """``steps`` draws from ``tasks`` by a :class:`Curriculum` over ``steps`` steps (hops
    2 -> 4), one per step, in step order (repeats kept).

    Raises ``InputError`` when ``tasks`` is empty or ``steps`` < 2.
    """
    from thresher.errors import InputError
    from thresher.train.curriculum import Curriculum, CurriculumSampler

    if steps < 2:
        raise InputError(f"curriculum steps must be >= 2, got {steps}; pass e.g. 500")
    sampler = CurriculumSampler(list(tasks), Curriculum(total_steps=steps - 1), seed=seed)
    return [t for step in range(steps) for t in sampler.sample(step, 1)]


def final_groups(data: TrainingData) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """The "final" blocks (the chunks each episode ended with) as ranking groups.

    Returns ``(x, y, group sizes)``: full-feature rows, gold labels, and one group
    per episode that holds both gold and non-gold chunks (others teach no order).
    """
    kinds = data.kinds or ["pool"] * len(data.labels)
    xs, ys, sizes = [], [], []
    for full, labels, kind in zip(data.full, data.labels, kinds, strict=True):
        if kind != "final" or len(labels) < 2 or labels.min() == labels.max():
            continue
        xs.append(full)
        ys.append(labels)
        sizes.append(len(labels))
    if not sizes:
        return np.zeros((0, len(FULL_FEATURES))), np.zeros(0), []
    return np.vstack(xs), np.concatenate(ys), sizes


def fit_weights(
    data: TrainingData,
    *,
    kind: str = "logistic",
    meta: dict[str, Any] | None = None,
    order: bool = True,
    seed: int = 0,
    start: LocalWeights | None = None,
    anchor: float = 0.0,
    order_rounds: int = 300,
    only: Collection[str] | None = None,
    order_features: Sequence[str] = (),
    order_bag: int = 1,
) -> LocalWeights:
    """Fit base, full, final and stop models on ``data``, and the LambdaRank ``order``.

    kind: ``logistic`` or ``mlp`` for the chunk models (stop is always logistic).
    order: also fit the LambdaRank model that orders the final answer (needs at
        least 20 episodes ending with both gold and non-gold chunks).
    seed: LightGBM's seed (the fit is single-threaded and deterministic).
    start: weights to start from (a warm start, e.g. the shipped ones adapted to an
        index's own tasks): each logistic model is pulled toward ``start``'s by
        ``anchor`` (:func:`~thresher.train.local.fit.fit_logistic`), the order model
        continues boosting from ``start``'s for ``order_rounds`` rounds, a model the
        rows are too few to fit is ``start``'s, and ``start``'s controls and
        constants are kept.
    order_rounds: boosting rounds of the order model.
    only: with ``start``, fit only these models (of ``base``, ``full``, ``final``,
        ``stop``, ``order``); the others are ``start``'s. None: all.
    order_features: columns of :data:`FULL_FEATURES` the order model reads beyond its
        own (``start``'s order model's, or :data:`RECIPE_FULL` for a fresh one),
        appended after them; a warm start keeps ``start``'s trees, and the trees it adds
        read every column (e.g. :data:`~thresher.policies.local.features.RANK_FEATURES`).
        The chunk models always read the recipe's columns.
    order_bag: LightGBM seeds the order model is fit with, averaged
        (:func:`~thresher.train.local.fit.fit_lambdarank`'s ``bag``; 1: one booster).

    Raises:
        ValueError: no gold and non-gold rows, or ``order_features`` names a column
            that is not in :data:`FULL_FEATURES`.
    """
    unknown = sorted(set(order_features) - set(FULL_FEATURES))
    if unknown:
        raise ValueError(f"fit_weights: order_features {unknown} are not feature columns")
    bx, fx, y = data.arrays()
    bx, fx = bx[:, _BASE_COLS], fx[:, _FULL_COLS]
    if len(y) == 0 or y.min() == y.max():
        raise ValueError("fit_weights: need both gold and non-gold rows; collect more tasks")
    w = data.sample_weights()
    if start is not None and only is not None:  # models outside ``only`` stay start's
        skip = {"base", "full", "final", "stop", "order"} - set(only)
    else:
        skip = set()

    def logistic(
        x: np.ndarray, yy: np.ndarray, names: Any, prior: Model | None, **kw: Any
    ) -> Model:
        warm = prior if prior is not None and prior.kind == "logistic" else None
        return fit_logistic(x, yy, names, prior=warm, anchor=anchor if warm else 0.0, **kw)

    base: Model
    full: Model
    if start is not None and {"base", "full"} <= skip:
        base, full = start.base, start.full
    elif kind == "mlp":
        base = fit_mlp(bx, y, RECIPE_BASE, weight=w)
        full = fit_mlp(fx, y, RECIPE_FULL, weight=w)
    else:
        base = logistic(bx, y, RECIPE_BASE, start.base if start else None, weight=w)
        full = logistic(fx, y, RECIPE_FULL, start.full if start else None, weight=w)
    final = start.final if start is not None else None
    _, ffx, fy = data.arrays("final")
    ffx = ffx[:, _FULL_COLS]
    fw = data.sample_weights("final")
    if "final" not in skip and len(fy) >= 20 and 0 < fy.sum() < len(fy):
        final = (
            fit_mlp(ffx, fy, RECIPE_FULL, weight=fw)
            if kind == "mlp"
            else logistic(ffx, fy, RECIPE_FULL, start.ranker if start else None, l2=3.0, weight=fw)
        )
    stop = start.stop if start is not None else None
    sy = np.asarray(data.stop_y)
    if "stop" not in skip and len(sy) >= 10 and 0 < sy.sum() < len(sy):
        sw = np.asarray(data.stop_sample_weights())
        sx = np.vstack(data.stop_x)
        stop = logistic(sx, sy, STOP_FEATURES, start.stop if start else None, l2=3.0, weight=sw)
    ordering = start.order if start is not None else None
    ox, oy, sizes = final_groups(data)
    if order and "order" not in skip and len(sizes) >= 20:
        warm = ordering is not None and set(ordering.features) <= set(FULL_FEATURES)
        # a warm start continues the start's trees over the start's own columns, then the
        # ones asked for (LightGBM keeps a booster's columns in place and the added trees
        # read the rest); a fresh fit reads the recipe's columns, then the ones asked for
        own = ordering.features if warm and ordering is not None else RECIPE_FULL
        names = own + tuple(f for f in order_features if f not in own)
        ordering = fit_lambdarank(
            ox[:, [FULL_FEATURES.index(name) for name in names]],
            oy,
            sizes,
            names,
            seed=seed,
            rounds=order_rounds,
            init=ordering if warm else None,
            bag=order_bag,
        )
    info = {"kind": kind, "rows": int(len(y)), "positives": int(y.sum()), **(meta or {})}
    if ordering is not None and order and "order" not in skip and len(sizes) >= 20:
        info["order"] = {"kind": "lambdarank", "groups": len(sizes), "rows": int(len(oy))}
        if order_bag > 1:
            info["order"]["bag"] = order_bag
    if start is None:
        return LocalWeights(base, full, stop, info, final, order=ordering)
    # which models these rows fit (the others are ``start``'s)
    kept = {"final": final is start.final, "stop": stop is start.stop, "order": "order" not in info}
    chunk = [] if {"base", "full"} <= skip else ["base", "full"]
    info["fitted"] = [*chunk, *(m for m in ("final", "stop", "order") if not kept[m])]
    return LocalWeights(
        base, full, stop, info, final, dict(start.controls), ordering, start.constants
    )


def train(
    corpora: Sequence[tuple[Sequence[Task], Store]],
    *,
    rounds: int = 2,
    kind: str = "logistic",
    config: Config | None = None,
    start: LocalWeights | None = None,
    meta: dict[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
    policy_options: dict[str, Any] | None = None,
) -> LocalWeights:
    """Collect and fit for ``rounds`` rounds over several (tasks, store) corpora.

    ``policy_options`` are LocalPolicy settings for collection (say ``max_hops``:
    the rows then cover every hop the shipped controls allow; collection never
    stops early). Returns the last round's weights (``meta`` recorded in them).
    """
    weights = start or prior_weights()
    opts = {k: v for k, v in (policy_options or {}).items() if k != "stop_at"}
    for r in range(1, rounds + 1):
        merged = TrainingData()
        for tasks, store in corpora:
            merged.extend(
                collect_repeats(tasks, store, weights, config=config, policy_options=opts)
            )
        weights = fit_weights(merged, kind=kind, meta={"round": r, **(meta or {})})
        if progress is not None:
            progress(f"round {r}: {weights.meta['rows']} rows, {weights.meta['positives']} gold")
    return weights
