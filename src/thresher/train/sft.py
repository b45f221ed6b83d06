"""SFT export: episode traces -> chat-format trajectories with tool calls, filtered.

Each kept episode becomes JSONL records in the OpenAI fine-tuning shape::

    {"messages": [{"role": "system", ...}, {"role": "user", "content": question},
                  {"role": "user", "content": "[Token usage: ...]"},
                  {"role": "assistant", "content": "", "tool_calls": [...]},
                  {"role": "tool", "tool_call_id": "...", "content": "..."}, ...,
                  {"role": "assistant", "content": "<Document id=...>..."}],
     "tools": [...the five tool schemas...]}

rebuilt from the trace alone (:func:`thresher.harness.state.replay` and
:func:`thresher.harness.render.render_messages`), so the model sees exactly
what the harness sent. Two layouts:

- ``turns`` (default): one record per turn, the transcript as it was at that
  turn (pruned chunks already stubbed) followed by that turn's reply; earlier
  replies carry ``"weight": 0`` so only the last one is trained on. Faithful to
  a self-editing context, where earlier tool messages change after a prune.
- ``episode``: one record per episode, the transcript at its end (pruned
  chunks appear as stubs) with every reply trained on.

Filter (as in the Context-1 report): an episode is kept whole when its
trajectory recall > 0.5 and its output recall > 0.4; below that it is kept
with probability ``low_rate * (min(1, traj / 0.5) * min(1, out / 0.4)) ** exponent``
(seeded per episode), a rate that diminishes as recall falls; malformed
episodes are dropped: an unreadable file, no ``episode_start``/``episode_end``,
an exit by error, a refused (invalid) proposal or a refusal event, no final
answer, or a question matching no task.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from thresher.batch.runner import JobResult, Runner
from thresher.corpus.jsonl import jsonl_line
from thresher.errors import InputError
from thresher.eval.metrics import output_recall, trajectory_recall
from thresher.harness.render import render_messages
from thresher.harness.state import replay
from thresher.harness.trace import (
    EpisodeEnd,
    EpisodeStart,
    FinalEvent,
    ProposalEvent,
    QueryState,
    Refusal,
    TraceEvent,
    read_jsonl,
)
from thresher.train.rewards import episode_facts

__all__ = [
    "SftConfig",
    "SftReport",
    "split_episodes",
    "malformed_reason",
    "keep_probability",
    "final_text",
    "episode_records",
    "FileExport",
    "FileJob",
    "export_sft",
]

_BAD_EXITS = frozenset(
    {"error", "policy_error", "invalid_input", "endpoint_unavailable", "cancelled"}
)


@dataclass(frozen=True, slots=True)
class SftConfig:
    """Filter thresholds, the low-recall keep rate, the layout and the seed (module docs)."""

    trajectory_threshold: float = 0.5
    output_threshold: float = 0.4
    low_rate: float = 0.5
    exponent: float = 2.0
    layout: Literal["turns", "episode"] = "turns"
    seed: int = 0
    with_metadata: bool = False


@dataclass
class SftReport:
    """Counts of one export: episodes read, kept whole, kept by sampling, dropped by reason
    (``failed``: a file whose job raised twice; its errors in ``failed``)."""

    episodes: int = 0
    kept_whole: int = 0
    kept_sampled: int = 0
    skipped_low: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    records: int = 0
    out: Path | None = None
    failed: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "episodes": self.episodes,
            "kept_whole": self.kept_whole,
            "kept_sampled": self.kept_sampled,
            "skipped_low_recall": self.skipped_low,
            "dropped": dict(self.dropped),
            "records": self.records,
            "out": str(self.out) if self.out else None,
            "failed": list(self.failed),
        }


def split_episodes(events: Sequence[TraceEvent]) -> list[list[TraceEvent]]:
    """Split a trace file's events into episodes at each ``episode_start``.

    Events before the first ``episode_start`` form their own (malformed) episode.
    """
    episodes: list[list[TraceEvent]] = []
    for event in events:
        if isinstance(event, EpisodeStart) or not episodes:
            episodes.append([])
        episodes[-1].append(event)
    return episodes


def malformed_reason(events: Sequence[TraceEvent]) -> str | None:
    """Why an episode cannot be a training example (None when it can)."""
    if not events or not isinstance(events[0], EpisodeStart):
        return "no_episode_start"
    end = next((e for e in reversed(events) if isinstance(e, EpisodeEnd)), None)
    if end is None:
        return "no_episode_end"
    if end.exit_reason in _BAD_EXITS:
        return f"exit_{end.exit_reason}"
    if any(isinstance(e, ProposalEvent) and not e.valid for e in events):
        return "invalid_proposal"
    if any(isinstance(e, Refusal) for e in events):
        return "refusal"
    if not any(isinstance(e, FinalEvent) for e in events):
        return "no_final_answer"
    return None


def keep_probability(traj: float, out: float, cfg: SftConfig) -> float:
    """1 above both thresholds; else ``low_rate * (min(1, traj/t) * min(1, out/o)) ** exponent``."""
    if traj > cfg.trajectory_threshold and out > cfg.output_threshold:
        return 1.0
    q = min(1.0, traj / cfg.trajectory_threshold) * min(1.0, out / cfg.output_threshold)
    return cfg.low_rate * q**cfg.exponent


def final_text(documents: Sequence[Mapping[str, Any]]) -> str:
    """The final answer in the system prompt's form, one ``<Document>`` per line."""
    from thresher.harness.render import escape_id, escape_text

    return "\n".join(
        f'<Document id="{escape_id(str(d["doc_id"]))}"><Justification>'
        f"{escape_text(str(d.get('justification', '')))}</Justification></Document>"
        for d in documents
    )


def _defaults() -> tuple[str, list[dict[str, Any]]]:
    from thresher.policies.llm.prompt import system_prompt
    from thresher.policies.llm.schemas import tool_schemas

    return system_prompt(), tool_schemas()


def _fix(messages: list[dict[str, Any]], system: str) -> list[dict[str, Any]]:
    if messages and messages[0]["role"] == "system" and not messages[0]["content"]:
        messages[0] = {"role": "system", "content": system}
    return messages


def _final_message(events: Sequence[TraceEvent]) -> dict[str, Any]:
    from thresher.harness.replies import parse_final

    proposal = next(
        e for e in reversed(events) if isinstance(e, ProposalEvent) and e.valid and e.proposal
    ).proposal
    text = str((proposal or {}).get("text", ""))
    if parse_final(text) is None:
        final = next(e for e in reversed(events) if isinstance(e, FinalEvent))
        text = final_text(final.documents)
    return {"role": "assistant", "content": text}


def episode_records(
    events: Sequence[TraceEvent], layout: Literal["turns", "episode"] = "turns"
) -> list[dict[str, Any]]:
    """The chat records of one well-formed episode (see the module docs for the layouts)."""
    start = events[0]
    assert isinstance(start, EpisodeStart)
    system, default_tools = _defaults()
    system = start.system_prompt or system
    tools = list(start.tool_schemas) or default_tools
    final = _final_message(events)
    if layout == "episode":
        messages = _fix(render_messages(replay(events)), system)
        if messages and messages[-1]["role"] == "assistant" and not messages[-1].get("tool_calls"):
            messages[-1] = final
        else:
            messages.append(final)
        return [{"messages": messages, "tools": tools}]
    records = []
    full = replay(events)
    turns = sorted({e.turn for e in events if isinstance(e, QueryState)})
    for turn in turns:
        record = next((r for r in full.turns if r.turn == turn), None)
        if record is None or record.assistant is None:
            continue
        prefix = _fix(render_messages(replay(events, turn=turn)), system)
        if record.assistant["tool_calls"]:
            from thresher.harness.render import assistant_message

            reply = assistant_message(record.assistant["text"], record.assistant["tool_calls"])
        else:
            reply = dict(final)
        for m in prefix:
            if m["role"] == "assistant":
                m["weight"] = 0
        records.append({"messages": [*prefix, {**reply, "weight": 1}], "tools": tools})
    return records


def _key(question: str) -> str:
    return " ".join(question.split())


@dataclass(slots=True)
class FileExport:
    """One trace file's share of an export (what :class:`FileJob` returns).

    Attributes:
        episodes: episodes read (an unreadable file counts as one).
        kept_whole, kept_sampled, skipped_low: as :class:`SftReport`.
        dropped: malformed episodes by reason.
        lines: the JSONL lines of its kept records, in order.
    """

    episodes: int = 0
    kept_whole: int = 0
    kept_sampled: int = 0
    skipped_low: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    lines: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class FileJob:
    """Filter and format the episodes of one trace file (a batch job: it pickles).

    Called with ``(name, path)``: ``name`` is the path as given (it seeds the
    sampling and names the record's source), ``path`` where to read it.
    """

    by_question: Mapping[str, Any]
    config: SftConfig

    def __call__(self, item: tuple[str, str]) -> FileExport:
        name, path = item
        cfg, out = self.config, FileExport()
        try:
            episodes = split_episodes(read_jsonl(path))
        except InputError:
            out.episodes += 1
            out.dropped["unreadable"] += 1
            return out
        for i, events in enumerate(episodes):
            out.episodes += 1
            reason = malformed_reason(events)
            start = events[0]
            task = (
                self.by_question.get(_key(start.question))
                if isinstance(start, EpisodeStart)
                else None
            )
            if reason is None and task is None:
                reason = "no_matching_task"
            if reason is not None:
                out.dropped[reason] += 1
                continue
            assert task is not None  # a missing task set ``reason`` above
            facts = episode_facts(events)
            gold = list(task.gold_doc_ids)
            traj = trajectory_recall(facts.seen_docs, gold)
            outr = output_recall(set(facts.final_docs), gold)
            p = keep_probability(traj, outr, cfg)
            if p < 1.0:
                if random.Random(f"{cfg.seed}:{name}:{i}").random() >= p:
                    out.skipped_low += 1
                    continue
                out.kept_sampled += 1
            else:
                out.kept_whole += 1
            for record in episode_records(events, cfg.layout):
                if cfg.with_metadata:
                    record["metadata"] = {
                        "task_id": task.task_id,
                        "trajectory_recall": round(traj, 4),
                        "output_recall": round(outr, 4),
                        "source": f"{name}#{i}",
                    }
                out.lines.append(jsonl_line(record))
        return out


def export_sft(
    trace_paths: Iterable[str | Path],
    tasks: Iterable[Any],
    out_path: str | Path,
    config: SftConfig | None = None,
    *,
    runner: Runner | None = None,
) -> SftReport:
    """Write the filtered SFT records of every episode in ``trace_paths`` to ``out_path``.

    Each trace file is one job (:class:`FileJob`) of ``runner``; the records are
    written in file order, so the output does not depend on the runner.

    Args:
        trace_paths: trace JSONL files (one or more episodes each).
        tasks: the tasks the episodes ran (eval ``Task`` or ``SynthTask``), matched
            to episodes by question text.
        out_path: the JSONL file written (parents created).
        config: filter and layout.
        runner: where the files are read and formatted (default: one at a time,
            here). A file whose job fails twice counts as one episode dropped as
            ``failed``, its error in ``SftReport.failed``.

    Returns:
        An :class:`SftReport`.

    Raises:
        InputError: no tasks given.
    """
    from thresher.batch.runner import LocalRunner

    cfg = config or SftConfig()
    by_question = {_key(t.question): t for t in tasks}
    if not by_question:
        raise InputError("no tasks given; pass the task file the traces were run on")
    items = [(str(path), str(Path(path).resolve())) for path in trace_paths]
    report = SftReport()
    dropped: Counter[str] = Counter()
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    done: dict[int, JobResult[FileExport]] = {}
    written = 0
    active = runner or LocalRunner(1)
    with out.open("w", encoding="utf-8") as fh:

        def flush(index: int, result: JobResult[FileExport]) -> None:
            """Fold in every finished file that all earlier files have preceded."""
            nonlocal written
            done[index] = result
            while written in done:
                part = done.pop(written)
                if part.value is None:
                    report.episodes += 1
                    dropped["failed"] += 1
                    report.failed.append(f"{items[written][0]}: {part.error}")
                else:
                    _fold(report, dropped, part.value)
                    fh.writelines(part.value.lines)
                    report.records += len(part.value.lines)
                    part.value.lines.clear()  # written: do not hold every record
                written += 1

        try:
            active.map(FileJob(by_question, cfg), items, flush)
        finally:
            if runner is None:
                active.close()
    report.dropped = dict(sorted(dropped.items()))
    report.out = out
    return report


def _fold(report: SftReport, dropped: Counter[str], part: FileExport) -> None:
    report.episodes += part.episodes
    report.kept_whole += part.kept_whole
    report.kept_sampled += part.kept_sampled
    report.skipped_low += part.skipped_low
    dropped.update(part.dropped)
