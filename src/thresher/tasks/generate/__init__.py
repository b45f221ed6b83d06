"""Synthetic multi-hop tasks from any indexed corpus: explore, extend, phrase, verify, distract.

``synthesize_tasks(store, n, seed, mode)`` runs the pipeline
(:mod:`thresher.tasks.generate.pipeline`); the task record and its converters
are in :mod:`thresher.tasks.synthetic` (documented in ``docs/synth-tasks.md``).
Names are imported lazily, so importing this package does not load the index.
"""

from __future__ import annotations

from thresher._lazy import lazy_dir, lazy_getattr

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
    "SynthReport": "thresher.tasks.generate.pipeline",
    "synthesize_tasks": "thresher.tasks.generate.pipeline",
    "LLMPhraser": "thresher.tasks.generate.phrase",
}


__getattr__ = lazy_getattr(__name__, _WHERE)
__dir__ = lazy_dir(__all__)
