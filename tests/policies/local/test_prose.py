"""Bridges are read in prose: never in code, markup or a web page's build files."""

from __future__ import annotations

from pathlib import Path

from thresher.corpus.chunking import chunk_document
from thresher.corpus.document import Chunk
from thresher.corpus.files import file_document
from thresher.policies.local.bridges import Anchor, bridge_queries
from thresher.policies.local.constants import DEFAULT_CONSTANTS
from thresher.policies.local.prose import anchor_prose, is_release_notes
from thresher.policies.local.sources import identifier_spans
from thresher.tokens import get_counter

PAGE = """\
# Deploy Guide { #deploy }

<div class="Termy Console" style="color: #D3D7CF">
The Deploy Guide hands releases to the Release Pipeline, configured in the Config Reference.
</div>

```python
from Harbor import Shipyard Widget
```

Call `Retry Handler` when a step fails.
"""
QUESTION = "Which page configures what the deploy guide hands releases to?"


def _chunk(doc_id: str, title: str, text: str) -> Chunk:
    return Chunk(f"{doc_id}#0", doc_id, 0, title, text, 0, len(text), "h")


def _phrases(chunk: Chunk, text: str) -> set[str]:
    anchor = Anchor(chunk.chunk_id, chunk.doc_id, chunk.title, text)
    return {b.phrase for b in bridge_queries(QUESTION, [anchor], {}, limit=20)}


def test_names_in_code_and_markup_are_no_bridges(tmp_path: Path):
    (tmp_path / "deploy.md").write_text(PAGE, encoding="utf-8")
    doc = file_document(tmp_path / "deploy.md", "deploy.md", "markdown")
    (chunk,) = chunk_document(doc, 512, get_counter())
    read = _phrases(chunk, anchor_prose(chunk, QUESTION.lower()))
    assert {"Release Pipeline", "Config Reference"} <= read
    noise = {"Termy Console", "D3D7CF", "Harbor", "Shipyard Widget", "Retry Handler"}
    assert not read & noise
    # the raw file read as it was before: markup and code named the follow-ups
    raw = _chunk("deploy.md", "Deploy Guide", PAGE)
    assert _phrases(raw, PAGE) & noise


def test_an_index_built_before_still_reads_prose_only():
    # a chunk without metadata["code"]: fences and inline code found in its own text
    chunk = _chunk("guide.md", "Guide", PAGE)
    text = anchor_prose(chunk, QUESTION.lower())
    assert "Shipyard" not in text and "Retry Handler" not in text and "D3D7CF" not in text
    assert "Release Pipeline" in text
    # a record or passage (no file kind) is read as it is but for hex colours
    passage = _chunk("p-1", "Song", "The `Ballad` of #D3D7CF")
    assert anchor_prose(passage, "") == "The `Ballad` of  ; "
    plain = _chunk("p-2", "Song", "The Ballad of Foo")
    assert anchor_prose(plain, "") is plain.text
    # a .txt file written in reStructuredText (Django's sources) is told by its literals
    rst = _chunk("docs/ref/settings.txt", "Settings", "Set ``ROOT_URLCONF`` in Foo Bar.")
    assert "ROOT_URLCONF" not in anchor_prose(rst, "") and "Foo Bar" in anchor_prose(rst, "")


def test_a_web_build_file_is_no_identifier_but_a_config_file_is():
    spans = identifier_spans("Edit 404.html, extra.css and logo.png; see login.defs and mkdocs.yml")
    assert spans == ["login.defs", "mkdocs.yml"]


def test_release_notes_lend_their_bridges_less_weight():
    assert is_release_notes("doc/en/changelog.rst", "Changelog")
    assert not is_release_notes("doc/en/how-to/fixtures.rst", "How to use fixtures")
    assert 0 < DEFAULT_CONSTANTS.changelog_weight < 1
