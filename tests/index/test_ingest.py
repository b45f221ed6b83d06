"""Ingestion: incremental, idempotent, atomic (a real process killed mid-write)."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from thresher.corpus.document import Document
from thresher.errors import (
    ConfigError,
    IndexNotFoundError,
    IndexVersionError,
    InputError,
    UnknownIdError,
)
from thresher.index.backends import ingest
from thresher.index.embedded.layout import current_generation
from thresher.index.embedded.store import EmbeddedStore

from .helpers import CountingEmbedder


@pytest.fixture
def docs(documents) -> list[Document]:
    """A dozen documents of the shared corpus (some of them several chunks long)."""
    return documents[:12]


def snapshot(index_dir, config, embedder, doc_ids) -> dict:
    """Everything a reader can observe about an index, as plain data."""
    with EmbeddedStore(index_dir, config, embedder=embedder) as store:
        stats = store.stats()
        chunks = {}
        for doc_id in doc_ids:
            try:
                chunks[doc_id] = [c.to_dict() for c in store.read_document(doc_id)]
            except UnknownIdError:  # absent documents are part of the state
                chunks[doc_id] = "UnknownIdError"
        return {
            "documents": stats.documents,
            "chunks": stats.chunks,
            "generation": stats.extra["generation"],
            "read": chunks,
            "hybrid": [h.to_dict() for h in store.hybrid_search("river town harbour", k=8)],
            "grep": [h.chunk.chunk_id for h in store.grep(r"\d{4}", limit=50).hits],
        }


def test_reingesting_the_same_input_changes_nothing(tmp_path, docs, counting, small_config):
    first = ingest(docs, tmp_path, small_config, embedder=counting, progress=False)
    assert (first.documents_added, first.documents_unchanged) == (12, 0)
    assert first.chunks_added == len(counting.texts) > 12
    before = snapshot(tmp_path, small_config, counting.inner, [d.doc_id for d in docs])
    counting.texts.clear()
    again = ingest(docs, tmp_path, small_config, embedder=counting, progress=False)
    assert counting.texts == []  # nothing re-embedded
    assert again.documents_unchanged == 12
    assert again.documents_added == again.documents_updated == again.documents_deleted == 0
    assert again.chunks_added == again.chunks_deleted == 0
    after = snapshot(tmp_path, small_config, counting.inner, [d.doc_id for d in docs])
    assert after == before  # same ids, same counts, same generation: nothing written


def test_only_what_changed_is_added_replaced_or_deleted(tmp_path, docs, counting, small_config):
    ingest(docs, tmp_path, small_config, embedder=counting, progress=False)
    old = snapshot(tmp_path, small_config, counting.inner, [d.doc_id for d in docs])
    edited = dataclasses.replace(docs[1], text=docs[1].text + " The agency moved to Mars in 2040.")
    extra = Document("new-1", "Glass Frogs", "Glass frogs have translucent skin.", "test:new-1")
    run = [docs[0], edited, *docs[3:], extra]  # docs[2] is gone
    counting.texts.clear()
    report = ingest(run, tmp_path, small_config, embedder=counting, progress=False)
    assert (report.documents_added, report.documents_updated) == (1, 1)
    assert (report.documents_deleted, report.documents_unchanged) == (1, 10)
    assert report.chunks_deleted == len(old["read"][docs[1].doc_id]) + len(
        old["read"][docs[2].doc_id]
    )
    # only the new document's chunks and the edited document's changed chunks were embedded
    assert all("Glass frogs" in t or "Mars" in t for t in counting.texts)
    assert any("Glass frogs" in t for t in counting.texts)
    with EmbeddedStore(tmp_path, small_config, embedder=counting.inner) as store:
        assert store.stats().documents == 12
        assert "Mars in 2040" in " ".join(c.text for c in store.read_document(edited.doc_id))
        with pytest.raises(Exception, match=docs[2].doc_id):
            store.read_document(docs[2].doc_id)
        assert store.bm25_search("translucent", k=1)[0].chunk.doc_id == "new-1"
        assert store.grep("Mars").hits[0].chunk.doc_id == edited.doc_id
        unchanged = [c.to_dict() for c in store.read_document(docs[0].doc_id)]
        assert unchanged == old["read"][docs[0].doc_id]  # same ingested_at: untouched
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("gen-")] == ["gen-000002"]


def test_metadata_only_change_reuses_embeddings(tmp_path, docs, counting, small_config):
    ingest(docs, tmp_path, small_config, embedder=counting, progress=False)
    changed = dataclasses.replace(docs[0], metadata={**docs[0].metadata, "reviewed": True})
    counting.texts.clear()
    report = ingest([changed, *docs[1:]], tmp_path, small_config, embedder=counting, progress=False)
    assert report.documents_updated == 1
    assert counting.texts == []
    with EmbeddedStore(tmp_path, small_config, embedder=counting.inner) as store:
        assert store.get([f"{docs[0].doc_id}#0"])[0].metadata["reviewed"] is True


def test_sanitization_counts_are_summed(tmp_path, docs, minilm, small_config):
    flagged = [dataclasses.replace(d, sanitized={"control_chars": 2}) for d in docs[:3]]
    flagged[0] = dataclasses.replace(flagged[0], sanitized={"control_chars": 1, "injection": 1})
    report = ingest(flagged, tmp_path, small_config, embedder=minilm, progress=False)
    assert report.sanitized == {"control_chars": 5, "injection": 1}
    with EmbeddedStore(tmp_path, small_config, embedder=minilm) as store:
        assert store.stats().extra["sanitized"] == {"control_chars": 5, "injection": 1}


def test_duplicate_ids_with_different_content_are_refused(tmp_path, docs, minilm, small_config):
    clash = dataclasses.replace(docs[0], text="something else entirely")
    with pytest.raises(InputError, match=docs[0].doc_id):
        ingest([docs[0], clash], tmp_path, small_config, embedder=minilm, progress=False)
    report = ingest([docs[0], docs[0]], tmp_path, small_config, embedder=minilm, progress=False)
    assert report.documents_seen == report.documents_added == 1


def test_another_embedder_is_refused(tmp_path, docs, minilm, small_config):
    ingest(docs[:2], tmp_path, small_config, embedder=minilm, progress=False)
    other = CountingEmbedder(minilm)
    other.name = "some-other-model"
    with pytest.raises(ConfigError, match="minilm-int8.*some-other-model"):
        ingest(docs[:3], tmp_path, small_config, embedder=other, progress=False)
    with pytest.raises(ConfigError, match="built with embedder minilm-int8"):
        EmbeddedStore(tmp_path, small_config, embedder=other)


def test_missing_and_newer_indexes_are_typed_errors(tmp_path, docs, minilm, small_config):
    with pytest.raises(IndexNotFoundError, match=r"no index at .*thresher index PATH --index"):
        EmbeddedStore(tmp_path / "nowhere", small_config)
    ingest(docs[:2], tmp_path, small_config, embedder=minilm, progress=False)
    manifest = current_generation(tmp_path) / "manifest.json"
    data = json.loads(manifest.read_text())
    data["format_version"], data["thresher_version"] = 99, "9.9.9"
    manifest.write_text(json.dumps(data))
    with pytest.raises(IndexVersionError, match=r"thresher 9\.9\.9 \(format 99\).*upgrade"):
        EmbeddedStore(tmp_path, small_config, embedder=minilm)
    with pytest.raises(IndexVersionError):
        ingest(docs[:3], tmp_path, small_config, embedder=minilm, progress=False)


def test_an_open_store_follows_new_commits(tmp_path, docs, minilm, small_config):
    ingest(docs[:4], tmp_path, small_config, embedder=minilm, progress=False)
    with EmbeddedStore(tmp_path, small_config, embedder=minilm) as store:
        assert store.stats().documents == 4
        ingest(docs[:6], tmp_path, small_config, embedder=minilm, progress=False)
        assert store.stats().documents == 6
        assert store.read_document(docs[5].doc_id)


_KILLED_INGEST = textwrap.dedent(
    """
    import json, sys, time
    from thresher.config import Config
    from thresher.corpus.document import Document
    from thresher.index.embedded import ingest as ingest_module
    from thresher.index.embed.embedder import MiniLMEmbedder

    index_dir, docs_file, stage = sys.argv[1], sys.argv[2], sys.argv[3]
    documents = [Document(**d) for d in json.load(open(docs_file))]
    ingest_module._EMBED_BATCH = 2  # many small writes

    def stall():
        print("WRITING", flush=True)
        time.sleep(120)

    class Stalling(MiniLMEmbedder):
        calls = 0
        def embed(self, texts):
            Stalling.calls += 1
            if stage == "embedding" and Stalling.calls == 3:  # two batches written
                stall()
            return super().embed(texts)

    if stage == "commit":  # everything written and fsynced, CURRENT not yet replaced
        commit = ingest_module.layout.commit_generation
        def stalled_commit(root, generation, **kw):
            ingest_module.layout.fsync_tree(generation)
            stall()
            commit(root, generation, **kw)
        ingest_module.layout.commit_generation = stalled_commit

    config = Config().override({"chunking.max_tokens": 24})
    ingest_module.ingest_embedded(documents, index_dir, config, embedder=Stalling(), progress=False)
    print("DONE", flush=True)
    """
)


@pytest.mark.parametrize("stage", ["embedding", "commit"])
@pytest.mark.slow
def test_a_process_killed_mid_ingest_leaves_the_last_commit(
    stage, tmp_path, documents, minilm, small_config
):
    index_dir = tmp_path / "index"
    committed = documents[:10]
    ingest(committed, index_dir, small_config, embedder=minilm, progress=False)
    all_ids = [d.doc_id for d in documents]
    before = snapshot(index_dir, small_config, minilm, all_ids)

    # the next run edits one document, drops two and adds the rest
    edited = dataclasses.replace(committed[0], text="Rewritten: the station was sold in 2050.")
    run = [edited, *committed[3:], *documents[10:24]]
    docs_file = tmp_path / "docs.json"
    docs_file.write_text(json.dumps([dataclasses.asdict(d) for d in run]))
    script = tmp_path / "killed_ingest.py"
    script.write_text(_KILLED_INGEST)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(index_dir), str(docs_file), stage],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        line = proc.stdout.readline().strip()
        assert line == "WRITING", proc.stderr.read()
        new_generation = index_dir / "gen-000002"
        assert new_generation.is_dir()  # it had started writing
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL

    assert snapshot(index_dir, small_config, minilm, all_ids) == before

    # the next ingest cleans the leftover and commits the run in full
    report = ingest(run, index_dir, small_config, embedder=minilm, progress=False)
    assert (report.documents_added, report.documents_updated, report.documents_deleted) == (
        14,
        1,
        2,
    )
    generations = sorted(p.name for p in index_dir.iterdir() if p.name.startswith("gen-"))
    assert generations == ["gen-000003"]
    after = snapshot(index_dir, small_config, minilm, all_ids)
    assert after["documents"] == len(run)
    assert "sold in 2050" in after["read"][edited.doc_id][0]["text"]
    assert after["read"][committed[1].doc_id] == "UnknownIdError"
