"""What an ingest may delete, on both backends (an index folder and a real ``chroma run``).

Re-indexing a path deletes only documents that came from under it and are gone;
documents read from paths not named are kept; an input that yields no document
is refused and changes nothing; ``sources=None`` (``thresher index --sync``)
makes the index hold exactly the input.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from thresher.corpus.loaders import iter_documents
from thresher.errors import InputError
from thresher.index.backends import ingest, open_store

from .chroma_server import running_chroma


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    with running_chroma(tmp_path_factory.mktemp("chroma-scope")) as url:
        yield url


def _location(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if kind == "server":
        return f"{request.getfixturevalue('chroma_server')}/scope-{tmp_path.name[-20:]}"
    return str(tmp_path / "index")


def _write(folder: Path, names: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / f"{name}.md").write_text(
            f"# {name}\n\nThe {name} note describes the river {name} and its bridges.\n",
            encoding="utf-8",
        )
    return folder


def _doc_ids(location: str, config) -> list[str]:
    with open_store(location, config) as store:
        hits = store.grep(r"\w", limit=1000).hits
        return sorted({h.chunk.doc_id for h in hits})


KINDS = ["embedded", pytest.param("server", marks=pytest.mark.server)]


@pytest.mark.parametrize("kind", KINDS)
def test_deletion_is_scoped_to_the_paths_named(
    kind, tmp_path, request, minilm, small_config, monkeypatch
):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    where = _location(kind, tmp_path, request)
    a = _write(tmp_path / "a", ["alder", "birch", "cedar"])
    b = _write(tmp_path / "b", ["dogwood", "elm"])

    def run(paths, sources="named"):
        named = paths if sources == "named" else sources
        docs = iter_documents(paths)
        return ingest(docs, where, small_config, embedder=minilm, progress=False, sources=named)

    first = run([a, b])
    assert first.documents_added == 5
    # naming one file of b deletes nothing: the other documents came from elsewhere
    one = run([b / "elm.md"])
    assert (one.documents_deleted, one.documents_unchanged, one.documents_kept) == (0, 1, 4)
    assert _doc_ids(where, small_config) == [  # b is the index's second folder: labelled
        "alder.md",
        "b/dogwood.md",
        "b/elm.md",
        "birch.md",
        "cedar.md",
    ]
    # a file gone from a: re-indexing a deletes it, and only it
    (a / "birch.md").unlink()
    gone = run([a])
    assert (gone.documents_deleted, gone.documents_unchanged, gone.documents_kept) == (1, 2, 2)
    assert _doc_ids(where, small_config) == ["alder.md", "b/dogwood.md", "b/elm.md", "cedar.md"]
    # an input with no document is refused and changes nothing
    empty = tmp_path / "empty.txt"
    empty.write_text("   \n", encoding="utf-8")
    with pytest.raises(InputError, match="no documents.*left unchanged"):
        run([empty])
    assert len(_doc_ids(where, small_config)) == 4
    # the whole corpus (--sync): what the input lacks is deleted
    synced = run([b], sources=None)
    assert (synced.documents_deleted, synced.documents_kept) == (2, 0)
    assert _doc_ids(where, small_config) == ["b/dogwood.md", "b/elm.md"]


@pytest.mark.parametrize("kind", KINDS)
def test_an_empty_input_never_empties_an_index_even_in_sync_mode(
    kind, tmp_path, request, minilm, small_config, monkeypatch
):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    where = _location(kind, tmp_path, request)
    ingest(iter_documents([_write(tmp_path / "a", ["alder"])]), where, small_config,
           embedder=minilm, progress=False)  # fmt: skip
    with pytest.raises(InputError, match="no documents"):
        ingest([], where, small_config, embedder=minilm, progress=False)
    assert _doc_ids(where, small_config) == ["alder.md"]


def test_a_moved_folder_records_the_new_origin(tmp_path, minilm, small_config):
    where = tmp_path / "index"
    a = _write(tmp_path / "a", ["alder", "birch"])
    ingest(iter_documents([a]), where, small_config, embedder=minilm, progress=False,
           sources=[a])  # fmt: skip
    moved = a.rename(tmp_path / "moved")
    again = ingest(iter_documents([moved]), where, small_config, embedder=minilm,
                   progress=False, sources=[moved])  # fmt: skip
    assert (again.documents_unchanged, again.chunks_added) == (2, 0)  # nothing re-embedded
    (moved / "birch.md").unlink()
    last = ingest(iter_documents([moved]), where, small_config, embedder=minilm,
                  progress=False, sources=[moved])  # fmt: skip
    assert last.documents_deleted == 1
    assert _doc_ids(str(where), small_config) == ["alder.md"]


def test_new_chunking_settings_need_every_document(tmp_path, minilm, small_config):
    where = tmp_path / "index"
    a = _write(tmp_path / "a", ["alder"])
    b = _write(tmp_path / "b", ["birch"])
    ingest(iter_documents([a, b]), where, small_config, embedder=minilm, progress=False,
           sources=[a, b])  # fmt: skip
    finer = small_config.override({"chunking.max_tokens": 12})
    with pytest.raises(InputError, match="could not be re-chunked"):
        ingest(iter_documents([a]), where, finer, embedder=minilm, progress=False, sources=[a])
    redone = ingest(iter_documents([a, b]), where, finer, embedder=minilm, progress=False,
                    sources=[a, b])  # fmt: skip
    assert redone.documents_updated == 2
