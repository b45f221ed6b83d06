"""LocalPolicy episodes on real indexes: the harness tests' corpus and a generated world."""

from __future__ import annotations

import json

from thresher.config import Config
from thresher.corpus.document import Chunk
from thresher.harness.episode import run_episode
from thresher.harness.policy import (
    BasePolicy,
    reranker_of,
    runs_in_process,
    session_for,
    starts_sessions,
)
from thresher.harness.result import ExitReason
from thresher.index.embedded.store import EmbeddedStore
from thresher.index.store import Hit
from thresher.policies import get_policy
from thresher.policies.local import LocalOptions, LocalPolicy
from thresher.policies.local.policy import RETRIEVER_HEAD, rerank_pool

QUESTION = "In which province is the town where the Halvard Glassworks was founded?"


def test_registered_default_and_protocol(config):
    policy = get_policy("local", config=config)
    assert isinstance(policy, LocalPolicy) and starts_sessions(policy)
    session = session_for(policy, QUESTION)  # each episode's own state, never the policy's
    assert isinstance(session, BasePolicy) and reranker_of(session) is session
    assert runs_in_process(session) and not starts_sessions(session)
    assert session.name == policy.name == "local"
    import inspect

    from thresher.api import search

    assert inspect.signature(search).parameters["policy"].default == "local"


def test_two_hop_episode_answers_with_both_documents(store, config):
    policy = LocalPolicy(LocalOptions(stop_at=1.01), config=config)
    r = run_episode(QUESTION, store, policy, config)
    assert r.exit_reason is ExitReason.ANSWERED, r.message
    docs = r.doc_ids
    assert "glassworks" in docs[:3] and "marrowick" in docs[:5]
    assert r.tool_calls.get("search_corpus", 0) >= 2  # the question, then bridges
    assert all(d.justification for d in r.documents)
    hops = [e for e in r.trace if e.type == "proposal" and e.proposal and e.proposal.get("hop")]
    assert hops, "follow-up turns carry their hop"


def test_final_documents_come_from_evidence_in_view_with_scores_in_fields(store, config):
    """A pruning episode cites only what it kept; justifications are evidence sentences."""
    from thresher.harness.state import replay

    pruning = LocalPolicy(LocalOptions(keep_docs=1, prune_below=0.99, stop_at=1.01), config=config)
    r = run_episode(QUESTION, store, pruning, config)
    assert r.exit_reason is ExitReason.ANSWERED and r.tool_calls.get("prune_chunks") == 1
    state = replay(list(r.trace))
    assert state.pruned, "the episode pruned something"
    for doc in r.documents:
        assert doc.chunk_ids and all(c in state.context for c in doc.chunk_ids), doc.doc_id
        assert doc.score is not None and 0.0 <= doc.score <= 1.0
        assert "utility" not in doc.justification and "found by" not in doc.justification
        text = " ".join(doc.text.split())
        assert any(s.strip(" .") in text for s in doc.justification.split(". ") if s.strip())
    assert not any(e.type == "refusal" for e in r.trace)
    scores = [d.score for d in r.documents]
    assert scores == sorted(scores, reverse=True), "a score never rises with rank"


def test_episode_is_deterministic(store, config):
    a = run_episode(QUESTION, store, LocalPolicy(config=config), config)
    b = run_episode(QUESTION, store, LocalPolicy(config=config), config)
    assert a.doc_ids == b.doc_ids and a.tool_calls == b.tool_calls


def test_prunes_then_no_prune_keeps_everything(store, config):
    pruning = LocalPolicy(LocalOptions(keep_docs=1, prune_below=0.99, stop_at=1.01), config=config)
    r = run_episode(QUESTION, store, pruning, config)
    assert r.exit_reason is ExitReason.ANSWERED
    assert r.tool_calls.get("prune_chunks", 0) == 1
    kept = LocalPolicy(LocalOptions(prune=False, stop_at=1.01), config=config)
    r2 = run_episode(QUESTION, store, kept, config)
    assert "prune_chunks" not in r2.tool_calls
    assert r.usage.used < r2.usage.used


def test_recorder_sees_pools_and_final(store, config):
    seen: list[str] = []
    policy = LocalPolicy(config=config, recorder=lambda kind, *rest: seen.append(kind))
    run_episode(QUESTION, store, policy, config)
    assert "pool" in seen and seen[-1] == "final"


def test_generated_world_episode(world_index):
    config = Config()
    root = world_index.parent / "corpus"
    chains = [json.loads(line) for line in (root / ".world" / "chains.jsonl").open()]
    with EmbeddedStore(world_index, config) as store:
        chain = chains[0]
        r = run_episode(chain["question"], store, LocalPolicy(config=config), config)
        assert r.exit_reason is ExitReason.ANSWERED, r.message
        assert r.documents and len(r.documents) <= config.episode.max_final_documents
        assert r.turns >= 2


def test_follow_ups_rank_only_their_best_fused_hits(store, config):
    """``rerank_depth`` cuts what a follow-up's scorer sees, never the question's search."""
    pools: dict[str, int] = {}

    def record(kind, question, cands, *rest):
        if kind == "pool":
            pools[cands[0].subquery] = len(cands)

    policy = LocalPolicy(LocalOptions(stop_at=1.01, rerank_depth=2), config=config, recorder=record)
    run_episode(QUESTION, store, policy, config)
    follow_ups = [n for q, n in pools.items() if q != QUESTION]
    # the fused best 2, and any hit in BM25's or dense's own best RETRIEVER_HEAD
    assert follow_ups and max(follow_ups) <= 2 + 2 * RETRIEVER_HEAD
    assert pools[QUESTION] > 2 + 2 * RETRIEVER_HEAD
    assert LocalPolicy(config=config).rerank_depth == 30  # the shipped default


def test_a_follow_ups_scorer_sees_each_retrievers_own_best_hits() -> None:
    """RRF buries a hit one retriever ranks 3rd and the other 137th: it is scored anyway."""
    chunk = Chunk("d#0", "d", 0, "d", "x", 0, 1, "d")
    hits = [Hit(chunk, 1.0, "hybrid", bm25_rank=10 + i, dense_rank=10 + i) for i in range(40)]
    hits[36] = Hit(chunk, 0.5, "hybrid", bm25_rank=3, dense_rank=137)
    hits[38] = Hit(chunk, 0.4, "hybrid", bm25_rank=None, dense_rank=2)
    pool = rerank_pool(hits, 30)
    assert pool == hits[:30] + [hits[36], hits[38]]
    assert rerank_pool(hits, 30, head=1) == hits[:30]
