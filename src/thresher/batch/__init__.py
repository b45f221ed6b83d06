"""Batch execution: one runner abstraction for many independent jobs (episodes, checks, files).

A :class:`~thresher.batch.runner.Runner` maps a picklable function over items and
returns one :class:`~thresher.batch.runner.JobResult` per item, in input order: a
job that raises is retried once, then recorded as failed (never dropped). Two
runners: :class:`~thresher.batch.runner.LocalRunner` (threads, ``--workers N``) and
:class:`~thresher.batch.ray_runner.RayRunner` (Ray tasks, ``--ray [ADDRESS]``; the
optional ``thresher[ray]`` extra). Jobs reach the index through a
:class:`~thresher.batch.stores.StoreRef`, opened once per process through the
backend registry. Main names, imported lazily::

    from thresher.batch import make_runner, StoreRef
"""

from __future__ import annotations

from thresher._lazy import lazy_dir, lazy_getattr

__all__ = [
    "Runner",
    "JobResult",
    "LocalRunner",
    "RayRunner",
    "make_runner",
    "FATAL_ERRORS",
    "StoreRef",
    "StoreSource",
    "resolve_store",
    "close_stores",
]

_WHERE = {
    "Runner": ".runner",
    "JobResult": ".runner",
    "LocalRunner": ".runner",
    "make_runner": ".factory",
    "FATAL_ERRORS": ".runner",
    "RayRunner": ".ray_runner",
    "StoreRef": ".stores",
    "StoreSource": ".stores",
    "resolve_store": ".stores",
    "close_stores": ".stores",
}

__getattr__ = lazy_getattr(__name__, _WHERE)
__dir__ = lazy_dir(__all__)
