"""Ingest into a real ``chroma run`` server: an interrupted first ingest resumes from its
last commit, an update keeps the index's MiniLM variant, and the report accounts for
every file, as on the embedded backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from thresher.config import Config, RetrievalConfig
from thresher.corpus.document import Document
from thresher.corpus.load_stats import LoadStats
from thresher.corpus.loaders import iter_documents
from thresher.index.backends import ingest
from thresher.index.server import ingest as server_ingest
from thresher.index.server import layout as sl

from .chroma_server import running_chroma
from .helpers import InterruptingEmbedder, numbered_docs

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory: pytest.TempPathFactory):
    with running_chroma(tmp_path_factory.mktemp("chroma-ingest")) as url:
        yield url


def _header(url: str) -> sl.ServerHeader:
    where = sl.parse_location(url)
    client = sl.connect(where)
    try:
        meta = client.get_collection(where.collection, embedding_function=None).metadata
    finally:
        client.close()
    header = sl.ServerHeader.from_metadata(meta, url)
    assert header is not None
    return header


def test_an_interrupted_first_ingest_resumes_from_its_last_commit(
    chroma_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server_ingest, "COMMIT_CHUNKS", 4)
    url = f"{chroma_url}/resume-first"
    docs = numbered_docs(20)
    with pytest.raises(KeyboardInterrupt):  # 2 texts per call: stopped in the 5th part
        ingest(docs, url, Config(), embedder=InterruptingEmbedder(stop_at=9), progress=False)
    assert _header(url).state == "writing"
    again = InterruptingEmbedder()
    report = ingest(docs, url, Config(), embedder=again, progress=False)
    assert again.texts == 4  # only what the last commit lacked
    assert (report.documents_added, report.documents_unchanged) == (4, 16)
    header = _header(url)
    assert (header.state, header.documents, header.chunks) == ("ready", 20, 20)
    quiet = InterruptingEmbedder()
    report = ingest(docs, url, Config(), embedder=quiet, progress=False)
    assert (quiet.texts, report.documents_unchanged) == (0, 20)


def test_a_change_of_chunking_interrupted_is_redone_whole(
    chroma_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The header keeps the old chunking until the run ends: a stopped re-chunking is
    seen as one again, never as documents already done."""
    url = f"{chroma_url}/rechunk"
    docs = [
        Document(f"d{i}", f"doc {i}", " ".join(f"Word{j} of document {i}." for j in range(40)), "t")
        for i in range(6)
    ]
    ingest(docs, url, Config(), embedder=InterruptingEmbedder(), progress=False)
    monkeypatch.setattr(server_ingest, "COMMIT_CHUNKS", 4)
    smaller = Config().override({"chunking.max_tokens": 32})
    with pytest.raises(KeyboardInterrupt):
        ingest(docs, url, smaller, embedder=InterruptingEmbedder(stop_at=6), progress=False)
    assert _header(url).chunking["max_tokens"] == Config().chunking.max_tokens
    report = ingest(docs, url, smaller, embedder=InterruptingEmbedder(), progress=False)
    assert report.documents_updated == 6
    header = _header(url)
    assert (header.state, header.chunking["max_tokens"]) == ("ready", 32)
    assert header.chunks == report.chunks_added > 6


def test_the_default_setting_updates_a_server_index_with_the_variant_it_records(
    chroma_url: str, minilm, documents, small_config
) -> None:
    from thresher.index.embed.embedder import MINILM_NAMES

    url = f"{chroma_url}/variant"
    other = next(n for n in MINILM_NAMES if n != RetrievalConfig().embedder)
    ingest(documents[:2], url, small_config.override({"retrieval.embedder": other}), progress=False)
    report = ingest(documents[:3], url, small_config, progress=False)  # the default setting
    assert report.documents_added == 1
    assert _header(url).embedder == other


def test_the_report_accounts_for_every_file(chroma_url: str, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nThe alpha file.\n", encoding="utf-8")
    (folder / "b.bin").write_bytes(bytes(range(256)))
    (folder / "empty.txt").write_text("", encoding="utf-8")
    stats = LoadStats()
    for location in (f"{chroma_url}/account", str(tmp_path / "index")):
        stats = LoadStats()
        report = ingest(
            iter_documents([folder], stats),
            location,
            Config(),
            embedder=InterruptingEmbedder(),
            progress=False,
            sources=[folder],
            files=stats,
        )
        assert report.files == stats.to_dict()
        assert report.to_dict()["files"]["files"] == 2
        skipped = report.files["skipped"]
        assert sum(s["count"] for s in skipped.values()) == 2
        assert any(str(folder / "b.bin") in s["examples"] for s in skipped.values())
