"""The paired run as one self-contained HTML page: inline CSS, JS and SVG plots.

No CDN, no fonts, no network: the page opens from disk anywhere. A
Content-Security-Policy in the page lets only its own script (by hash) run and
loads nothing from anywhere; every shown text has its bidi, zero-width and control
characters written out as ``[U+XXXX]`` (a question cannot reorder what is shown). Plots are
drawn here as SVG: recall@5 against context tokens (one point per task and
side), failures by cause, failures by hop (stacked by cause); a cost table
(tokens, wall time, USD per episode and per resolved question); then a per-task
table (sortable by clicking a header) linking to each trace file.
"""

from __future__ import annotations

import base64
import hashlib
from html import escape as _escape
from typing import Any, NamedTuple

from thresher.corpus.sanitize import reveal_hidden
from thresher.eval.attribution import (
    CAUSE_LABELS,
    CAUSES,
    attribution_by_hop,
    attribution_counts,
    exit_reason_counts,
)
from thresher.eval.cost import RESOLVED_RULE, format_usd, report_costs
from thresher.eval.protocol import PairedReport

__all__ = ["render_html", "scatter_svg", "bars_svg", "stacked_svg"]

_COLORS = {"a": "#2f6db5", "b": "#d9822b"}
_CAUSE_COLORS = dict(
    zip(CAUSES, ("#8e44ad", "#c0392b", "#e67e22", "#7f8c8d", "#16a085", "#2c3e50"), strict=True)
)
_W, _H, _PAD = 560, 300, 44

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#1d2329;
max-width:1200px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #d5dbe1;padding:3px 7px;
text-align:left;vertical-align:top}th{background:#f1f4f7;cursor:pointer;user-select:none}
td.n{text-align:right;font-variant-numeric:tabular-nums}.pos{color:#1e7d32}.neg{color:#b3261e}
.plots{display:flex;flex-wrap:wrap;gap:18px}.plot{border:1px solid #e3e7eb;padding:6px}
.legend span{display:inline-block;margin-right:14px}.sw{display:inline-block;width:11px;
height:11px;margin-right:4px;vertical-align:middle}small{color:#5b6670}
"""

_JS = """
(function(){
  function key(td){var v=td.getAttribute('data-v');if(v===null)v=td.textContent;
    var f=parseFloat(v);return isNaN(f)?v.toLowerCase():f;}
  var table=document.getElementById('tasks');if(!table)return;
  var heads=table.querySelectorAll('th');
  heads.forEach(function(th,i){th.addEventListener('click',function(){
    var body=table.tBodies[0];var rows=Array.prototype.slice.call(body.rows);
    var dir=th.getAttribute('data-dir')==='asc'?-1:1;th.setAttribute('data-dir',dir>0?'asc':'desc');
    rows.sort(function(r1,r2){var x=key(r1.cells[i]),y=key(r2.cells[i]);
      return x<y?-dir:x>y?dir:0;});
    rows.forEach(function(r){body.appendChild(r);});});});
})();
"""


def _ticks(top: int) -> list[int]:
    step = max(1, -(-top // 4))
    return list(range(0, top + step, step))


def _yticks(left: float, bottom: float, height: float, top: int) -> tuple[str, int]:
    ticks = _ticks(top)
    scale = ticks[-1] or 1
    marks = "".join(
        _text(left - 5, bottom - height * v / scale + 4, str(v), "end", 10) for v in ticks
    )
    return marks, scale


def _axis(x0: float, y0: float, x1: float, y1: float) -> str:
    return f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y1}" stroke="#555" stroke-width="1"/>'


def _frame(title: str, left: float, bottom: float, width: float, top: float) -> list[str]:
    """The opening of a plot: the ``<svg>`` tag, the title, the x axis along ``bottom``
    and the y axis up to ``top``; the caller appends the marks and ``</svg>``."""
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" role="img">',
        _text(_W / 2, 15, title, size=13),
        _axis(left, bottom, left + width, bottom) + _axis(left, bottom, left, top),
    ]


class _Bars(NamedTuple):
    """Where a bar chart draws: the plot's left edge and baseline, its height, the
    width of one column slot, and the value at the top of the y axis."""

    left: int
    bottom: int
    height: int
    slot: float
    top: int


def _bar_chart(title: str, margin: int, columns: int, top: int) -> tuple[list[str], _Bars]:
    """The opening of a bar chart of ``columns`` slots (``margin``: room below the
    baseline for labels) with y ticks up to at least ``top``, and its layout."""
    left, bottom = _PAD, _H - margin
    width, height = _W - left - 10, bottom - 30
    parts = _frame(title, left, bottom, width, 30)
    marks, scale = _yticks(left, bottom, height, top)
    parts.append(marks)
    return parts, _Bars(left, bottom, height, width / max(1, columns), scale)


def _text(x: float, y: float, s: str, anchor: str = "middle", size: int = 11) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
        f'fill="#333">{escape(s)}</text>'
    )


def scatter_svg(points: dict[str, list[tuple[float, float, str]]], title: str) -> str:
    """Recall (y, 0-1) against context tokens (x) per side: ``{side: [(x, y, tip)]}``."""
    xs = [x for pts in points.values() for x, _, _ in pts] or [1.0]
    xmax = max(xs) * 1.05 or 1.0
    left, bottom = _PAD + 10, _H - _PAD
    width, height = _W - left - 14, bottom - 24

    def px(x: float) -> float:
        return left + width * x / xmax

    def py(y: float) -> float:
        return bottom - height * y

    parts = _frame(title, left, bottom, width, 24)
    for i in range(6):
        y = i / 5
        parts.append(_text(left - 6, py(y) + 4, f"{y:.1f}", "end", 10))
        parts.append(f'<line x1="{left}" y1="{py(y):.1f}" x2="{left + width}" y2="{py(y):.1f}" '
                     'stroke="#eee"/>')  # fmt: skip
    for i in range(5):
        x = xmax * i / 4
        parts.append(_text(px(x), bottom + 15, f"{x:,.0f}", size=10))
    parts.append(_text(left + width / 2, _H - 6, "context tokens at termination", size=11))
    parts.append(
        f'<text x="12" y="{bottom - height / 2:.0f}" font-size="11" text-anchor="middle" '
        f'transform="rotate(-90 12 {bottom - height / 2:.0f})" fill="#333">recall@5</text>'
    )
    for side, pts in points.items():
        color = _COLORS[side]
        for n, (x, y, tip) in enumerate(pts):
            jitter = ((n * 37) % 11 - 5) * 0.004
            cx, cy = px(x), py(min(1.0, max(0.0, y + jitter)))
            shape = (
                f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="3.5"'
                if side == "a"
                else f'<rect x="{cx - 3:.1f}" y="{cy - 3:.1f}" width="6" height="6"'
            )
            parts.append(f'{shape} fill="{color}" fill-opacity="0.55"><title>{escape(tip)}'
                         f"</title>{'</circle>' if side == 'a' else '</rect>'}")  # fmt: skip
        if pts:
            mx = sum(p[0] for p in pts) / len(pts)
            my = sum(p[1] for p in pts) / len(pts)
            parts.append(
                f'<circle cx="{px(mx):.1f}" cy="{py(my):.1f}" r="8" fill="none" '
                f'stroke="{color}" stroke-width="3"><title>mean {side.upper()}: '
                f"{my:.3f} at {mx:,.0f} tokens</title></circle>"
            )
    parts.append("</svg>")
    return "".join(parts)


def bars_svg(groups: dict[str, dict[str, int]], title: str) -> str:
    """Grouped bars: ``{group label: {side: count}}`` (sides ``a``/``b``)."""
    labels = list(groups)
    top = max([v for g in groups.values() for v in g.values()] + [1])
    parts, (left, bottom, height, slot, top) = _bar_chart(title, 60, len(labels), top)
    for i, label in enumerate(labels):
        for j, side in enumerate(("a", "b")):
            v = groups[label].get(side, 0)
            h = height * v / top
            x = left + i * slot + slot * (0.15 + 0.35 * j)
            parts.append(
                f'<rect x="{x:.1f}" y="{bottom - h:.1f}" width="{slot * 0.33:.1f}" '
                f'height="{h:.1f}" fill="{_COLORS[side]}"><title>{escape(label)} '
                f"{side.upper()}: {v}</title></rect>"
            )
            parts.append(_text(x + slot * 0.165, bottom - h - 3, str(v), size=10))
        words = label.split(" ")
        for k, line in enumerate([" ".join(words[:2]), " ".join(words[2:])]):
            parts.append(_text(left + (i + 0.5) * slot, bottom + 14 + 12 * k, line, size=10))
    parts.append("</svg>")
    return "".join(parts)


def stacked_svg(by_hop: dict[str, dict[str, dict[str, int]]], title: str) -> str:
    """Stacked bars per (hop, side): ``{side: {hop: {cause: count}}}``."""
    hops = sorted({h for side in by_hop.values() for h in side}, key=lambda h: (h == "?", h))
    cols = [(h, s) for h in hops for s in ("a", "b")]
    totals = [sum(by_hop.get(s, {}).get(h, {}).values()) for h, s in cols]
    top = max(totals + [1])
    parts, (left, bottom, height, slot, top) = _bar_chart(title, 50, len(cols), top)
    for i, (hop, side) in enumerate(cols):
        y = float(bottom)
        for cause in CAUSES:
            v = by_hop.get(side, {}).get(hop, {}).get(cause, 0)
            if not v:
                continue
            h = height * v / top
            y -= h
            parts.append(
                f'<rect x="{left + i * slot + slot * 0.15:.1f}" y="{y:.1f}" '
                f'width="{slot * 0.7:.1f}" height="{h:.1f}" fill="{_CAUSE_COLORS[cause]}">'
                f"<title>hop {escape(hop)} {side.upper()}: {CAUSE_LABELS[cause]} {v}</title></rect>"
            )
        parts.append(_text(left + (i + 0.5) * slot, bottom + 14, f"{side.upper()}", size=10))
        if side == "a":
            parts.append(_text(left + (i + 1) * slot, bottom + 28, f"hop {hop}", size=10))
    if not cols:
        parts.append(_text(_W / 2, _H / 2, "no failures"))
    parts.append("</svg>")
    return "".join(parts)


def _legend() -> str:
    sides = "".join(
        f'<span><i class="sw" style="background:{c}"></i>{s.upper()}</span>'
        for s, c in _COLORS.items()
    )
    causes = "".join(
        f'<span><i class="sw" style="background:{_CAUSE_COLORS[c]}"></i>{CAUSE_LABELS[c]}</span>'
        for c in CAUSES
    )
    return f'<p class="legend">{sides}</p><p class="legend">{causes}</p>'


def _summary_table(report: PairedReport) -> str:
    rows = []
    for n in report.tests:
        ma, mb, t = report.means["a"][n], report.means["b"][n], report.tests[n]
        fmt = "{:,.0f}" if n == "context_tokens" else "{:.3f}"
        better = -t.mean_diff if n == "context_tokens" else t.mean_diff  # fewer tokens: better
        cls = "pos" if better > 0 else "neg" if better < 0 else ""
        rows.append(
            f"<tr><td>{n}</td><td class=n>{fmt.format(ma.mean)}</td>"
            f"<td class=n>{fmt.format(mb.mean)}</td><td class='n {cls}'>"
            f"{fmt.format(t.mean_diff)} [{fmt.format(t.ci_low)}, {fmt.format(t.ci_high)}]</td>"
            f"<td class=n>{t.p_value:.4f}</td></tr>"
        )
    head = "<tr><th>metric</th><th>A</th><th>B</th><th>A − B [95% CI]</th><th>p</th></tr>"
    return f"<table>{head}{''.join(rows)}</table>"


def _exit_table(report: PairedReport) -> str:
    """Episodes per exit reason, A and B side by side (``answered`` first)."""
    a = exit_reason_counts(o.metrics.exit_reason for o in report.a)
    b = exit_reason_counts(o.metrics.exit_reason for o in report.b)
    rows = "".join(
        f"<tr><td>{escape(r)}</td><td>{a.get(r, 0)}</td><td>{b.get(r, 0)}</td></tr>"
        for r in sorted({*a, *b}, key=lambda r: (r != "answered", r))
    )
    return (
        f"<table><thead><tr><th>exit reason</th><th>A</th><th>B</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


def _cost_table(report: PairedReport) -> str:
    """Tokens, wall time and USD per side (``n/a`` where no price applies)."""
    costs = report_costs(report)
    a, b = costs["a"], costs["b"]
    rows = [
        ("priced as", escape(a.note), escape(b.note)),
        ("prompt tokens", f"{a.prompt_tokens:,}", f"{b.prompt_tokens:,}"),
        ("completion tokens", f"{a.completion_tokens:,}", f"{b.completion_tokens:,}"),
        ("wall time per episode, mean / p50 / p95 (s)",
         f"{a.wall_mean_s:.2f} / {a.wall_p50_s:.2f} / {a.wall_p95_s:.2f}",
         f"{b.wall_mean_s:.2f} / {b.wall_p50_s:.2f} / {b.wall_p95_s:.2f}"),
        ("cost per episode", format_usd(a.per_episode_usd), format_usd(b.per_episode_usd)),
        ("resolved", f"{a.resolved} of {a.questions}", f"{b.resolved} of {b.questions}"),
        ("cost per resolved question", format_usd(a.per_resolved_usd),
         format_usd(b.per_resolved_usd)),
    ]  # fmt: skip
    body = "".join(f"<tr><td>{n}</td><td>{x}</td><td>{y}</td></tr>" for n, x, y in rows)
    source = report.settings.get("prices_file")
    note = f"prices from {escape(str(source))}" if source else "no price table (--prices FILE)"
    return (
        f"<p><small>{escape(RESOLVED_RULE)}; {note}.</small></p><table><tr><th></th>"
        f"<th>A ({escape(a.label)})</th><th>B ({escape(b.label)})</th></tr>{body}</table>"
    )


def _cell(value: float | None, fmt: str = "{:.2f}") -> str:
    if value is None:
        return "<td class=n data-v=''>–</td>"
    return f"<td class=n data-v='{value}'>{fmt.format(value)}</td>"


def _links(paths: list[str]) -> str:
    return " ".join(f'<a href="{escape(p)}">{i}</a>' for i, p in enumerate(paths, 1)) or "–"


def _task_table(records: list[dict[str, Any]]) -> str:
    head = (
        "<thead><tr><th>task</th><th>question</th><th>A R@5</th><th>B R@5</th><th>Δ R@5</th>"
        "<th>A tokens</th><th>B tokens</th><th>A cause</th><th>B cause</th><th>A hop</th>"
        "<th>B hop</th>"
        "<th>A trace</th><th>B trace</th></tr></thead>"
    )
    rows = []
    for r in records:
        ma, mb = r["a"]["metrics"], r["b"]["metrics"]
        aa, ab = r["a"]["attribution"], r["b"]["attribution"]
        question = r["question"] if len(r["question"]) <= 110 else r["question"][:109] + "…"
        rows.append(
            f"<tr><td>{escape(r['query_id'])}</td><td>{escape(question)}</td>"
            + _cell(ma["recall_at"]["5"])
            + _cell(mb["recall_at"]["5"])
            + _cell(r["diff"]["recall@5"], "{:+.2f}")
            + _cell(ma["context_tokens"], "{:,.0f}")
            + _cell(mb["context_tokens"], "{:,.0f}")
            + f"<td>{escape(CAUSE_LABELS.get(aa['cause'] or '', '–'))}</td>"
            + f"<td>{escape(CAUSE_LABELS.get(ab['cause'] or '', '–'))}</td>"
            + _cell(aa["hop"], "{:.0f}")
            + _cell(ab["hop"], "{:.0f}")
            + f"<td>{_links(r['a']['traces'])}</td><td>{_links(r['b']['traces'])}</td></tr>"
        )
    return f"<table id=tasks>{head}<tbody>{''.join(rows)}</tbody></table>"


def escape(text: str) -> str:
    """``text`` for HTML, its hidden and reordering characters written out."""
    return _escape(reveal_hidden(text))


def content_security_policy() -> str:
    """The page's policy: nothing loaded, inline styles, and the page's script by hash."""
    digest = base64.b64encode(hashlib.sha256(_JS.encode("utf-8")).digest()).decode("ascii")
    return (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    )


def render_html(report: PairedReport, records: list[dict[str, Any]]) -> str:
    """The whole report page (``records``: one dict per task, as ``report.task_records`` makes)."""
    a, b = report.run_a.label, report.run_b.label
    points = {
        side: [
            (
                float(o.metrics.context_tokens),
                o.metrics.recall_at.get(5, 0.0),
                f"{o.task.task_id}: recall@5 {o.metrics.recall_at.get(5, 0.0):.2f}, "
                f"{o.metrics.context_tokens} tokens",
            )
            for o in outcomes
        ]
        for side, outcomes in (("a", report.a), ("b", report.b))
    }
    sides = {"a": report.a, "b": report.b}
    counts = {side: attribution_counts(o.attribution for o in oc) for side, oc in sides.items()}
    causes = {CAUSE_LABELS[c]: {side: n[c] for side, n in counts.items()} for c in CAUSES}
    by_hop = {side: attribution_by_hop(o.attribution for o in oc) for side, oc in sides.items()}
    s = report.settings
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy()}">'
        f"<title>thresher eval: {escape(a)} vs {escape(b)}</title><style>{_CSS}</style></head>"
        f"<body><h1>Paired evaluation: A = {escape(a)} vs B = {escape(b)}</h1>"
        f"<p><small>{len(report.tasks)} tasks · rollouts {s['rollouts']} · corpus {s['corpus']}"
        f" · {s['test']} test, {s['resamples']} resamples, seed {s['seed']} · A: "
        f"{escape(report.run_a.source)} · B: {escape(report.run_b.source)}</small></p>"
        f"<h2>Summary</h2>{_summary_table(report)}"
        f"<h2>Exit reasons</h2>{_exit_table(report)}"
        f"<h2>Cost</h2>{_cost_table(report)}"
        f"<h2>Plots</h2>{_legend()}<div class=plots>"
        f"<div class=plot>{scatter_svg(points, 'recall@5 vs context tokens (per task)')}</div>"
        f"<div class=plot>{bars_svg(causes, 'failures by cause')}</div>"
        f"<div class=plot>{stacked_svg(by_hop, 'failures by hop and cause')}</div></div>"
        f"<h2>Tasks</h2><p><small>Click a header to sort. Trace links open the JSONL "
        f"(<code>thresher trace show FILE</code>).</small></p>{_task_table(records)}"
        f"<script>{_JS}</script></body></html>\n"
    )
