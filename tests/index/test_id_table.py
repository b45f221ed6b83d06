"""The memory-mapped id table and what loads through it (BM25), and the manifest summary."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from thresher.index.bm25 import Bm25Index
from thresher.index.embedded import layout
from thresher.index.id_table import load_ids, names_at, positions_of, save_ids
from thresher.index.manifest import DocEntry


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=12), unique=True, max_size=40))
def test_ids_round_trip_by_position_and_by_id(tmp_path_factory, ids) -> None:
    folder = tmp_path_factory.mktemp("ids")
    save_ids(folder, ids)
    table = load_ids(folder)
    assert table is not None and list(table) == ids and len(table) == len(ids)
    positions = table.positions()
    assert all(positions[c] == i for i, c in enumerate(ids))
    assert "never-an-id\x00" not in positions and positions.get("never-an-id\x00") is None
    # in bulk, before and after the table remembers them, unknown ids as None
    order = list(range(len(ids)))[::-1]
    assert names_at(table, order) == [ids[i] for i in order] == names_at(table, order)
    asked = [*ids[::-1], "never-an-id\x00"]
    expected = [len(ids) - 1 - i for i in range(len(ids))] + [None]
    assert positions_of(positions, asked) == expected == positions_of(positions, asked)
    assert positions_of(dict(zip(ids, range(len(ids)), strict=True)), asked) == expected
    assert json.loads((folder / "ids.json").read_text(encoding="utf-8")) == ids


def test_bm25_loads_mapped_and_scores_as_built(tmp_path) -> None:
    ids = ["b#0", "a#0", "c#0"]
    built = Bm25Index.build(ids, ["rivers and towns", "a river town", "sourdough bread"])
    built.save(tmp_path)
    loaded = Bm25Index.load(tmp_path)
    assert loaded.id_list[1] == "a#0" and loaded.positions["c#0"] == 2 and "a#0" in loaded
    assert loaded.search("river town", 3) == built.search("river town", 3)
    assert loaded.scores_for("bread", ["c#0"]) == built.scores_for("bread", ["c#0"])


def test_an_index_without_the_table_still_loads(tmp_path) -> None:
    Bm25Index.build(["x#0", "y#0"], ["one river", "two towns"]).save(tmp_path)
    for name in ("ids.utf8", "ids.offsets.npy", "ids.sorted.npy"):
        (tmp_path / name).unlink()
    assert Bm25Index.load(tmp_path).search("river", 1)[0][0] == "x#0"


def test_the_summary_reads_only_the_head_of_the_manifest(tmp_path) -> None:
    entries = {f"d{i}": DocEntry(f"h{i}", [f"d{i}#0", f"d{i}#1"], "t") for i in range(5)}
    manifest = layout.Manifest(2, "0.1", "minilm-int8", 384, {"max_tokens": 512}, entries,
                               {"bidi": 2}, "c", "u")  # fmt: skip
    layout.write_manifest(tmp_path, manifest)
    summary = layout.read_summary(tmp_path)
    assert (summary.documents, summary.chunks, summary.embedder) == (5, 10, "minilm-int8")
    assert (summary.sanitized, summary.chunking, summary.updated_at) == (
        {"bidi": 2},
        {"max_tokens": 512},
        "u",
    )
    # a manifest written some other way is read whole
    (tmp_path / "manifest.json").write_text(json.dumps(manifest.to_dict()), encoding="utf-8")
    assert layout.read_summary(tmp_path).chunks == 10


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.text(alphabet="ab#1é", min_size=1, max_size=6), unique=True, max_size=40),
    st.text(alphabet="ab#1é", max_size=3),
)
def test_ids_by_prefix_are_the_ids_that_start_with_it(tmp_path_factory, ids, prefix) -> None:
    folder = tmp_path_factory.mktemp("ids")
    save_ids(folder, ids)
    table = load_ids(folder)
    assert table is not None
    found = table.starting_with(prefix)
    assert sorted(found) == [i for i, c in enumerate(ids) if c.startswith(prefix)]
