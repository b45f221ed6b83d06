"""Our ranked metrics equal trec_eval's (through pytrec_eval) on shared cases.

Runs go through our TREC writer and reader, so this also checks that the files
we write are read by the reference tool in the order we mean.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thresher.eval import metrics as m
from thresher.tasks.trec import ranked_lists, read_qrels, read_run, write_qrels, write_run

pytrec_eval = pytest.importorskip("pytrec_eval")

KS = (1, 3, 5, 10)
MEASURES = {f"{name}.{k}" for name in ("P", "recall", "ndcg_cut") for k in KS} | {
    "recip_rank",
    "map",
}


def _ours(ranked: list[str], qrels: dict[str, int]) -> dict[str, float]:
    out = {"recip_rank": m.mrr(ranked, qrels), "map": m.average_precision(ranked, qrels)}
    for k in KS:
        out[f"P_{k}"] = m.precision_at_k(ranked, qrels, k)
        out[f"recall_{k}"] = m.recall_at_k(ranked, qrels, k)
        out[f"ndcg_cut_{k}"] = m.ndcg_at_k(ranked, qrels, k)
    return out


def _check(run: dict[str, list[str]], qrels: dict[str, dict[str, int]], tmp: Path) -> None:
    write_run(tmp / "run.txt", run, tag="parity")
    write_qrels(tmp / "qrels.txt", qrels)
    scored, judged = read_run(tmp / "run.txt"), read_qrels(tmp / "qrels.txt")
    assert ranked_lists(scored) == {q: list(dict.fromkeys(docs)) for q, docs in run.items() if docs}
    with (tmp / "run.txt").open() as fh:
        assert pytrec_eval.parse_run(fh) == scored
    with (tmp / "qrels.txt").open() as fh:
        assert pytrec_eval.parse_qrel(fh) == judged
    reference = pytrec_eval.RelevanceEvaluator(judged, MEASURES).evaluate(scored)
    for qid, docs in run.items():
        if qid not in reference:  # trec_eval skips queries with no retrieved document
            continue
        ours = _ours(docs, judged[qid])
        for name, value in reference[qid].items():
            assert ours[name] == pytest.approx(value, abs=1e-9), (qid, name)


def test_parity_on_fixed_cases(tmp_path: Path) -> None:
    run = {
        "q1": ["d1", "d2", "d3", "d4", "d5", "d6"],
        "q2": ["a", "b", "c"],
        "q3": ["x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "g"],
        "q4": ["c#0", "b", "a"],
        "q5": ["n1", "n2"],
    }
    qrels = {
        "q1": {"d2": 1, "d4": 1, "d9": 1},
        "q2": {"a": 2, "c": 1, "z": 0},
        "q3": {"g": 1, "x3": 3},
        "q4": {"a": 1},
        "q5": {"g": 1},
    }
    _check(run, qrels, tmp_path)


DOCS = [f"doc{i}" for i in range(15)]


@st.composite
def _query(draw: st.DrawFn) -> tuple[list[str], dict[str, int]]:
    ranked = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=12, unique=True))
    grades = draw(st.dictionaries(st.sampled_from(DOCS), st.integers(0, 3), min_size=1, max_size=6))
    if not any(g > 0 for g in grades.values()):
        grades[draw(st.sampled_from(DOCS))] = 1
    return ranked, grades


@settings(max_examples=60, deadline=None)
@given(st.lists(_query(), min_size=1, max_size=4))
def test_parity_on_generated_cases(
    tmp_path_factory: pytest.TempPathFactory, queries: list[tuple[list[str], dict[str, int]]]
) -> None:
    run = {f"q{i}": ranked for i, (ranked, _) in enumerate(queries)}
    qrels = {f"q{i}": grades for i, (_, grades) in enumerate(queries)}
    _check(run, qrels, tmp_path_factory.mktemp("parity"))
