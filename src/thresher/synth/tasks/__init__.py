"""Synthetic multi-hop tasks from any indexed corpus: explore, extend, phrase, verify, distract.

``synthesize_tasks(store, n, seed, mode)`` runs the pipeline
(:mod:`thresher.synth.tasks.pipeline`); the task record and its converters
are in :mod:`thresher.tasks.synthetic` (documented in ``docs/synth-tasks.md``).
Names are imported lazily, so importing this package does not load the index.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "SCHEMA",
    "Evidence",
    "SynthTask",
    "SynthReport",
    "synthesize_tasks",
    "read_synth_tasks",
    "write_synth_tasks",
    "to_query_record",
    "from_query_record",
    "to_eval_task",
    "to_qrels",
    "write_qrels",
    "LLMPhraser",
]

_WHERE = {
    "SCHEMA": "thresher.tasks.synthetic",
    "Evidence": "thresher.tasks.synthetic",
    "SynthTask": "thresher.tasks.synthetic",
    "read_synth_tasks": "thresher.tasks.synthetic",
    "write_synth_tasks": "thresher.tasks.synthetic",
    "to_query_record": "thresher.tasks.synthetic",
    "from_query_record": "thresher.tasks.synthetic",
    "to_eval_task": "thresher.tasks.synthetic",
    "to_qrels": "thresher.tasks.synthetic",
    "write_qrels": "thresher.tasks.synthetic",
    "SynthReport": "thresher.synth.tasks.pipeline",
    "synthesize_tasks": "thresher.synth.tasks.pipeline",
    "LLMPhraser": "thresher.synth.tasks.phrase",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'thresher.synth.tasks' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(__all__)
