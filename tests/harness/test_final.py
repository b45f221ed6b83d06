"""Final-answer parsing (both written forms) and resolution against the episode."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from thresher.corpus.document import Chunk
from thresher.corpus.ids import content_hash
from thresher.harness.actions import FinalAnswer, RankedDocument
from thresher.harness.replies import (
    isotonic_non_increasing,
    parse_final,
    rank_scores,
    resolve_final,
)
from thresher.harness.state import ActiveContext, RetrievalCache


def _chunk(doc: str, pos: int, text: str = "") -> Chunk:
    text = text or f"text of {doc} {pos}"
    return Chunk(f"{doc}#{pos}", doc, pos, doc.upper(), text, 0, len(text), content_hash(text))


def test_report_form_with_prose_around():
    text = (
        "I found these.\n"
        '<Document id="d1"><Justification>Names the founder.</Justification></Document>\n'
        "<Document id='d2'><Justification>Gives the year.\nTwo sentences.</Justification>"
        "</Document> done"
    )
    final = parse_final(text)
    assert final is not None
    assert [d.doc_id for d in final.documents] == ["d1", "d2"]
    assert final.documents[1].justification == "Gives the year. Two sentences."


def test_report_form_tolerates_missing_closing_tags_and_unquoted_ids():
    text = "<document ID=d1><justification>First\n<Document id=“d2”>Second without tags"
    final = parse_final(text)
    assert final is not None
    assert [(d.doc_id, d.justification) for d in final.documents] == [
        ("d1", "First"),
        ("d2", "Second without tags"),
    ]


def test_json_form_in_a_fence_with_id_alias():
    text = 'Answer:\n```json\n{"documents": [{"id": "d3", "justification": "x"}, {"doc_id": "d1"}]}\n```'
    final = parse_final(text)
    assert final is not None
    assert [d.doc_id for d in final.documents] == ["d3", "d1"]


def test_json_embedded_in_prose_and_bare_list():
    final = parse_final('ok so {"documents": [{"doc_id": "a", "reason": "r"}]} thanks')
    assert final is not None and final.documents[0] == RankedDocument("a", "r")
    final = parse_final('[{"doc_id": "b"}]')
    assert final is not None and final.documents[0].doc_id == "b"


def test_no_answer_is_none_and_empty_list_is_empty_answer():
    assert parse_final("I need to search more.") is None
    assert parse_final("") is None
    assert parse_final('{"documents": []}') == FinalAnswer(())


def test_resolve_maps_chunks_to_docs_merges_and_drops_unknown():
    cache = RetrievalCache()
    for c in (_chunk("d1", 0), _chunk("d1", 1), _chunk("d2", 0)):
        cache.add(c)
    ctx = ActiveContext()
    ctx.add("d1#1", 0, "c")
    final = FinalAnswer(
        (
            RankedDocument("d2#0", "chunk id names d2"),
            RankedDocument("nope", "unknown"),
            RankedDocument("d1", "doc id"),
            RankedDocument("d2", "repeat merges"),
            RankedDocument("d1", "", ("d1#0", "zz#9")),
        )
    )
    docs, dropped = resolve_final(final, cache, ctx, max_documents=10)
    assert [d["doc_id"] for d in docs] == ["d2", "d1"]
    assert docs[0]["chunk_ids"] == ["d2#0"]
    assert docs[0]["justification"] == "chunk id names d2"
    assert docs[1]["chunk_ids"] == ["d1#0"]  # named chunk beats the active-context default
    assert {(d.id, d.code) for d in dropped} == {("nope", "unknown_id"), ("zz#9", "unknown_chunk")}


def test_resolve_defaults_to_active_chunks_and_caps_documents():
    cache = RetrievalCache()
    for c in (_chunk("d1", 0), _chunk("d1", 1), _chunk("d2", 0), _chunk("d3", 0)):
        cache.add(c)
    ctx = ActiveContext()
    ctx.add("d1#1", 0, "c")
    docs, dropped = resolve_final(
        FinalAnswer((RankedDocument("d1"), RankedDocument("d2"), RankedDocument("d3"))),
        cache,
        ctx,
        max_documents=2,
    )
    assert docs[0]["chunk_ids"] == ["d1#1"]
    assert [d["rank"] for d in docs] == [1, 2]
    assert [(d.id, d.code) for d in dropped] == [("d3", "too_many_documents")]


def test_scores_never_rise_with_rank_and_keep_the_answer_order():
    """The issue's case: 0.35, 0.76, 0.37 in answer order; a cutoff at 0.3 must not drop
    rank 2 (and no cutoff may drop a document while keeping one ranked below it)."""
    cache = RetrievalCache()
    for d in ("a", "b", "c"):
        cache.add(_chunk(d, 0))
    final = FinalAnswer(
        (RankedDocument("a", "", (), 0.35), RankedDocument("b", "", (), 0.76))
        + (RankedDocument("c", "", (), 0.37),)
    )
    docs, _ = resolve_final(final, cache, ActiveContext(), max_documents=10)
    assert [d["doc_id"] for d in docs] == ["a", "b", "c"]
    scores = [d["score"] for d in docs]
    assert scores == sorted(scores, reverse=True)
    assert scores == [0.555, 0.555, 0.37]  # isotonic fit: the violating pair shares its mean


def test_scores_are_rank_derived_when_the_policy_gives_none():
    assert rank_scores([None, None, None, None]) == [1.0, 0.5, 0.3333, 0.25]
    assert rank_scores([0.9, None]) == [1.0, 0.5]
    assert rank_scores([]) == []


@given(st.lists(st.floats(0.0, 1.0), max_size=12))
def test_rank_scores_are_monotone_property(probs):
    out = rank_scores(probs)
    assert len(out) == len(probs)
    assert all(a >= b for a, b in zip(out, out[1:], strict=False))


@settings(deadline=None)  # the first example imports scipy
@given(st.lists(st.floats(-1e3, 1e3), max_size=40))
def test_isotonic_fit_is_scipys_property(values):
    from scipy.optimize import isotonic_regression

    want = isotonic_regression(values, increasing=False).x if values else []
    assert np.allclose(isotonic_non_increasing(values), want, rtol=1e-9, atol=1e-6)


def test_ranking_an_answer_does_not_import_scipy():
    """Scoring an answer is on every CLI search's path: no scipy import there."""
    code = (
        "import sys; from thresher.harness.replies import rank_scores; "
        "rank_scores([0.2, 0.9, 0.4]); print('scipy' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
