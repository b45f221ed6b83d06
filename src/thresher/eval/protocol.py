"""The paired protocol: the same tasks through two configurations, compared per task.

Each task runs through configuration A and configuration B (``rollouts`` episodes
each, fused by RRF when more than one), each task one job of a batch runner
(:mod:`thresher.batch`: ``workers`` local threads over one shared store, or Ray
tasks whose workers each open the index once); a job that fails twice is kept
as a failed outcome. Every episode's trace is scored
(:mod:`~thresher.eval.episode_metrics`) and, when it failed, attributed
(:mod:`~thresher.eval.attribution`). Per-task paired differences A − B of the
headline metrics are tested with a paired randomization (or bootstrap) test
from :mod:`thresher.eval.stats`.

A configuration is a registered policy name, or a TOML/JSON file::

    label = "local, 16k budget"      # optional (default: the file's stem)
    [policy]
    name = "local"                   # a registered policy
    top_k = 10                       # any other key: a policy option
    [budget]                         # any Config section: settings for this side
    total = 16384
"""

from __future__ import annotations

import contextlib
import json
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thresher.batch.runner import JobResult, LocalRunner, Runner
from thresher.batch.stores import StoreRef, StoreSource
from thresher.config import Config
from thresher.errors import ConfigError
from thresher.eval.episode_metrics import EpisodeMetrics
from thresher.eval.records import Answerer, RunConfig, TaskOutcome
from thresher.eval.stats import MeanCI, PairedResult, mean_ci, paired_test
from thresher.eval.task_job import TaskJob, TaskRun, failed_outcome
from thresher.policies import policy_factory
from thresher.tasks.task import Task

__all__ = [
    "PairedReport",
    "PAIRED_METRICS",
    "ANSWER_METRICS",
    "metric_value",
    "load_run_config",
    "run_config",
    "compare",
    "SharedSettings",
]

#: answer quality (only with an answering model), reported apart from retrieval
ANSWER_METRICS = ("answer_em", "answer_f1")
#: metrics tested per task (A − B); ``context_tokens`` is a cost (lower is better)
PAIRED_METRICS = (
    "recall@5",
    "all_gold@5",
    "output_f1",
    "trajectory_recall",
    "answer_found",
    "context_tokens",
)


@dataclass(slots=True)
class PairedReport:
    """Everything a paired run produced, in task order (``a[i]`` and ``b[i]`` share a task)."""

    run_a: RunConfig
    run_b: RunConfig
    tasks: list[Task]
    a: list[TaskOutcome]
    b: list[TaskOutcome]
    tests: dict[str, PairedResult]
    means: dict[str, dict[str, MeanCI]]
    settings: dict[str, Any] = field(default_factory=dict)


def load_run_config(spec: str, base: Config | None = None) -> RunConfig:
    """A :class:`RunConfig` from a policy name or a ``.toml``/``.json`` file.

    Args:
        spec: a registered policy name, or a config file (module docstring).
        base: settings both sides start from (``--config``/``--set``).

    Raises:
        ConfigError: an unknown policy name, an unreadable file, a file without
            ``[policy] name``, or an unknown setting.
    """
    from thresher.policies import is_policy_spec, policy_names

    base = base or Config()
    path = Path(spec)
    if path.suffix.lower() in (".toml", ".json") and path.is_file():
        try:
            raw = path.read_bytes().decode("utf-8")
            data = tomllib.loads(raw) if path.suffix.lower() == ".toml" else json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ConfigError(f"config file {path} is not valid {path.suffix[1:]}: {exc}") from exc
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: expected a table of sections")
        policy = dict(data.get("policy") or {})
        name = policy.pop("name", None)
        if not isinstance(name, str) or not is_policy_spec(name):
            raise ConfigError(
                f"{path}: [policy] name must be one of {', '.join(policy_names())}, got {name!r}"
            )
        label = data.get("label", path.stem)
        flat: dict[str, Any] = {}
        for section, values in data.items():
            if section in ("policy", "label"):
                continue
            if not isinstance(values, dict):
                raise ConfigError(f"{path}: '{section}' must be a table of settings")
            flat.update({f"{section}.{k}": v for k, v in values.items()})
        return RunConfig(str(label), name, base.override(flat), policy, str(path))
    if not is_policy_spec(spec):
        raise ConfigError(
            f"'{spec}' is neither a config file nor a policy; policies: {', '.join(policy_names())}"
        )
    return RunConfig(spec, spec, base, {}, spec)


def run_config(
    tasks: Sequence[Task],
    store: StoreSource,
    run: RunConfig,
    *,
    side: str = "a",
    rollouts: int = 1,
    workers: int = 1,
    seed: int = 0,
    out_dir: str | Path | None = None,
    corpora: Mapping[str, frozenset[str]] | None = None,
    progress: Callable[[], None] | None = None,
    answerer: Answerer | None = None,
    runner: Runner | None = None,
) -> list[TaskOutcome]:
    """Run every task through one configuration (outcomes in task order).

    Each task is one job of ``runner`` (:class:`thresher.eval.task_job.TaskJob`);
    a job that fails twice gives :func:`thresher.eval.task_job.failed_outcome`.

    Args:
        tasks: the tasks.
        store: the index: an open store (shared by local threads; not closed here)
            or a :class:`~thresher.batch.stores.StoreRef` (opened once per process;
            required by a remote runner such as Ray).
        run: the configuration.
        side: the trace sub-folder (``traces/<side>/``).
        rollouts: episodes per task, fused by RRF when more than one; policies
            get ``seed + r`` for rollout ``r`` (a factory that is not ``seeded`` ignores it).
        workers: tasks run concurrently on this many threads (without ``runner``).
        seed: base seed.
        out_dir: write each trace under ``out_dir/traces/<side>/`` (on this machine).
        corpora: ``{task_id: doc ids}``: restrict each task to its own documents.
        progress: called once per finished episode.
        answerer: an answering model, ``(task, ranked ResultDocuments) -> answer``;
            its answers are scored by EM/F1 (reported apart from retrieval).
        runner: where the jobs run (default: a :class:`~thresher.batch.runner.LocalRunner`
            of ``workers`` threads, closed at the end).

    Raises:
        ConfigError: ``rollouts`` or ``workers`` below 1, a policy that cannot be
            built, or an open store given to a remote runner.
    """
    from thresher.harness.trace import write_jsonl

    if rollouts < 1 or workers < 1:
        raise ConfigError(f"rollouts and workers must be >= 1, got {rollouts} and {workers}")
    own = runner is None
    active = runner or LocalRunner(workers)
    if active.remote and not isinstance(store, StoreRef):
        raise ConfigError(
            f"the {active.name} runner opens the index in its workers: pass "
            "StoreRef(location, config) instead of an open store"
        )
    trace_dir = Path(out_dir) if out_dir is not None else None
    tick = progress or (lambda: None)
    job = TaskJob(store, run, side, rollouts, seed, trace_dir is not None, answerer)
    items = [(t, None if corpora is None else frozenset(corpora.get(t.task_id, ()))) for t in tasks]

    def done(_index: int, result: JobResult[TaskRun]) -> None:
        if result.value is not None and trace_dir is not None:
            for rel, events in result.value.traces:
                write_jsonl(events, trace_dir / rel)
            result.value.traces.clear()  # written: do not hold every trace until the end
        for _ in range(rollouts):
            tick()

    try:
        results = active.map(job, items, done)
    finally:
        if own:
            active.close()
    return [
        r.value.outcome if r.value is not None else failed_outcome(t, r.error or "failed")
        for t, r in zip(tasks, results, strict=True)
    ]


@dataclass(frozen=True, slots=True)
class SharedSettings:
    """What both sides of a paired run share; each field as in :func:`run_config`."""

    rollouts: int = 1
    workers: int = 1
    seed: int = 0
    out_dir: str | Path | None = None
    corpora: Mapping[str, frozenset[str]] | None = None
    answerer: Answerer | None = None
    runner: Runner | None = None

    def run(
        self,
        tasks: Sequence[Task],
        store: StoreSource,
        run: RunConfig,
        side: str,
        progress: Callable[[], None] | None = None,
    ) -> list[TaskOutcome]:
        """:func:`run_config` of one side with these settings."""
        return run_config(
            tasks,
            store,
            run,
            side=side,
            rollouts=self.rollouts,
            workers=self.workers,
            seed=self.seed,
            out_dir=self.out_dir,
            corpora=self.corpora,
            progress=progress,
            answerer=self.answerer,
            runner=self.runner,
        )


def metric_value(metrics: EpisodeMetrics, name: str) -> float | None:
    """One of :data:`PAIRED_METRICS` (or ``recall@K`` / ``all_gold@K``) as a number.

    None when the metric is undefined for the episode (say, answer metrics of a
    task without an answer string, such as a BEIR query).
    """
    if name.startswith("recall@"):
        return metrics.recall_at[int(name[7:])]
    if name.startswith("all_gold@"):
        return metrics.all_gold_at[int(name[9:])]
    value = getattr(metrics, name)
    return None if value is None else float(value)


def compare(
    tasks: Sequence[Task],
    store: StoreSource,
    run_a: RunConfig,
    run_b: RunConfig,
    *,
    rollouts: int = 1,
    workers: int = 1,
    seed: int = 0,
    out_dir: str | Path | None = None,
    corpora: Mapping[str, frozenset[str]] | None = None,
    progress: bool = False,
    test: str = "randomization",
    resamples: int = 10000,
    answerer: Answerer | None = None,
    runner: Runner | None = None,
) -> PairedReport:
    """Run the paired protocol and test the per-task differences A − B.

    Args:
        tasks, store, rollouts, workers, seed, out_dir, corpora, answerer, runner: as
            :func:`run_config` (A and B run one after the other, through one runner:
            default ``workers`` local threads).
        progress: show a tqdm progress bar on stderr.
        test: ``randomization`` or ``bootstrap`` (see :func:`~thresher.eval.stats.paired_test`).
        resamples: resamples of the test and of the confidence intervals.

    Returns:
        A :class:`PairedReport`.

    Raises:
        ConfigError: as :func:`run_config`. InputError: no tasks.
    """
    from thresher.errors import InputError

    tasks = list(tasks)
    if not tasks:
        raise InputError("no tasks to evaluate; check the task file and --limit")
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=2 * len(tasks) * rollouts, unit="episode", desc="eval", disable=None)

    def tick() -> None:
        if bar is not None:
            bar.update(1)

    active = runner or LocalRunner(workers)
    shared = SharedSettings(rollouts, workers, seed, out_dir, corpora, answerer, active)
    with contextlib.ExitStack() as cleanup:  # on the way out: the bar, then the runner
        if runner is None:
            cleanup.callback(active.close)
        if bar is not None:
            cleanup.callback(bar.close)
        a = shared.run(tasks, store, run_a, "a", tick)
        b = shared.run(tasks, store, run_b, "b", tick)
    tests: dict[str, PairedResult] = {}
    means: dict[str, dict[str, MeanCI]] = {"a": {}, "b": {}}
    names = list(PAIRED_METRICS)
    if answerer is not None:
        names += list(ANSWER_METRICS)
    for name in names:
        pairs = [
            (va, vb)
            for oa, ob in zip(a, b, strict=True)
            if (va := metric_value(oa.metrics, name)) is not None
            and (vb := metric_value(ob.metrics, name)) is not None
        ]
        if not pairs:  # undefined on every task (no answers to find): not reported
            continue
        xa, xb = [p[0] for p in pairs], [p[1] for p in pairs]
        tests[name] = paired_test(xa, xb, method=test, n=resamples, seed=seed)  # type: ignore[arg-type]
        means["a"][name] = mean_ci(xa, n=resamples, seed=seed)
        means["b"][name] = mean_ci(xb, n=resamples, seed=seed)
    seeded = {s: policy_factory(r.policy).seeded for s, r in (("a", run_a), ("b", run_b))}
    settings = {"rollouts_seeded": seeded, "rollouts": rollouts, "workers": active.workers,
                "runner": active.name, "seed": seed, "test": test, "resamples": resamples,
                "corpus": "question" if corpora is not None else "pooled"}  # fmt: skip
    return PairedReport(run_a, run_b, tasks, a, b, tests, means, settings)
