from __future__ import annotations

import pytest

from thresher.corpus.datasets import detect_format, record_paragraphs
from thresher.corpus.ids import join_sentences


def test_detect_format() -> None:
    assert detect_format({"question": "q", "paragraphs": []}) == "musique"
    assert detect_format({"context": {"title": [], "sentences": []}}) == "hotpotqa"
    assert (
        detect_format({"_id": "1", "question": "q", "context": [], "level": "hard"}) == "hotpotqa"
    )
    assert detect_format({"_id": "1", "question": "q", "evidences": []}) == "2wikimultihopqa"
    assert detect_format({"title": "t", "text": "x"}) == "paragraph_corpus"
    assert detect_format({"id": "1", "title": "t", "text": "x"}) is None
    assert detect_format([1, 2]) is None


def test_join_sentences() -> None:
    assert join_sentences(["A.", " B.", "C.", ""]) == "A. B. C."
    assert join_sentences([" lead", "\ntrail "]) == "lead\ntrail"


def test_record_paragraphs_errors() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        record_paragraphs("hotpotqa", {"context": {"title": ["a"], "sentences": []}})
    with pytest.raises(ValueError, match=r"context\[0\]"):
        record_paragraphs("2wikimultihopqa", {"context": [["only title"]]})
    assert record_paragraphs("2wikimultihopqa", {"_id": "x"}) is None
