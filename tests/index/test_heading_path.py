"""A Markdown chunk's heading path is indexed after its document's title."""

from __future__ import annotations

from thresher.corpus.chunking import HEADING_PATH
from thresher.corpus.document import Document
from thresher.index.backends import ingest
from thresher.index.embedded.store import EmbeddedStore
from thresher.index.records import (
    chunk_indexed_text,
    chunk_metadata,
    indexed_text,
    record_indexed_text,
)

_GUIDE = (
    "# Guide\n\n## Zephyrine settings\n\nThe settings below tune the mill.\n\n"
    "### Spindle\n\n" + "The spindle turns at a fixed rate and never stops. " * 6 + "\n"
)


def test_indexed_text_puts_the_heading_path_after_the_title() -> None:
    assert indexed_text("Guide", "body", "A > B") == "Guide > A > B\nbody"
    assert indexed_text("Guide", "body") == "Guide\nbody"
    assert indexed_text("", "body", "A") == "A\nbody"
    assert indexed_text("", "body") == "body"


def test_stored_chunks_index_the_same_text_as_fresh_ones(tmp_path, counting, small_config) -> None:
    doc = Document("guide.md", "Guide", _GUIDE, source="guide.md")
    ingest([doc], tmp_path, small_config, embedder=counting, progress=False)
    with EmbeddedStore(tmp_path, small_config, embedder=counting.inner) as store:
        chunks = store.read_document("guide.md")
        deep = [c for c in chunks if c.metadata.get(HEADING_PATH) == "Zephyrine settings > Spindle"]
        assert deep and "Zephyrine" not in deep[-1].text
        for c in chunks:
            assert record_indexed_text(c.text, chunk_metadata(c)) == chunk_indexed_text(c)
            assert chunk_indexed_text(c) in counting.texts
        hits = store.bm25_search("zephyrine", k=len(chunks))
        assert deep[-1].chunk_id in {h.chunk.chunk_id for h in hits}
    counting.texts.clear()
    again = ingest([doc], tmp_path, small_config, embedder=counting, progress=False)
    assert again.documents_unchanged == 1 and counting.texts == []
