"""The LangChain and LlamaIndex retrievers, with the real packages, in-process and over HTTP.

In-process they must return the documents ``thresher.search`` returns on the
same index and policy, in rank order, with the justification in the metadata;
over HTTP (``url=``) the same, through a real ``thresher serve`` process.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import thresher
from serve.helpers import QUESTION, running_server
from thresher.errors import ConfigError


@pytest.fixture(scope="module")
def expected(serve_index: Path):
    return thresher.search(QUESTION, index=serve_index)


@pytest.fixture(scope="module")
def server(serve_index: Path, tmp_path_factory: pytest.TempPathFactory):
    with running_server(serve_index, tmp_path_factory.mktemp("adapters")) as s:
        yield s


def test_langchain_retriever_in_process(serve_index, expected):
    pytest.importorskip("langchain_core")
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    from thresher.serve.adapters.langchain import ThresherRetriever

    retriever = ThresherRetriever(index=str(serve_index))
    assert isinstance(retriever, BaseRetriever)
    docs = retriever.invoke(QUESTION)
    assert all(isinstance(d, Document) for d in docs)
    assert [d.metadata["doc_id"] for d in docs] == expected.doc_ids
    assert [d.metadata["rank"] for d in docs] == [d.rank for d in expected.documents]
    assert docs[0].metadata["justification"] == expected.documents[0].justification
    assert docs[0].page_content == expected.documents[0].text
    assert docs[0].metadata["exit_reason"] == "answered"


def test_langchain_retriever_over_http(server, expected):
    pytest.importorskip("langchain_core")
    from thresher.serve.adapters.langchain import ThresherRetriever

    docs = ThresherRetriever(url=server.url).invoke(QUESTION)
    assert [d.metadata["doc_id"] for d in docs] == expected.doc_ids
    assert len(docs[0].metadata["trace_id"]) == 32


def test_llamaindex_retriever_in_process_and_over_http(serve_index, server, expected):
    pytest.importorskip("llama_index.core")
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore

    from thresher.serve.adapters.llamaindex import ThresherLlamaRetriever

    retriever = ThresherLlamaRetriever(index=str(serve_index))
    assert isinstance(retriever, BaseRetriever)
    nodes = retriever.retrieve(QUESTION)
    assert all(isinstance(n, NodeWithScore) for n in nodes)
    assert [n.node.node_id for n in nodes] == expected.doc_ids
    assert nodes[0].node.metadata["justification"] == expected.documents[0].justification
    assert nodes[0].node.get_content() == expected.documents[0].text
    remote = ThresherLlamaRetriever(url=server.url).retrieve(QUESTION)
    assert [n.node.node_id for n in remote] == expected.doc_ids


def test_retrievers_honour_k_in_process(serve_index, expected):
    pytest.importorskip("langchain_core")
    pytest.importorskip("llama_index.core")
    from thresher.serve.adapters.langchain import ThresherRetriever
    from thresher.serve.adapters.llamaindex import ThresherLlamaRetriever

    assert len(expected.documents) > 2
    retriever = ThresherRetriever(index=str(serve_index), k=2)
    assert [d.metadata["doc_id"] for d in retriever.invoke(QUESTION)] == expected.doc_ids[:2]
    assert len(retriever.invoke(QUESTION, k=1)) == 1  # one call's own k
    assert len(ThresherRetriever(index=str(serve_index)).invoke(QUESTION, k=2)) == 2
    assert len(ThresherLlamaRetriever(index=str(serve_index), k=2).retrieve(QUESTION)) == 2


def test_retrievers_honour_k_over_http(server):
    pytest.importorskip("langchain_core")
    from thresher.serve.adapters.langchain import ThresherRetriever

    assert len(ThresherRetriever(url=server.url, k=2).invoke(QUESTION)) == 2


def test_a_retriever_needs_exactly_one_of_index_and_url():
    from thresher.serve.adapters.searcher import Searcher

    with pytest.raises(ConfigError, match="either index="):
        Searcher()
    with pytest.raises(ConfigError, match="either index="):
        Searcher(index="idx", url="http://127.0.0.1:1")
