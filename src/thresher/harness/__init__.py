"""The harness: state stores, tools, budget, the episode loop, trace and replay.

Main names, imported lazily::

    from thresher.harness import run_episode, iter_episode, Proposal, ToolCall, answer
"""

from __future__ import annotations

from thresher._lazy import lazy_getattr

__all__ = [
    "run_episode",
    "iter_episode",
    "EpisodeStream",
    "ToolSpec",
    "TOOLS",
    "Result",
    "ResultDocument",
    "ExitReason",
    "Proposal",
    "ToolCall",
    "FinalAnswer",
    "RankedDocument",
    "MalformedReply",
    "Sample",
    "call",
    "answer",
    "Observation",
    "EpisodeState",
    "read_jsonl",
    "write_jsonl",
    "parse_final",
    "TRACE_SCHEMA_VERSION",
]

_WHERE = {
    "run_episode": ".episode",
    "iter_episode": ".episode",
    "EpisodeStream": ".stream",
    "ToolSpec": ".toolspec",
    "TOOLS": ".tools",
    "Result": ".result",
    "ResultDocument": ".result",
    "ExitReason": ".result",
    "Proposal": ".actions",
    "ToolCall": ".actions",
    "FinalAnswer": ".actions",
    "RankedDocument": ".actions",
    "MalformedReply": ".actions",
    "Sample": ".actions",
    "call": ".actions",
    "answer": ".actions",
    "Observation": ".observation",
    "EpisodeState": ".state",
    "read_jsonl": ".trace",
    "write_jsonl": ".trace",
    "parse_final": ".replies",
    "TRACE_SCHEMA_VERSION": ".trace",
}


__getattr__ = lazy_getattr(__name__, _WHERE)
