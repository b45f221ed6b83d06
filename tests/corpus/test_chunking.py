from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from thresher.corpus.chunking import MAX_CHUNK_CHARS, chunk_document
from thresher.corpus.document import Document
from thresher.errors import ConfigError
from thresher.tokens import get_counter

COUNTER = get_counter()

words = st.one_of(
    st.sampled_from(["the", "cat", "sat.", "Why?", "ok!", "é", "日本語", "naïve", "x" * 40]),
    st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12),
)
separators = st.sampled_from([" ", " ", " ", "\n", "\n\n", "\n \n", "\t", ". ", "  "])
texts = st.lists(st.tuples(words, separators), max_size=60).map(
    lambda parts: "".join(w + s for w, s in parts)
)


def _doc(text: str) -> Document:
    return Document(doc_id="d", title="T", text=text, source="s.txt", metadata={"k": 1})


@settings(max_examples=150, deadline=None)
@given(text=texts, max_tokens=st.integers(min_value=4, max_value=60))
@example(text="0:0:0:\x950:\x81?) the ", max_tokens=13)  # closing bracket after "?"
@example(text="word " * 300, max_tokens=4)
def test_chunk_invariants(text: str, max_tokens: int) -> None:
    doc = _doc(text)
    chunks = chunk_document(doc, max_tokens, COUNTER)
    prev_end = 0
    for i, c in enumerate(chunks):
        assert text[c.start : c.end] == c.text
        assert c.text == c.text.strip() and c.text
        assert COUNTER.count(c.text) <= max_tokens
        assert c.position == i and c.chunk_id == f"d#{i}"
        assert c.start >= prev_end
        # nothing but whitespace between consecutive chunks
        assert text[prev_end : c.start].strip() == ""
        prev_end = c.end
    assert text[prev_end:].strip() == ""
    covered = "".join(c.text for c in chunks)
    assert [ch for ch in covered if not ch.isspace()] == [ch for ch in text if not ch.isspace()]
    assert chunk_document(doc, max_tokens, COUNTER) == chunks


def test_empty_and_blank_documents_have_no_chunks() -> None:
    assert chunk_document(_doc(""), 32, COUNTER) == []
    assert chunk_document(_doc(" \n\n\t "), 32, COUNTER) == []


def test_fields_copied_from_document() -> None:
    doc = _doc("First paragraph here.\n\nSecond paragraph here.")
    (chunk,) = chunk_document(doc, 512, COUNTER)
    assert chunk.text == doc.text
    assert (chunk.title, chunk.source, chunk.metadata, chunk.ingested_at) == (
        "T",
        "s.txt",
        {"k": 1},
        "",
    )
    assert chunk.content_hash and chunk.doc_id == "d"


def test_splits_at_paragraphs_before_sentences() -> None:
    para = "One sentence here. Another sentence follows."
    text = "\n\n".join([para] * 3)
    n = COUNTER.count(para)
    chunks = chunk_document(_doc(text), n + 1, COUNTER)
    assert [c.text for c in chunks] == [para] * 3


def test_long_word_is_hard_cut() -> None:
    word = "abcdefghij" * 50
    chunks = chunk_document(_doc(word), 8, COUNTER)
    assert len(chunks) > 1
    assert "".join(c.text for c in chunks) == word
    assert all(COUNTER.count(c.text) <= 8 for c in chunks)


def test_very_long_unbroken_text_is_cut_within_char_and_token_bounds() -> None:
    text = "ab1" * 20_000  # one 60k-character "word"
    chunks = chunk_document(_doc(text), 100_000, COUNTER)
    assert "".join(c.text for c in chunks) == text
    assert all(len(c.text) <= MAX_CHUNK_CHARS for c in chunks)


def test_max_tokens_too_small_is_config_error() -> None:
    with pytest.raises(ConfigError, match="at least 4"):
        chunk_document(_doc("text"), 3, COUNTER)
