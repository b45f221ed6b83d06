"""``k`` counts documents: a baseline asked for ``k`` answers with ``k`` documents
whenever the corpus has them, though one search's chunks belong to fewer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import thresher
from policies.k_corpus import QUESTION, build_k_index, k_config
from thresher.cli.main import main
from thresher.harness.episode import run_episode
from thresher.harness.result import ExitReason
from thresher.index.embedded.store import EmbeddedStore
from thresher.policies import build_policy

BASELINES = ["single-shot", "bm25", "dense", "hybrid-rerank", "no-prune"]


@pytest.fixture(scope="module")
def k_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_k_index(tmp_path_factory.mktemp("k-docs") / "index")


@pytest.fixture(scope="module")
def k_store(k_index: Path):
    store = EmbeddedStore(k_index, k_config())
    yield store
    store.close()


def _first_search_documents(result) -> set[str]:
    first = next(e for e in result.trace if e.type == "tool_result")
    return {chunk_id.partition("#")[0] for chunk_id in first.shown}


@pytest.mark.parametrize("name", BASELINES)
def test_a_baseline_built_with_k_answers_with_k_documents(k_store, name):
    # what every surface does: thresher.search, the CLI, HTTP and MCP set episode.k and
    # build the policy by name
    config = k_config().override({"episode.k": 5})
    r = run_episode(QUESTION, k_store, build_policy(name, config), config)
    assert r.exit_reason is ExitReason.ANSWERED
    assert len(r.documents) == 5 and len(set(r.doc_ids)) == 5
    # the corpus does what it is for: the question's first search shows fewer documents
    assert len(_first_search_documents(r)) < 5 and r.tool_calls["search_corpus"] >= 2


def test_a_baseline_keeps_the_first_searchs_order_before_the_repeats(k_store):
    config = k_config().override({"episode.k": 5})
    one = run_episode(
        QUESTION, k_store, build_policy("bm25", config.override({"episode.k": 2})), config
    )
    five = run_episode(QUESTION, k_store, build_policy("bm25", config), config)
    assert five.doc_ids[:2] == one.doc_ids


def test_a_baseline_stops_when_the_corpus_has_no_more_documents(k_store):
    config = k_config().override({"episode.max_final_documents": 40, "episode.k": 40})
    r = run_episode(QUESTION, k_store, build_policy("bm25", config), config)
    assert r.exit_reason is ExitReason.ANSWERED and 5 <= len(r.documents) < 40
    last = [e for e in r.trace if e.type == "tool_result"][-1]
    assert last.shown == []


def test_cli_search_bm25_k5_returns_five_documents(k_index, capsys):
    capsys.readouterr()
    argv = ["search", QUESTION, "--index", str(k_index), "--policy", "bm25", "--k", "5", "--json"]
    assert main(argv) == 0
    assert len(json.loads(capsys.readouterr().out)["documents"]) == 5


def test_api_search_with_k_on_a_baseline(k_index):
    r = thresher.search(QUESTION, index=k_index, policy="hybrid-rerank", k=5, reuse=False)
    assert len(r.documents) == 5
