"""Document filters (a Chroma-style ``where`` on metadata, a glob on ids) on both backends:
every retriever, grep, reads and the document listing see only what the filter admits."""

from __future__ import annotations

from fnmatch import fnmatchcase

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thresher.errors import InputError, UnknownIdError
from thresher.index.filters import DocFilter

from .test_store_contract import chroma_server, server_store  # noqa: F401 (fixtures)

BACKENDS = ["embedded", pytest.param("server", marks=pytest.mark.server)]


@pytest.fixture(params=BACKENDS)
def any_store(request):
    return request.getfixturevalue("store" if request.param == "embedded" else "server_store")


def _docs(hits):
    return {h.chunk.doc_id for h in hits}


def _complement(store, documents, admitted):
    """The chunk ids of every document outside ``admitted`` (what the filter must exclude)."""
    return {c.chunk_id for d in documents if d.doc_id not in admitted
            for c in store.read_document(d.doc_id)}  # fmt: skip


@pytest.mark.parametrize(
    ("where", "path", "admitted"),
    [
        ({"topic": "astro"}, None, lambda d: d.metadata["topic"] == "astro"),
        ({"n": {"$lt": 6}}, None, lambda d: d.metadata["n"] < 6),
        ({"$or": [{"topic": "bake"}, {"doc_id": "geo-2"}]}, None,
         lambda d: d.metadata["topic"] == "bake" or d.doc_id == "geo-2"),
        (None, "chess-*", lambda d: d.doc_id.startswith("chess-")),
        ({"even": True}, "*-1", lambda d: d.metadata["even"] and d.doc_id.endswith("-1")),
    ],
)  # fmt: skip
def test_every_retriever_sees_only_what_the_filter_admits(
    any_store, documents, where, path, admitted
):
    """A filtered search is the unfiltered search with every other document excluded
    before the cut: same hits, same ranks, same scores."""
    keep = {d.doc_id for d in documents if admitted(d)}
    assert keep and len(keep) < len(documents)
    f = DocFilter.parse(where, path)
    others = _complement(any_store, documents, keep)
    for search in (any_store.hybrid_search, any_store.bm25_search, any_store.dense_search):
        filtered = search("station orbit bread chess opening", k=8, where=f)
        assert _docs(filtered) <= keep, search.__name__
        assert filtered or search != any_store.hybrid_search
        expected = search("station orbit bread chess opening", k=8, exclude=others)
        assert [(h.chunk.chunk_id, h.score) for h in filtered] == [
            (h.chunk.chunk_id, h.score) for h in expected
        ], search.__name__
    found = any_store.grep("[a-z]", limit=100, where=f)
    assert _docs(found.hits) == keep and found.total == len(
        [c for d in documents if d.doc_id in keep for c in any_store.read_document(d.doc_id)]
    )
    listed = any_store.list_documents(f)
    assert [d.doc_id for d in listed] == [d.doc_id for d in documents if d.doc_id in keep]


def test_a_read_outside_the_filter_is_refused(any_store):
    f = DocFilter.parse({"topic": "astro"}, None)
    assert any_store.read_document("astro-2", where=f)
    with pytest.raises(UnknownIdError, match="outside the filter"):
        any_store.read_document("bake-1", where=f)


def test_the_listing_carries_titles_sources_chunks_and_metadata(any_store, documents):
    listed = {d.doc_id: d for d in any_store.list_documents()}
    assert list(listed) == [d.doc_id for d in documents]
    first = listed["astro-1"]
    assert first.title == "Kepler Station" and first.source == "test:astro-1"
    assert first.metadata["topic"] == "astro" and first.metadata["tags"] == ["astro", "test"]
    assert list(first.chunk_ids) == [c.chunk_id for c in any_store.read_document("astro-1")]


@pytest.mark.parametrize(
    ("where", "words"),
    [
        ("not json", "JSON object"),
        ('["topic"]', "JSON object"),
        ({"topic": {"$like": "a"}}, "one operator"),
        ({"$not": [{"topic": "a"}]}, "unknown operator"),
        ({"$and": {"topic": "a"}}, "list of conditions"),
    ],
)
def test_a_bad_where_says_what_to_write(where, words):
    with pytest.raises(InputError, match=words):
        DocFilter.parse(where, None)


def test_no_where_and_no_path_is_no_filter():
    assert DocFilter.parse(None, None) is None and DocFilter.parse("  ", "") is None
    assert DocFilter.parse({"a": 1}, None).chroma_where() == {"meta:a": 1}
    assert DocFilter.parse({"a": 1, "title": "T"}, None).chroma_where() == {
        "$and": [{"meta:a": 1}, {"title": "T"}]
    }


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_narrow_filter_on_hnsw_names_the_admitted_chunks(kind, request, small_config, minilm):
    """Above ``exact_dense_max_chunks`` dense search is chromadb's HNSW: a filter that
    excludes most chunks asks for the admitted ones by id, with the exact scan's answer."""
    import dataclasses

    from thresher.config import Config

    base = request.getfixturevalue("store" if kind == "embedded" else "server_store")
    retrieval = dataclasses.replace(small_config.retrieval, exact_dense_max_chunks=0)
    hnsw_config = dataclasses.replace(small_config, retrieval=retrieval)
    assert isinstance(hnsw_config, Config)
    f = DocFilter.parse({"topic": {"$in": ["astro", "geo"]}}, None)
    exact = base.dense_search("moon station orbit", k=5, where=f)
    saved = base.config
    base.config = hnsw_config
    try:
        hnsw = base.dense_search("moon station orbit", k=5, where=f)
    finally:
        base.config = saved
    assert [h.chunk.chunk_id for h in hnsw] == [h.chunk.chunk_id for h in exact]
    assert [round(h.score, 4) for h in hnsw] == [round(h.score, 4) for h in exact]
    assert _docs(hnsw) <= {"astro-1", "astro-2", "astro-3", "geo-1", "geo-2", "geo-3"}


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    low=st.integers(0, 40),
    op=st.sampled_from(["$gte", "$lt", "$ne", "$eq"]),
    glob=st.sampled_from([None, "*-1", "a*", "*o*", "[bc]*"]),
    query=st.sampled_from(["station orbit", "bread starter", "opening gambit", "river city"]),
)
def test_a_filtered_search_is_the_search_with_the_rest_excluded(
    store, documents, low, op, glob, query
):
    """Property, on the embedded store: for any filter, each retriever's filtered hits are
    its hits with every chunk of a document the filter refuses excluded before the cut."""
    import operator

    compare = {"$gte": operator.ge, "$lt": operator.lt, "$ne": operator.ne, "$eq": operator.eq}
    f = DocFilter.parse({"n": {op: low}}, glob)
    keep = {
        d.doc_id
        for d in documents
        if compare[op](d.metadata["n"], low) and (glob is None or fnmatchcase(d.doc_id, glob))
    }
    others = _complement(store, documents, keep)
    for search in (store.hybrid_search, store.bm25_search, store.dense_search):
        filtered = search(query, k=6, where=f)
        expected = search(query, k=6, exclude=others)
        assert [(h.chunk.chunk_id, h.score) for h in filtered] == [
            (h.chunk.chunk_id, h.score) for h in expected
        ]
    assert _docs(store.grep("[a-z]", limit=200, where=f).hits) == keep


def test_id_lists_admit_and_hide_documents_by_id(any_store, documents):
    """``allow`` admits only its ids, ``hide`` never admits its own: the same exclusion
    before the cut as a ``where``, with the same hits, ranks and scores."""
    ids = [d.doc_id for d in documents]
    allowed, hidden = set(ids[:5]) | {"no-such-doc"}, set(ids[:3])
    for f, keep in [
        (DocFilter.only(allowed), set(ids[:5])),
        (DocFilter.without(hidden), set(ids) - hidden),
        (DocFilter(allow=frozenset(allowed), hide=frozenset(hidden)), set(ids[3:5])),
    ]:
        others = _complement(any_store, documents, keep)
        for search in (any_store.hybrid_search, any_store.bm25_search, any_store.dense_search):
            got = search("station orbit bread chess opening", k=8, where=f)
            expected = search("station orbit bread chess opening", k=8, exclude=others)
            assert _docs(got) <= keep
            assert [(h.chunk.chunk_id, h.score) for h in got] == [
                (h.chunk.chunk_id, h.score) for h in expected
            ]
        assert [d.doc_id for d in any_store.list_documents(f)] == [i for i in ids if i in keep]


def test_narrowing_admits_what_both_filters_admit():
    a = DocFilter(where={"topic": "astro"}, allow=frozenset({"x", "y"}), hide=frozenset({"z"}))
    b = DocFilter(where={"n": 1}, path="x*", allow=frozenset({"y", "x", "w"}))
    both = a.narrowed(b)
    assert both.where == {"$and": [{"topic": "astro"}, {"n": 1}]} and both.path == "x*"
    assert both.allow == {"x", "y"} and both.hide == {"z"}
    assert a.narrowed(None) is a and DocFilter.only(["q"]).narrowed(a).allow == frozenset()
    with pytest.raises(InputError, match="two path globs"):
        DocFilter(path="a*").narrowed(DocFilter(path="b*"))
    assert DocFilter.parse({"a": 1}, "p*").key == '{"path": "p*", "where": {"a": 1}}'


def test_a_filtered_store_is_the_store_with_unknown_documents_outside(store, documents):
    """The view passes its filter to every call, narrowed by the call's own; what its id
    lists leave out reads as an id the index lacks, and its stats count what it shows."""
    from thresher.index.filtered import FilteredStore

    ids = [d.doc_id for d in documents]
    view = FilteredStore(store, DocFilter.without(ids[:3]))
    query = "station orbit bread chess opening"
    assert view.hybrid_search(query, k=8) == store.hybrid_search(
        query, k=8, where=DocFilter.without(ids[:3])
    )
    astro = DocFilter.parse({"topic": "astro"}, None)
    assert _docs(view.dense_search(query, k=50, where=astro)) == {
        d.doc_id for d in documents if d.metadata["topic"] == "astro"
    } - set(ids[:3])
    with pytest.raises(UnknownIdError, match=f"^unknown document id: {ids[0]}$"):
        view.read_document(ids[0])
    first = store.read_document(ids[0])[0].chunk_id
    for call in (lambda: view.get([first]), lambda: view.similarity(query, [first])):
        with pytest.raises(UnknownIdError, match="unknown chunk ids"):
            call()
    assert view.read_document(ids[3]) == store.read_document(ids[3])
    assert view.stats().documents == len(ids) - 3
    view.close()
    assert store.stats().documents == len(ids)  # the wrapped store stays open


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    picks=st.lists(st.integers(0, 35), min_size=0, max_size=8),
    hide=st.lists(st.integers(0, 35), max_size=2),
    extra=st.lists(st.integers(0, 35), max_size=2),
    query=st.sampled_from(
        ["station orbit", "bread starter", "opening gambit", "river city", "moon bread chess"]
    ),
    k=st.sampled_from([1, 3, 8, 50]),
)
def test_a_narrow_allow_list_ranks_only_its_chunks_as_the_exclusion_would(
    store, documents, picks, hide, extra, query, k
):
    """Property, on a real index: a narrow ``allow`` list scores only its own chunks
    (the fast path), and every retriever gives the hits, order and scores of the search
    excluding every other chunk (with a caller's ``exclude`` on top); grep, the listing
    and reads see the same documents."""
    ids = [d.doc_id for d in documents]
    allowed = {ids[i] for i in picks} | {"no-such-doc"}
    f = DocFilter(allow=frozenset(allowed), hide=frozenset(ids[i] for i in hide))
    keep = {i for i in ids if f.admits_doc(i)}
    view = store._view()
    held = store._left_out(view, f)
    assert held.admitted is not None  # the fast path
    assert held.blocked is None
    skipped = {store.read_document(ids[i])[0].chunk_id for i in extra}
    others = _complement(store, documents, keep)
    for search in (store.hybrid_search, store.bm25_search, store.dense_search):
        got = search(query, k=k, exclude=skipped, where=f)
        expected = search(query, k=k, exclude=others | skipped)
        assert [(h.chunk.chunk_id, h.score, h.bm25_rank, h.dense_rank) for h in got] == [
            (h.chunk.chunk_id, h.score, h.bm25_rank, h.dense_rank) for h in expected
        ], search.__name__
    assert _docs(store.grep("[a-z]", limit=500, where=f).hits) == keep
    assert [d.doc_id for d in store.list_documents(f)] == [i for i in ids if i in keep]
    assert len(held) == len(view.bm25) - sum(len(store.read_document(i)) for i in keep)
    for doc_id in ids[:4]:
        if doc_id in keep:
            assert store.read_document(doc_id, where=f)
        else:
            with pytest.raises(UnknownIdError):
                store.read_document(doc_id, where=f)


def test_a_search_with_every_admitted_chunk_excluded_embeds_no_query(store, documents):
    """Once every chunk a filter admits is excluded (an episode that has seen them all),
    a search returns nothing without embedding its query."""
    f = DocFilter.only([documents[0].doc_id, documents[1].doc_id])
    seen = [c.chunk_id for d in documents[:2] for c in store.read_document(d.doc_id)]
    store.clear_query_caches()
    asked: list[str] = []
    embed = store._queries.embed_query
    store._queries.embed_query = lambda q: asked.append(q) or embed(q)
    try:
        for search in (store.hybrid_search, store.dense_search, store.bm25_search):
            assert search("station orbit bread", k=5, exclude=seen, where=f) == []
        assert not asked
        assert store.dense_search("station orbit bread", k=5, exclude=seen[1:], where=f)
        assert asked == ["station orbit bread"]
    finally:
        del store._queries.embed_query
