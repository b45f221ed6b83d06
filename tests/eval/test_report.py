"""The markdown summary and the report modules: who owns the attribution tallies.

``attribution`` owns the tallies (counts per cause, failures per hop); ``report``
and ``report_html`` both read them from there, and ``report_html`` does not
import ``report`` (``report`` calls ``report_html`` to write the page).
"""

from __future__ import annotations

import ast
from pathlib import Path

from thresher.eval.attribution import (
    CAUSE_LABELS,
    CAUSES,
    Attribution,
    attribution_by_hop,
    attribution_counts,
)

EVAL = Path(__file__).resolve().parents[2] / "src" / "thresher" / "eval"
REPO = EVAL.parents[2]


def _eval_imports(module: str) -> set[str]:
    """The ``thresher.eval`` modules ``module`` imports (anywhere in the file)."""
    tree = ast.parse((EVAL / f"{module}.py").read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("thresher.eval."):
            found.add(node.module.rsplit(".", 1)[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.rsplit(".", 1)[1] for a in node.names if "thresher.eval." in a.name}
    return found


def test_report_and_report_html_do_not_import_each_other() -> None:
    assert "report" not in _eval_imports("report_html")
    assert "attribution" in _eval_imports("report_html")
    assert not {"report", "report_html"} & _eval_imports("attribution")


def test_attribution_counts_lists_every_cause_then_ok() -> None:
    attributions = [
        Attribution(True, "retrieval_miss", 1),
        Attribution(True, "retrieval_miss", 0),
        Attribution(True, "premature_pruning", None),
        Attribution(False),
    ]
    counts = attribution_counts(iter(attributions))  # any iterable, read once
    assert list(counts) == [*CAUSES, "ok"]
    assert counts["retrieval_miss"] == 2 and counts["premature_pruning"] == 1
    assert counts["ok"] == 1 and sum(counts.values()) == 4


def test_attribution_by_hop_orders_hops_and_puts_unknown_last() -> None:
    attributions = [
        Attribution(True, "premature_pruning", None),
        Attribution(True, "retrieval_miss", 1),
        Attribution(True, "early_termination", 1),
        Attribution(True, "retrieval_miss", 0),
        Attribution(False),
    ]
    by_hop = attribution_by_hop(attributions)
    assert list(by_hop) == ["0", "1", "?"]
    assert by_hop["1"] == {c: int(c in ("retrieval_miss", "early_termination")) for c in CAUSES}
    assert by_hop["?"]["premature_pruning"] == 1
    assert attribution_by_hop([Attribution(False)]) == {}


def test_summary_points_to_the_repositorys_own_docs(world_run) -> None:
    from thresher.eval.report import summary_markdown

    report, _, paths = world_run
    text = summary_markdown(report)
    assert "## Failure attribution" in text and "docs/eval.md" in text
    assert "DESIGN" not in text and "§" not in text
    assert paths["summary_md"].read_text(encoding="utf-8").strip() == text.strip()


def test_docs_eval_md_has_the_failure_attribution_table() -> None:
    """The summary sends readers to docs/eval.md: the table is there, one row per cause."""
    doc = (REPO / "docs" / "eval.md").read_text(encoding="utf-8")
    section = doc.split("## Failure attribution", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    labels = {row.split("|")[1].strip() for row in rows[1:]}  # rows[0]: the header
    assert labels == set(CAUSE_LABELS.values())


def test_safe_names_stay_distinct_for_distinct_ids() -> None:
    from thresher.eval.records import safe_name

    assert safe_name("q1") == "q1"
    names = {safe_name(x) for x in ("a b", "a_b", "a/b", "a  b")}
    assert len(names) == 4 and all("/" not in n and " " not in n for n in names)


def test_summary_and_html_report_exit_reasons(world_run) -> None:
    from thresher.eval.attribution import exit_reason_counts
    from thresher.eval.report import summary_dict, summary_markdown

    report, _, paths = world_run
    assert summary_dict(report)["exit_reasons"] == {"a": {"answered": 3}, "b": {"answered": 3}}
    text = summary_markdown(report)
    assert "## Exit reasons" in text and "| answered | 3 | 3 |" in text
    html = paths["html"].read_text(encoding="utf-8")
    assert "<h2>Exit reasons</h2>" in html and "<td>answered</td><td>3</td><td>3</td>" in html
    reasons = ["answered", "policy_error", "policy_error", "budget"]
    assert exit_reason_counts(reasons) == {"policy_error": 2, "answered": 1, "budget": 1}
