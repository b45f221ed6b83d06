"""The backend registry: one place maps a location to the backend that opens it and
ingests into it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from thresher.config import Config
from thresher.errors import IndexNotFoundError, InputError
from thresher.index import backends
from thresher.index.backends import Backend, backend_for, ingest, open_store, register_backend
from thresher.index.store import IngestReport

from .documents import make_documents

SRC = Path(backends.__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("location", "name"),
    [
        ("indexes/hotpot", "embedded"),
        (Path("/tmp/idx"), "embedded"),
        ("C:\\indexes\\hotpot", "embedded"),
        ("http://127.0.0.1:8000/chunks", "server"),
        ("https://chroma.example.org", "server"),
        ("HTTP://127.0.0.1:8000", "server"),
    ],
)
def test_the_location_names_the_backend(location, name) -> None:
    assert backend_for(location).name == name


def test_an_unknown_scheme_is_refused_with_what_is_served() -> None:
    with pytest.raises(InputError, match=r"s3:// .* index folder or .*http://, https://"):
        backend_for("s3://bucket/index")
    with pytest.raises(InputError, match="s3://"):
        open_store("s3://bucket/index")
    with pytest.raises(InputError, match="s3://"):
        ingest(make_documents()[:1], "s3://bucket/index")


def test_opening_and_ingesting_go_through_the_same_registry(monkeypatch) -> None:
    calls = []

    def opener(location, config, embedder):
        calls.append(("open", location, config.retrieval.rrf_k, embedder))
        return "a store"

    def ingester(documents, location, config, embedder, progress, sources):
        calls.append(("ingest", location, len(list(documents)), progress, sources))
        return IngestReport(documents_seen=1)

    monkeypatch.setattr(backends, "_BY_SCHEME", dict(backends._BY_SCHEME))
    register_backend(Backend("memory", ("mem",), opener, ingester))
    config = Config().override({"retrieval.rrf_k": 9})
    assert open_store("mem://x", config, embedder="e") == "a store"  # type: ignore[arg-type]
    assert ingest(make_documents()[:2], "MEM://x", progress=False).documents_seen == 1
    assert ingest(make_documents()[:1], "mem://x", progress=False, sources=["d"]).documents_seen
    assert calls == [
        ("open", "mem://x", 9, "e"),
        ("ingest", "MEM://x", 2, False, None),  # no sources: the documents are the corpus
        ("ingest", "mem://x", 1, False, ["d"]),
    ]


def test_only_url_schemes_can_be_registered() -> None:
    with pytest.raises(InputError, match="names no URL scheme"):
        register_backend(
            Backend("folders-too", (), backends._open_embedded, backends._ingest_embedded)
        )


def test_a_folder_without_an_index_is_named(tmp_path) -> None:
    with pytest.raises(IndexNotFoundError):
        open_store(tmp_path / "nothing")


def test_no_other_module_chooses_a_backend_by_url() -> None:
    """The registry is the one place that looks at a location's form."""
    choosing = re.compile(r"""startswith\(\(?\s*["'](?:https?|http)""")
    offenders = [
        str(path.relative_to(SRC))
        for path in sorted(SRC.rglob("*.py"))
        if choosing.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_preload_loads_the_query_embedder_an_index_folder_names(
    built_index, monkeypatch, tmp_path
) -> None:
    """``preload`` (what ``thresher search`` runs on its warm-up thread) loads the model of
    the embedder the index was built with; a server or a missing index is left alone."""
    from thresher.index.embed import embedder as embedders

    class Recording:
        name = "recording"
        dimension = 4
        preloaded = 0

        def embed(self, texts):
            raise AssertionError("preload embeds nothing")

        def preload(self) -> None:
            self.preloaded += 1

    made: list[str] = []
    recording = Recording()

    def get_embedder(name: str) -> Recording:
        made.append(name)
        return recording

    assert isinstance(embedders.get_embedder("minilm-int8"), embedders.PreloadingEmbedder)
    monkeypatch.setattr(embedders, "get_embedder", get_embedder)
    backends.preload(built_index)
    assert made == ["minilm-int8"] and recording.preloaded == 1
    backends.preload("http://127.0.0.1:9/chunks")
    backends.preload(tmp_path / "no-index")
    assert made == ["minilm-int8"]
