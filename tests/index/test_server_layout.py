"""Server locations and the index header kept in a collection's metadata (no server needed)."""

from __future__ import annotations

import pytest

from thresher.errors import IndexVersionError, InputError
from thresher.index.manifest import SERVER_FORMAT, DocEntry
from thresher.index.server.layout import (
    ServerHeader,
    entry_metadata,
    parse_location,
    unavailable,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("http://127.0.0.1:8000/chunks", ("127.0.0.1", 8000, "chunks", False)),
        ("http://localhost:9001", ("localhost", 9001, "chunks", False)),
        ("http://example.org/corpus/", ("example.org", 8000, "corpus", False)),
        ("https://db.example.org:443/wiki", ("db.example.org", 443, "wiki", True)),
    ],
)
def test_locations_parse(text, expected) -> None:
    where = parse_location(text)
    assert (where.host, where.port, where.collection, where.ssl) == expected
    assert parse_location(where.url) == where


@pytest.mark.parametrize(
    "text", ["ftp://host/x", "http://", "http://h:99999/abc", "http://h:1/ab", "http://h:1/a/b"]
)
def test_bad_locations_are_input_errors(text) -> None:
    with pytest.raises(InputError):
        parse_location(text)


def test_unavailable_says_how_to_start_a_server() -> None:
    message = str(unavailable(parse_location("http://127.0.0.1:8123/x12"), "refused\nmore"))
    assert message.startswith("no Chroma server answers at http://127.0.0.1:8123/x12 (refused)")
    assert "`chroma run --host 127.0.0.1 --port 8123 --path DIR`" in message
    assert "\n" not in message


def test_header_round_trips_through_flat_metadata() -> None:
    header = ServerHeader(1, "minilm-int8", 384, {"max_tokens": 24}, version="v1", chunks=3)
    meta = header.to_metadata()
    assert all(k.startswith("thresher:") for k in meta)
    assert all(isinstance(v, str | int) for v in meta.values())
    assert ServerHeader.from_metadata({**meta, "hnsw:space": "cosine"}, "here") == header
    assert ServerHeader.from_metadata({"hnsw:space": "cosine"}, "here") is None
    assert ServerHeader.from_metadata(None, "here") is None
    newer = {**meta, "thresher:format_version": SERVER_FORMAT + 1}
    with pytest.raises(IndexVersionError, match="upgrade thresher"):
        ServerHeader.from_metadata(newer, "http://h:1/abc")


def test_manifest_records_are_flat() -> None:
    entry = DocEntry("abc", ["d#0", "d#1"], "2026-01-01T00:00:00Z", {"bidi": 1})
    meta = entry_metadata(entry, 7)
    assert meta["order"] == 7 and meta["chunk_ids"] == '["d#0", "d#1"]'
    assert all(isinstance(v, str | int) for v in meta.values())
