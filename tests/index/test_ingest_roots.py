"""File ids labelled by root folder (:mod:`thresher.index.ingest.roots`), on both backends,
and the migration of an index written before roots were recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thresher.corpus.document import Document
from thresher.corpus.loaders import iter_documents
from thresher.errors import IndexVersionError, InputError
from thresher.index.backends import ingest, open_store
from thresher.index.embedded import layout
from thresher.index.ingest.roots import label_documents, new_label
from thresher.index.manifest import DocEntry

from .chroma_server import running_chroma


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    with running_chroma(tmp_path_factory.mktemp("chroma-roots")) as url:
        yield url


KINDS = ["embedded", pytest.param("server", marks=pytest.mark.server)]


def _note(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# {text}\n\nThe {text} note.\n", encoding="utf-8")
    return path


def _texts(location: str, config) -> dict[str, str]:
    with open_store(location, config) as store:
        return {h.chunk.doc_id: h.chunk.text for h in store.grep(r"\w", limit=100).hits}


@pytest.mark.parametrize("kind", KINDS)
def test_two_folders_keep_their_readmes_apart(kind, tmp_path, request, minilm, small_config):
    where = str(tmp_path / "index")
    if kind == "server":
        where = f"{request.getfixturevalue('chroma_server')}/roots-{tmp_path.name[-16:]}"
    c1, c2 = tmp_path / "c1", tmp_path / "c2"
    _note(c1 / "README.md", "alder")
    _note(c2 / "README.md", "birch")
    for folder in (c1, c2, c1):  # the roots are recorded: indexing c1 again changes nothing
        report = ingest(iter_documents([folder]), where, small_config, embedder=minilm,
                        progress=False, sources=[folder])  # fmt: skip
    assert (report.documents_updated, report.documents_unchanged) == (0, 1)
    texts = _texts(where, small_config)
    assert sorted(texts) == ["README.md", "c2/README.md"]
    assert "alder" in texts["README.md"] and "birch" in texts["c2/README.md"]


def _doc(root: Path, rel: str) -> Document:
    return Document(rel, rel, "text", rel, origin=str(root / rel), root=str(root))


def test_labels_are_unique_and_never_a_folder_of_the_first_root(tmp_path):
    first, other = tmp_path / "a", tmp_path / "x" / "docs"
    (first / "docs").mkdir(parents=True)
    other.mkdir(parents=True)
    roots: dict[str, str] = {}
    docs = [_doc(first, "n.md"), _doc(other, "n.md"), _doc(tmp_path / "y" / "docs", "n.md")]
    (tmp_path / "y" / "docs").mkdir(parents=True)
    assert [d.doc_id for d in label_documents(docs, roots)] == [
        "n.md",
        "docs-2/n.md",  # "docs" is a folder of the first root
        "docs-3/n.md",
    ]
    assert new_label(str(tmp_path / "z"), roots) == "z"
    # the first root gains a folder named like a label: refused, not mixed up
    (first / "docs-2").mkdir()
    with pytest.raises(InputError, match="would fall among the documents of the folder"):
        list(label_documents([_doc(first, "docs-2/m.md")], roots))
    # a file under a recorded root belongs to it, whichever folder was named
    assert next(label_documents([_doc(tmp_path / "x", "docs/n.md")], roots)).doc_id == "docs-2/n.md"


def _strip_roots(index: Path) -> None:
    """Make ``index`` look written before roots were recorded."""
    path = layout.current_generation(index) / "manifest.json"
    data = json.loads(path.read_text())
    data.pop("roots")
    path.write_text(json.dumps(data, indent=1))


def test_an_index_from_one_folder_before_roots_is_migrated(tmp_path, minilm, small_config):
    index = tmp_path / "index"
    a = tmp_path / "a"
    _note(a / "n.md", "alder")
    ingest(iter_documents([a]), index, small_config, embedder=minilm, progress=False)
    _strip_roots(index)
    _note(tmp_path / "b" / "n.md", "birch")
    report = ingest(iter_documents([tmp_path / "b"]), index, small_config, embedder=minilm,
                    progress=False, sources=[tmp_path / "b"])  # fmt: skip
    assert (report.documents_added, report.documents_updated, report.documents_kept) == (1, 0, 1)
    manifest = layout.read_manifest(layout.current_generation(index))
    assert list(manifest.documents) == ["n.md", "b/n.md"]
    assert manifest.roots == {"": str(a.resolve()), "b": str((tmp_path / "b").resolve())}


def test_an_index_of_several_folders_before_roots_must_be_rebuilt(tmp_path, minilm, small_config):
    index = tmp_path / "index"
    _note(tmp_path / "a" / "n.md", "alder")
    _note(tmp_path / "b" / "m.md", "birch")
    for folder in ("a", "b"):
        ingest(iter_documents([tmp_path / folder]), index, small_config, embedder=minilm,
               progress=False, sources=[tmp_path / folder])  # fmt: skip
    manifest = layout.read_manifest(layout.current_generation(index))
    path = layout.current_generation(index) / "manifest.json"
    data = json.loads(path.read_text())
    data.pop("roots")
    for entry in data["documents"]:  # what the ids were before labels: paths in their folder
        entry["doc_id"] = entry["doc_id"].removeprefix("b/")
    path.write_text(json.dumps(data, indent=1))
    assert len(manifest.documents) == 2
    with pytest.raises(
        IndexVersionError, match=r"rebuild it: `thresher index .*--index NEW_FOLDER"
    ):
        ingest(iter_documents([tmp_path / "a"]), index, small_config, embedder=minilm,
               progress=False, sources=[tmp_path / "a"])  # fmt: skip


def test_a_moved_folder_keeps_its_label_an_unrelated_one_does_not(tmp_path, minilm, small_config):
    index = tmp_path / "index"

    def run(folder: Path):
        return ingest(iter_documents([folder]), index, small_config, embedder=minilm,
                      progress=False, sources=[folder])  # fmt: skip

    _note(tmp_path / "a" / "n.md", "alder")
    _note(tmp_path / "b" / "README.md", "birch")
    _note(tmp_path / "b" / "sub" / "m.md", "beech")
    run(tmp_path / "a")
    run(tmp_path / "b")
    offline = (tmp_path / "b").rename(tmp_path / "unmounted")  # b is gone for now
    _note(tmp_path / "c" / "README.md", "cedar")  # not b's documents: a label of its own
    assert run(tmp_path / "c").documents_updated == 0
    moved = offline.rename(tmp_path / "b-moved")
    again = run(moved)  # b's documents, moved: b's label and ids, nothing re-embedded
    assert (again.documents_added, again.documents_unchanged, again.chunks_added) == (0, 2, 0)
    manifest = layout.read_manifest(layout.current_generation(index))
    assert list(manifest.documents) == ["n.md", "b/README.md", "b/sub/m.md", "c/README.md"]
    assert manifest.roots is not None and manifest.roots["b"] == str(moved.resolve())


_FOLDERS = ["/r/a", "/r/b", "/r/a/b", "/s/a", "/s/a/x", "/t"]  # nested, and two named "a"
_PARTS = ["a", "b", "x", "n.md"]


@settings(max_examples=300, deadline=None)
@given(
    batches=st.lists(
        st.lists(
            st.tuples(
                st.sampled_from(_FOLDERS),
                st.lists(st.sampled_from(_PARTS), min_size=1, max_size=3),
            ),
            min_size=1,
            max_size=6,
        ),
        min_size=1,
        max_size=4,
    )
)
@pytest.mark.slow
def test_different_files_never_share_an_id_and_a_file_keeps_one(batches):
    """Over any ingests (folders named in any order, nested ones too, paths that repeat
    labels' names), two different files get two ids, one file one id, or the run is refused."""
    roots: dict[str, str] = {}
    id_of: dict[str, str] = {}
    for batch in batches:  # one batch: one ingest
        docs = []
        for folder, parts in batch:
            rel = "/".join([*parts[:-1], parts[-1] if parts[-1].endswith(".md") else "n.md"])
            docs.append(Document(rel, rel, "t", rel, origin=f"{folder}/{rel}", root=folder))
        before = dict(roots)
        known = {d: DocEntry("h", [], "", {}, path) for path, d in id_of.items()}
        try:
            labelled = list(label_documents(docs, roots, known))
        except InputError:  # a path of the first root that starts with a label: refused
            roots.clear()
            roots.update(before)
            continue
        for doc in labelled:
            path = doc.origin
            assert id_of.setdefault(path, doc.doc_id) == doc.doc_id  # one file, one id
        assert len(set(id_of.values())) == len(id_of)  # two files, two ids
