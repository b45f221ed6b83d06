"""Adapting the local policy to one index: tasks synthesized from its own documents, a
fit that starts from the shipped weights, the result kept with the index.

:func:`adapt_index` runs, in order:

1. **Synthesize** up to ``n`` verified multi-hop tasks from the index
   (:func:`~thresher.tasks.generate.pipeline.synthesize_tasks`, offline, ``seed``), or
   read the ``tasks`` file given (the ``tasks.jsonl`` an earlier run kept: re-adapting
   after ``thresher fit-fusion`` need not synthesize again).
2. **Split** them by task, with a fixed seed: ``held_out`` of them are only measured,
   the rest are trained on (:func:`split_tasks`).
3. **Measure before**: the shipped weights on the held-out tasks as they run without
   ``adapt`` (under their own fusion, plain RRF; recall@5 of the tasks' gold
   documents, the episode reward at beta 2: :mod:`.tune_runs`).
4. **Fit**: the policy, running the shipped weights under the ``fusion`` the adapted
   weights will run with (:func:`resolve_fusion`: plain RRF by default, or the
   index's fitted fusion weights), collects feature rows on the
   training tasks (:func:`~thresher.train.local.trainer.collect`); the models are
   then fit *from* the shipped ones (:func:`~thresher.train.local.trainer.fit_weights`
   with ``start``): the LambdaRank order model keeps its trees and adds
   ``order_rounds`` on the new episodes, each logistic model is pulled toward its
   shipped coefficients as if they were worth ``anchor`` times the new rows, and the
   controls and constants stay the shipped ones. Only the ``models`` named are
   taken from the fit (default: the order model alone; the others stay shipped).
   With ``features`` (:data:`FEATURE_SETS`, e.g. ``rank``: the retrievers' own ranks
   of a chunk's document in the question's search), the trees the order model adds
   also read those columns, which the shipped trees never did.
   The rows the shipped weights were fit on (dev sets of public datasets) are not
   on a user's machine, so a warm start, not a mix. With ``bag`` N above 1 the
   order model is bagged: N continuations of the shipped trees that differ only in
   LightGBM's seed (``order_seed``), ordering by the mean of their raw scores (the
   shipped trees' score plus the mean of the added trees' scores,
   :func:`~thresher.train.local.fit.fit_lambdarank`): one seed's lucky or unlucky
   trees weigh 1/N.
5. **Measure after**: the adapted weights on the same held-out tasks, under that
   fusion (recorded in the weights' ``meta.fusion``, which the local policy follows).
6. **Keep** (unless ``save`` is False): the weights, the index's fingerprint, the
   tasks and the report under ``INDEX/adapted/``
   (:mod:`thresher.policies.local.adapted`), where the local policy finds them.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from thresher.config import Config
from thresher.errors import InputError
from thresher.policies.local.features import RANK_FEATURES
from thresher.policies.local.models import FUSIONS, LocalWeights
from thresher.tasks.synthetic import SynthTask
from thresher.tasks.task import Task

__all__ = [
    "AdaptReport",
    "Score",
    "adapt_index",
    "split_tasks",
    "resolve_fusion",
    "FUSION_CHOICES",
    "DEFAULT_FUSION",
    "ADAPTABLE",
    "DEFAULT_MODELS",
    "FEATURE_SETS",
    "DEFAULT_ANCHOR",
    "DEFAULT_BAG",
]

#: the models of the weights file ``adapt`` can refit
ADAPTABLE = ("order", "base", "full", "final", "stop")
#: the models refit by default: the final order (the chunk models fit on synthetic
#: rows lowered held-out recall; docs/local-policy.md, "Adapting to your index")
DEFAULT_MODELS = ("order",)

#: how many times the new rows the shipped coefficients count as (see the module docs)
DEFAULT_ANCHOR = 1.0
#: boosting rounds the order model adds on the new episodes
DEFAULT_ORDER_ROUNDS = 300
#: LightGBM seeds the order refit is bagged over (``bag`` of :func:`adapt_index`)
DEFAULT_BAG = 1

#: what ``adapt --fusion`` takes: ``auto`` (fitted when the index keeps fresh fusion
#: weights and the config allows them, else plain) or one of the weights' fusions
FUSION_CHOICES = ("auto", *FUSIONS)
#: the fusion adapt fits under unless told: plain RRF (weights fit under an index's
#: fitted fusion did no better on held-out tasks and worse on real questions;
#: docs/local-policy.md, "Adapting to your index")
DEFAULT_FUSION = "plain"
#: named sets of feature columns the order model's added trees may read beyond the
#: shipped model's own (``features`` of :func:`adapt_index`)
FEATURE_SETS: dict[str, tuple[str, ...]] = {"rank": RANK_FEATURES}
#: the sets read by default (none: adding ``rank`` did not beat the plain warm start
#: on both measures; docs/local-policy.md, "Adapting to your index")
DEFAULT_FEATURES: tuple[str, ...] = ()

#: ``progress(phase, done, total)``: phase one of ``synthesize``, ``before``,
#: ``collect``, ``after``
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True, slots=True)
class Score:
    """Mean scores of one set of weights on the held-out tasks."""

    recall5: float
    reward: float
    tokens: float


@dataclass
class AdaptReport:
    """What :func:`adapt_index` did and measured.

    Attributes:
        index: the index folder.
        generation: the generation adapted to.
        documents: its document count.
        synthesized: tasks kept by the synthesis (of ``requested``), or read from
            ``tasks_from``, by hop count.
        tasks_from: ``synthesized``, or the task file read.
        train, held_out: the split's sizes (tasks).
        before, after: the shipped weights under their own fusion (as they run
            without adapt) and the adapted weights under ``fusion``, on the held-out
            tasks (None when there are none).
        fusion: the fusion the rows were collected and the adapted weights run under
            (``plain`` or ``fitted``); ``before_fusion`` the shipped weights'.
        rows: feature rows fit (gold among them: ``positives``).
        refit: the models of ``models`` the rows sufficed to refit (the order model
            needs 20 training episodes ending with gold and non-gold chunks; the
            others stay the starting weights').
        saved: the adapted weights file written (None: not saved).
        seconds: wall time per phase.
        settings: seed, held-out share, anchor, order rounds, order seed, bag.
    """

    index: str
    generation: str
    documents: int
    requested: int
    synthesized: int
    by_hops: dict[int, int]
    train: int
    held_out: int
    before: Score | None
    after: Score | None
    tasks_from: str = "synthesized"
    fusion: str = "plain"
    before_fusion: str = "plain"
    rows: int = 0
    positives: int = 0
    refit: list[str] = field(default_factory=list)
    saved: str | None = None
    seconds: dict[str, float] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def split_tasks(
    tasks: Sequence[Task], held_out: float, seed: int = 0
) -> tuple[list[Task], list[Task]]:
    """(train, held-out) by task: ``round(held_out · n)`` tasks drawn with ``seed`` are
    held out (at least one of two or more tasks when ``held_out`` > 0), the rest
    trained on; each part keeps the given order.

    Raises ``InputError`` unless 0 <= ``held_out`` < 1.
    """
    if not 0 <= held_out < 1:
        raise InputError(f"held-out share must be in [0, 1), got {held_out}; e.g. 0.3")
    ids = sorted(t.task_id for t in tasks)
    random.Random(seed).shuffle(ids)
    count = round(held_out * len(ids))
    if held_out > 0 and len(ids) >= 2:
        count = min(max(count, 1), len(ids) - 1)
    held = set(ids[:count])
    return [t for t in tasks if t.task_id not in held], [t for t in tasks if t.task_id in held]


def resolve_fusion(index: Path, fusion: str, config: Config) -> str:
    """The fusion ``adapt --fusion`` means on ``index``: ``plain`` or ``fitted``.

    ``auto`` is ``fitted`` when the index keeps fusion weights that fit its live
    generation (:func:`~thresher.index.embedded.fitted.load_fusion`) and
    ``retrieval.fitted_fusion`` is on, else ``plain``.

    Raises:
        InputError: ``fusion`` is not one of :data:`FUSION_CHOICES`, or is ``fitted``
            while the index keeps no fresh fusion weights or the config turns them off.
    """
    from thresher.index.embedded.fitted import load_fusion
    from thresher.index.embedded.layout import current_generation

    if fusion not in FUSION_CHOICES:
        raise InputError(
            f"adapt: fusion {fusion!r} unknown; name one of {', '.join(FUSION_CHOICES)}"
        )
    if fusion == "plain":
        return "plain"
    fresh = load_fusion(index, current_generation(index)) is not None
    if fusion == "auto":
        return "fitted" if fresh and config.retrieval.fitted_fusion else "plain"
    if not config.retrieval.fitted_fusion:
        raise InputError(
            "adapt: --fusion fitted, but retrieval.fitted_fusion is off in the settings; "
            "drop that setting or adapt with --fusion plain"
        )
    if not fresh:
        raise InputError(
            f"adapt: --fusion fitted, but {index} keeps no fusion weights that fit it; "
            f"run `thresher fit-fusion --index {index}` first, or adapt with --fusion plain"
        )
    return "fitted"


def _read_tasks(path: Path, index: Path) -> list[SynthTask]:
    """The synthetic tasks of ``path``, checked against the live generation of ``index``.

    Raises:
        InputError: the file is unreadable or not synthetic tasks (file:line), or one of
            its tasks' evidence documents is not in the index (tasks of another index).
    """
    from thresher.index.embedded.layout import current_generation, read_manifest
    from thresher.tasks.synthetic import read_synth_tasks

    tasks = read_synth_tasks(path)
    present = read_manifest(current_generation(index)).documents
    missing = sorted({ev.doc_id for t in tasks for ev in t.evidence} - present.keys())
    if missing:
        raise InputError(
            f"adapt: {len(missing)} document(s) the tasks of {path} rest on are not in the "
            f"index (e.g. {missing[0]!r}): tasks of another index or an older version of "
            "it; synthesize anew (drop --tasks)"
        )
    return tasks


def _score(
    tasks: Sequence[Task],
    store: Any,
    weights: LocalWeights,
    config: Config,
    tick: Callable[[int], None] | None,
) -> Score | None:
    from thresher.train.local.tune_runs import LocalEpisodes

    if not tasks:
        return None
    found = LocalEpisodes([(tasks, store)], config).outcomes(weights, progress=tick)
    n = len(found)
    return Score(
        round(sum(o.recall5 for o in found) / n, 4),
        round(sum(o.reward for o in found) / n, 4),
        round(sum(o.tokens for o in found) / n, 1),
    )


def adapt_index(
    index: str | Path,
    *,
    n: int = 300,
    seed: int = 0,
    held_out: float = 0.3,
    anchor: float = DEFAULT_ANCHOR,
    order_rounds: int = DEFAULT_ORDER_ROUNDS,
    models: Sequence[str] = DEFAULT_MODELS,
    features: Sequence[str] = DEFAULT_FEATURES,
    config: Config | None = None,
    save: bool = True,
    start: LocalWeights | None = None,
    progress: Progress | None = None,
    tasks: str | Path | None = None,
    fusion: str = DEFAULT_FUSION,
    phrasing: str = "auto",
    bag: int = DEFAULT_BAG,
    order_seed: int = 0,
) -> AdaptReport:
    """Adapt the local policy to the embedded index at ``index`` (see the module docs).

    Args:
        index: an embedded index folder (a server index cannot keep weights).
        n: tasks to synthesize (fewer when the index's seeds run out); unused with
            ``tasks``.
        seed: the synthesis's seed and the split's.
        held_out: share of the tasks held out for the before/after measure.
        anchor: weight of the starting coefficients against the new rows (0: the new
            rows alone; the order model still starts from the shipped trees).
        order_rounds: boosting rounds the order model adds.
        models: the models taken from the fit (of :data:`ADAPTABLE`); the others stay
            ``start``'s.
        features: names of :data:`FEATURE_SETS` whose columns the order model's added
            trees read beyond ``start``'s own.
        config: settings for the episodes (default ``Config()``).
        save: keep the weights with the index (False: measure only).
        start: the weights to start from (default: the shipped ones).
        progress: called as phases advance (a progress bar).
        tasks: a synthetic task file of this index to fit and measure on instead of
            synthesizing (e.g. the ``adapted/tasks.jsonl`` an earlier run kept).
        fusion: the fusion the rows are collected and the adapted weights run under,
            one of :data:`FUSION_CHOICES` (:func:`resolve_fusion`).
        phrasing: how the synthesized questions are phrased, one of
            :data:`~thresher.tasks.generate.pipeline.PHRASINGS`; unused with ``tasks``.
        bag: order models fit (continuations of ``start``'s trees differing only in
            their LightGBM seed) and averaged; 1: one booster, as before.
        order_seed: LightGBM's seed for the order refit (the bag's members take
            ``order_seed · bag + i``); the tasks' split stays ``seed``'s.

    Returns:
        An :class:`AdaptReport`.

    Raises:
        InputError: ``index`` is not an embedded index folder, ``models`` names one
            that is not in :data:`ADAPTABLE`, ``features`` one not in
            :data:`FEATURE_SETS`, ``fusion`` cannot be had (:func:`resolve_fusion`),
            ``bag`` is below 1, or ``start``'s order model is bagged (it cannot be
            continued: start from the shipped weights),
            ``tasks`` is not a task file of this index, the synthesis kept (or the file
            holds) fewer than two tasks, or the training tasks gave no gold and non-gold
            rows.
        IndexNotFoundError: no index at ``index``.
    """
    from thresher.index.embedded.store import EmbeddedStore
    from thresher.policies.local.adapted import adapted_dir, fingerprint_of, write_fingerprint
    from thresher.policies.local.models import load_weights
    from thresher.tasks.generate.pipeline import synthesize_tasks
    from thresher.tasks.synthetic import to_eval_task, write_synth_tasks
    from thresher.train.local.trainer import collect, fit_weights

    if "://" in str(index):
        raise InputError(
            f"adapt: {index} is a server; adapted weights are kept in an embedded index "
            "folder (build one with `thresher index PATH --index DIR`)"
        )
    unknown = sorted(set(models) - set(ADAPTABLE))
    if unknown or not models:
        raise InputError(
            f"adapt: models {', '.join(unknown) or '(none)'} unknown; "
            f"name some of {', '.join(ADAPTABLE)}"
        )
    odd = sorted(set(features) - set(FEATURE_SETS))
    if odd:
        raise InputError(
            f"adapt: feature sets {', '.join(odd)} unknown; name some of {', '.join(FEATURE_SETS)}"
        )
    if bag < 1:
        raise InputError(f"adapt: --bag must be 1 or more, got {bag}")
    extra = tuple(f for name in features for f in FEATURE_SETS[name])
    folder = Path(index)
    cfg = config or Config()
    fingerprint = fingerprint_of(folder)
    run_fusion = resolve_fusion(folder, fusion, cfg)
    shipped = start or load_weights()
    if "order" in models and shipped.order is not None and shipped.order.bagged:
        raise InputError(
            "adapt: the starting weights' order model is bagged and cannot be continued; "
            "start from the shipped weights (or single-booster ones)"
        )
    # the starting weights under the adapted ones' fusion: the rows are collected as
    # the adapted weights will run
    collecting = replace(shipped, meta={**shipped.meta, "fusion": run_fusion})
    seconds: dict[str, float] = {}

    def ticker(phase: str, total: int) -> Callable[[int], None] | None:
        if progress is None:
            return None
        report_to = progress
        report_to(phase, 0, total)
        return lambda done: report_to(phase, done, total)

    if tasks is not None:
        synth_tasks = _read_tasks(Path(tasks), folder)
        requested, tasks_from = len(synth_tasks), str(tasks)
        if len(synth_tasks) < 2:
            raise InputError(
                f"adapt: {tasks} holds {len(synth_tasks)} task(s); too few to fit and "
                "measure: give the tasks.jsonl of a run that kept more, or drop --tasks"
            )
    else:
        t = time.perf_counter()
        # reading the whole corpus is one grep over every chunk: give it time
        reading = cfg.override({"grep.timeout_s": max(cfg.grep.timeout_s, 300.0)})
        with EmbeddedStore(folder, reading) as synth_store:
            synth = synthesize_tasks(
                synth_store,
                n,
                seed,
                progress=progress is not None,
                phrasing=phrasing,  # type: ignore[arg-type]  # checked by synthesize_tasks
            )
        seconds["synthesize"] = round(time.perf_counter() - t, 2)
        synth_tasks, requested, tasks_from = list(synth.tasks), n, "synthesized"
        if len(synth_tasks) < 2:
            raise InputError(
                f"adapt: the index gave {len(synth_tasks)} verified task(s) (of {n} asked); "
                "too few to fit and measure: index more documents, or raise --n"
            )
    by_hops: dict[int, int] = {}
    for task in synth_tasks:
        by_hops[task.hops] = by_hops.get(task.hops, 0) + 1
    episodes = [to_eval_task(task) for task in synth_tasks]
    train, held = split_tasks(episodes, held_out, seed)
    with EmbeddedStore(folder, cfg) as store:
        t = time.perf_counter()
        before = _score(held, store, shipped, cfg, ticker("before", len(held)))
        seconds["before"] = round(time.perf_counter() - t, 2)
        t = time.perf_counter()
        data = collect(train, store, collecting, config=cfg, progress=ticker("collect", len(train)))
        seconds["collect"] = round(time.perf_counter() - t, 2)
        t = time.perf_counter()
        meta: dict[str, Any] = {
            "adapted": {
                "index": str(folder.resolve()),
                "generation": fingerprint.generation,
                "documents": fingerprint.documents,
                "tasks": len(train),
                "seed": seed,
                "anchor": anchor,
                "order_rounds": order_rounds,
                "order_seed": order_seed,
                "bag": bag,
                "models": list(models),
                "features": list(features),
                "from": shipped.meta.get("data", []),
                "fusion": run_fusion,
                "tasks_from": tasks_from,
            }
        }
        try:
            fitted = fit_weights(
                data,
                start=shipped,
                anchor=anchor,
                order_rounds=order_rounds,
                only=models,
                meta=meta,
                order_features=extra,
                seed=order_seed,
                order_bag=bag,
            )
        except ValueError as exc:
            raise InputError(
                f"adapt: the {len(train)} training tasks gave nothing to fit ({exc}); "
                "raise --n or lower --held-out"
            ) from exc
        refit = [name for name in models if name in fitted.meta.get("fitted", ())]
        meta = {
            **fitted.meta,
            "fusion": run_fusion,
            "adapted": {**meta["adapted"], "refit": refit},
        }
        adapted = replace(shipped, meta=meta, **{name: getattr(fitted, name) for name in refit})
        seconds["fit"] = round(time.perf_counter() - t, 2)
        t = time.perf_counter()
        after = _score(held, store, adapted, cfg, ticker("after", len(held)))
        seconds["after"] = round(time.perf_counter() - t, 2)
    report = AdaptReport(
        index=str(folder),
        generation=fingerprint.generation,
        documents=fingerprint.documents,
        requested=requested,
        synthesized=len(synth_tasks),
        by_hops=dict(sorted(by_hops.items())),
        train=len(train),
        held_out=len(held),
        before=before,
        after=after,
        tasks_from=tasks_from,
        fusion=run_fusion,
        before_fusion=shipped.fusion,
        rows=int(adapted.meta.get("rows", 0)),
        positives=int(adapted.meta.get("positives", 0)),
        refit=refit,
        seconds=seconds,
        settings={
            "seed": seed,
            "held_out": held_out,
            "anchor": anchor,
            "order_rounds": order_rounds,
            "order_seed": order_seed,
            "bag": bag,
            "models": list(models),
            "fusion": run_fusion,
            "features": list(features),
        },
    )
    if save:
        out = adapted_dir(folder)
        report.saved = str(adapted.save(out / "local_policy.json"))
        write_synth_tasks(out / "tasks.jsonl", synth_tasks)
        (out / "report.json").write_text(
            json.dumps(report.to_dict(), indent=1) + "\n", encoding="utf-8"
        )
        write_fingerprint(folder, fingerprint)  # last: the weights are complete by then
    return report
