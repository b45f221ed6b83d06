"""The trace viewer: one static page (HTML + JS + CSS shipped with the package, no build step).

The page shows an episode turn by turn (what was proposed, applied, refused
and why), the active context at any turn (pruned chunks struck through and
marked recallable), the token-usage curve against the soft and hard lines,
each chunk's lineage (the call and the bridge that found it) and, for a trace
written by ``thresher eval``, the failure attribution of its task.

:func:`render_viewer` inlines the script, the style and the trace (as JSON
inside a ``<script type="application/json">`` block, with ``<``, ``>`` and
``&`` escaped so no text can close it) into one self-contained page that works
from a file or from the API. The script builds every element with
``textContent``, never ``innerHTML``, so retrieved text shows as text; the
page's Content-Security-Policy allows only its own script and style (by hash)
as a second line of defence. The same page opened with no trace offers a file
picker for any JSONL trace.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from thresher.corpus.sanitize import safe_json

__all__ = ["ViewerPage", "render_viewer", "eval_context", "read_trace_dicts", "asset"]


@dataclass(frozen=True, slots=True)
class ViewerPage:
    """A rendered viewer page and the Content-Security-Policy that goes with it."""

    html: str
    csp: str


def asset(name: str) -> str:
    """The text of one of the viewer's files (``viewer.html``, ``viewer.js``, ``viewer.css``)."""
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def _script_safe(data: Any) -> str:
    """JSON that cannot end the ``<script>`` element holding it."""
    text = safe_json(data)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(raw, escaped)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


_PLACEHOLDER = re.compile(r"\{\{(CSP|TITLE|STYLE|DATA|SCRIPT)\}\}")


def _hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode() + "'"


def render_viewer(
    events: list[dict[str, Any]] | None,
    *,
    source: str = "",
    context: dict[str, Any] | None = None,
) -> ViewerPage:
    """One self-contained viewer page for a trace.

    Args:
        events: the trace's event dicts (``TraceEvent.to_dict()``, or JSONL lines);
            None for an empty page with a file picker.
        source: where the trace came from (shown in the page's title).
        context: what ``thresher eval`` recorded for the trace's task
            (:func:`eval_context`), shown as attribution badges.

    Returns:
        The page and its Content-Security-Policy (also in a ``<meta>`` tag, so a
        page opened from a file is held to it too).
    """
    script, style = asset("viewer.js"), asset("viewer.css")
    csp = (
        f"default-src 'none'; script-src {_hash(script)}; style-src {_hash(style)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    data = {"source": source, "events": events, "context": context}
    title = "thresher trace" + (f" · {source}" if source else "")
    values = {
        "CSP": _html_text(csp).replace('"', "&quot;"),
        "TITLE": _html_text(title),
        "STYLE": style,
        "DATA": _script_safe(data),
        "SCRIPT": script,
    }
    # one pass over the template: what is put in (a question holding "{{SCRIPT}}", a
    # trace named "{{DATA}}.jsonl") is never searched for placeholders again
    html = _PLACEHOLDER.sub(lambda m: values[m.group(1)], asset("viewer.html"))
    return ViewerPage(html, csp)


def _html_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def read_trace_dicts(path: str | Path) -> list[dict[str, Any]]:
    """A trace file's events as dicts, checked by the trace reader (typed errors)."""
    from thresher.harness.trace import read_jsonl

    return [e.to_dict() for e in read_jsonl(path)]


def eval_context(trace_path: str | Path) -> dict[str, Any] | None:
    """What ``thresher eval`` recorded about the task of a trace it wrote, or None.

    An eval report folder holds ``tasks.jsonl`` and ``traces/<side>/<task>.jsonl``;
    the task record whose side lists this trace gives the gold documents, the
    hops, the metrics and the failure attribution.
    """
    path = Path(trace_path).resolve()
    if len(path.parents) < 3 or path.parent.parent.name != "traces":
        return None
    report = path.parents[2]
    side = path.parent.name
    rel = f"traces/{side}/{path.name}"
    tasks = report / "tasks.jsonl"
    if not tasks.is_file():
        return None
    from thresher.corpus.jsonl import iter_jsonl

    for _, record in iter_jsonl(tasks):
        if not isinstance(record, dict):
            continue
        run = record.get(side)
        if isinstance(run, dict) and rel in (run.get("traces") or []):
            return {
                "task_id": record.get("query_id"),
                "side": side,
                "gold_doc_ids": record.get("gold_doc_ids") or [],
                "hops": record.get("hops") or [],
                "answer": record.get("answer"),
                "attribution": run.get("attribution"),
                "metrics": run.get("metrics"),
                "prediction": run.get("prediction"),
            }
    return None
