"""Outputs of a paired run: per-task JSONL, TREC runs, a markdown summary, the HTML report.

``DIR/`` after :func:`write_report`::

    tasks.jsonl        one line per task: the task, then per side (``a``, ``b``)
                       BrowseComp-Plus run fields (query_id, status,
                       tool_call_counts, retrieved_docids, result) plus ours
                       (ranking, metrics, attribution, trace files), and ``diff``
    run_a.trec         TREC run of A's final rankings (same for B); qrels.txt: the gold
                       (ids holding whitespace or ``%`` percent-encoded, as TREC
                       cannot hold whitespace: ``trec.read_run(path, decode_ids=True)``)
    summary.json       settings, means with 95% CIs, paired tests, attribution counts,
                       cost (tokens, wall time, USD per episode and per resolved question)
    summary.md         the same as a markdown page
    report.html        one self-contained page (inline CSS/JS/SVG, no network)
    traces/a/*.jsonl   every episode's trace (``thresher trace show FILE``)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from thresher.corpus.jsonl import write_jsonl
from thresher.eval.attribution import (
    CAUSE_LABELS,
    CAUSES,
    attribution_by_hop,
    attribution_counts,
    exit_reason_counts,
)
from thresher.eval.cost import RESOLVED_RULE, SideCost, format_usd, report_costs
from thresher.eval.protocol import ANSWER_METRICS, PAIRED_METRICS, PairedReport, metric_value
from thresher.eval.records import TaskOutcome
from thresher.tasks.readers import tasks_to_qrels
from thresher.tasks.trec import write_qrels, write_run

__all__ = [
    "side_record",
    "task_records",
    "summary_dict",
    "summary_markdown",
    "cost_markdown",
    "write_report",
]


def side_record(outcome: TaskOutcome) -> dict[str, Any]:
    """BrowseComp-Plus run fields of one task on one side, plus thresher's own."""
    m = outcome.metrics
    return {
        "query_id": outcome.task.task_id,
        "status": "completed" if m.exit_reason == "answered" else m.exit_reason,
        "tool_call_counts": dict(m.tool_calls),
        "retrieved_docids": list(m.seen_doc_ids),
        "result": [{"type": "output_text", "output": "\n".join(m.ranked_doc_ids)}],
        "ranked_docids": list(m.ranked_doc_ids),
        "metrics": {k: v for k, v in m.to_dict().items() if k not in ("seen_doc_ids",)},
        "attribution": outcome.attribution.to_dict(),
        "prediction": outcome.prediction,
        "rollouts": [r.to_dict() for r in outcome.rollouts] if len(outcome.rollouts) > 1 else [],
        "traces": list(outcome.trace_paths),
        "error": outcome.error,
    }


def task_records(report: PairedReport) -> list[dict[str, Any]]:
    """One record per task: the task, both sides, and the paired differences A − B."""
    out = []
    for task, a, b in zip(report.tasks, report.a, report.b, strict=True):
        diff = {
            n: va - vb
            for n in report.tests
            if (n in PAIRED_METRICS or n in ANSWER_METRICS)
            and (va := metric_value(a.metrics, n)) is not None
            and (vb := metric_value(b.metrics, n)) is not None
        }
        out.append(
            {
                "query_id": task.task_id,
                "question": task.question,
                "answer": task.answer,
                "gold_doc_ids": task.gold_doc_ids,
                "hops": task.hops,
                "a": side_record(a),
                "b": side_record(b),
                "diff": diff,
            }
        )
    return out


def _recoverable(outcomes: list[TaskOutcome]) -> int:
    return sum(1 for o in outcomes if o.attribution.recoverable)


def summary_dict(report: PairedReport) -> dict[str, Any]:
    """Settings, per-side means with CIs, paired tests and attribution, JSON-safe."""
    sides = {"a": report.a, "b": report.b}
    return {
        "n_tasks": len(report.tasks),
        "settings": report.settings,
        "a": report.run_a.to_dict(),
        "b": report.run_b.to_dict(),
        "means": {
            side: {n: ci._asdict() for n, ci in report.means[side].items()} for side in sides
        },
        "paired": {n: r._asdict() for n, r in report.tests.items()},
        "exit_reasons": {
            side: exit_reason_counts(x.metrics.exit_reason for x in o) for side, o in sides.items()
        },
        "attribution": {
            side: attribution_counts(x.attribution for x in o) for side, o in sides.items()
        },
        "attribution_by_hop": {
            side: attribution_by_hop(x.attribution for x in o) for side, o in sides.items()
        },
        "prune_recoverable": {side: _recoverable(o) for side, o in sides.items()},
        "failed": {side: [x.task.task_id for x in o if x.error] for side, o in sides.items()},
        "cost": {
            "resolved": RESOLVED_RULE,
            "prices_file": report.settings.get("prices_file"),
            **{side: c.to_dict() for side, c in report_costs(report).items()},
        },
    }


def _fmt(name: str, value: float) -> str:
    return f"{value:,.0f}" if name == "context_tokens" else f"{value:.3f}"


def summary_markdown(report: PairedReport) -> str:
    """The summary as a markdown page (tables of means, paired tests, attribution)."""
    s = summary_dict(report)
    a, b = report.run_a.label, report.run_b.label
    lines = [
        f"# Paired evaluation: A = {a} vs B = {b}",
        "",
        f"{s['n_tasks']} tasks; rollouts {report.settings['rollouts']}; corpus "
        f"{report.settings['corpus']}; {report.settings['test']} test, "
        f"{report.settings['resamples']} resamples, seed {report.settings['seed']}.",
        "",
    ]
    failed = {side: len(ids) for side, ids in s["failed"].items()}
    if any(failed.values()):
        lines += [f"Failed tasks (their job raised twice; scored as returning nothing, "
                  f"status `failed` in tasks.jsonl): A {failed['a']}, B {failed['b']}.", ""]  # fmt: skip
    header = [f"| metric | A ({a}) | B ({b}) | A − B [95% CI] | p |", "|---|---|---|---|---|"]
    lines += header
    for n in report.tests:
        if n in ANSWER_METRICS and lines[-1].startswith("| context_tokens"):
            lines += ["", "Answer quality (answering model; scored apart from retrieval):", "",
                      *header]  # fmt: skip
        ma, mb, t = report.means["a"][n], report.means["b"][n], report.tests[n]
        lines.append(
            f"| {n} | {_fmt(n, ma.mean)} [{_fmt(n, ma.ci_low)}, {_fmt(n, ma.ci_high)}] "
            f"| {_fmt(n, mb.mean)} [{_fmt(n, mb.ci_low)}, {_fmt(n, mb.ci_high)}] "
            f"| {_fmt(n, t.mean_diff)} [{_fmt(n, t.ci_low)}, {_fmt(n, t.ci_high)}] "
            f"| {t.p_value:.4f} |"
        )
    unseeded = [k.upper() for k, v in report.settings.get("rollouts_seeded", {}).items() if not v]
    if report.settings["rollouts"] > 1 and unseeded:
        lines += ["", f"Note: the policy of {' and '.join(unseeded)} takes no seed; its "
                  "rollouts are identical unless the policy itself is stochastic."]  # fmt: skip
    lines += ["", "## Exit reasons", "", "How each episode ended (a policy error is the "
              "policy's failure, not retrieval's).", "", "| exit reason | A | B |",
              "|---|---|---|"]  # fmt: skip
    exits = s["exit_reasons"]
    for reason in sorted({*exits["a"], *exits["b"]}, key=lambda r: (r != "answered", r)):
        lines.append(f"| {reason} | {exits['a'].get(reason, 0)} | {exits['b'].get(reason, 0)} |")
    lines += ["", "## Failure attribution", "",
              "How each cause is read from the trace: the failure attribution table in "
              "thresher's docs/eval.md.", "", "| cause | A | B |", "|---|---|---|"]  # fmt: skip
    for c in (*CAUSES, "ok"):
        label = CAUSE_LABELS.get(c, "no failure")
        lines.append(f"| {label} | {s['attribution']['a'][c]} | {s['attribution']['b'][c]} |")
    lines += [
        "",
        f"Prune-caused failures recoverable by `recall_chunks` from the cache: "
        f"A {s['prune_recoverable']['a']}, B {s['prune_recoverable']['b']}.",
        "",
        "## Failures by hop of the first missing gold document",
        "",
    ]
    for side, label in (("a", a), ("b", b)):
        by_hop = s["attribution_by_hop"][side]
        lines.append(f"**{side.upper()} ({label})**: " + (
            "; ".join(
                f"hop {h}: " + ", ".join(f"{CAUSE_LABELS[c]} {n}" for c, n in row.items() if n)
                for h, row in by_hop.items()
            ) or "no failures"
        ))  # fmt: skip
        lines.append("")
    lines += cost_markdown(report)
    return "\n".join(lines)


def _wall(c: SideCost) -> str:
    return f"{c.wall_mean_s:.2f} / {c.wall_p50_s:.2f} / {c.wall_p95_s:.2f} s"


def cost_markdown(report: PairedReport) -> list[str]:
    """The cost section of the summary: tokens, wall time, USD per episode and per
    resolved question for each side (see :mod:`thresher.eval.cost`)."""
    costs = report_costs(report)
    a, b = costs["a"], costs["b"]
    source = report.settings.get("prices_file")
    workers = max(1, int(report.settings.get("workers") or 1))
    prices = (
        f"Prices from {source} (USD per 1M tokens; gpu_hour billed by wall time / {workers} "
        f"concurrent episode{'s' if workers > 1 else ''})."
        if source
        else "No price table given (--prices FILE): model calls cost n/a."
    )
    rows = [
        ("priced as", a.note, b.note),
        ("prompt tokens", f"{a.prompt_tokens:,}", f"{b.prompt_tokens:,}"),
        ("completion tokens", f"{a.completion_tokens:,}", f"{b.completion_tokens:,}"),
        ("wall time per episode (mean / p50 / p95)", _wall(a), _wall(b)),
        ("cost per episode", format_usd(a.per_episode_usd), format_usd(b.per_episode_usd)),
        ("resolved", f"{a.resolved} of {a.questions}", f"{b.resolved} of {b.questions}"),
        ("cost per resolved question", format_usd(a.per_resolved_usd),
         format_usd(b.per_resolved_usd)),
    ]  # fmt: skip
    lines = ["## Cost", "", f"{RESOLVED_RULE[0].upper()}{RESOLVED_RULE[1:]}. {prices}", "",
             f"| | A ({a.label}) | B ({b.label}) |", "|---|---|---|"]  # fmt: skip
    lines += [f"| {name} | {x} | {y} |" for name, x, y in rows]
    return lines


def write_report(report: PairedReport, out_dir: str | Path) -> dict[str, Path]:
    """Write every output of a paired run under ``out_dir`` (traces are written by the run).

    Returns:
        ``{name: path}`` of the files written.
    """
    from thresher.eval.records import safe_name
    from thresher.eval.report_html import render_html

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    records = task_records(report)
    paths["tasks"] = write_jsonl(out / "tasks.jsonl", records)
    paths["summary_json"] = out / "summary.json"
    paths["summary_json"].write_text(
        json.dumps(summary_dict(report), indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    paths["summary_md"] = out / "summary.md"
    paths["summary_md"].write_text(summary_markdown(report) + "\n", encoding="utf-8")
    paths["html"] = out / "report.html"
    paths["html"].write_text(render_html(report, records), encoding="utf-8")
    for side, run, outcomes in (("a", report.run_a, report.a), ("b", report.run_b, report.b)):
        ranked = {o.task.task_id: o.metrics.ranked_doc_ids for o in outcomes}
        paths[f"run_{side}"] = write_run(
            out / f"run_{side}.trec", ranked, safe_name(run.label), encode_ids=True
        )
    paths["qrels"] = write_qrels(out / "qrels.txt", tasks_to_qrels(report.tasks), encode_ids=True)
    return paths
