"""The policy contract: declared capabilities, one episode whoever runs it, evidence in view.

* what a policy declares (retrieval mode, reranker) is applied by ``run_episode``,
  so the API, the evaluation protocol and a direct call run the same episode;
* an episodic policy gets ``start(question)`` once per episode, and its session
  proposes and reranks for that episode; reranks run on the episode's thread in
  call order;
* no harness-side hook is found by attribute lookup;
* a policy is named by a registered name, an installed entry point, or
  ``module:Factory``;
* a final answer may cite only evidence in view: pruned chunks must be recalled first.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import thresher
from thresher.harness.actions import Proposal, answer, call
from thresher.harness.episode import run_episode
from thresher.harness.policy import (
    ChoosesRetrievalMode,
    EpisodicPolicy,
    Policy,
    RerankRequest,
    SearchReranker,
)
from thresher.harness.result import ExitReason
from thresher.harness.trace import EpisodeStart, Refusal, ToolResult
from thresher.policies import build_policy, get_policy, policy_names
from thresher.policies.baselines import Bm25SingleShotPolicy, DenseSingleShotPolicy
from thresher.policies.scripted import ScriptedPolicy
from thresher.tasks.task import Task

SRC = Path(thresher.__file__).resolve().parent
Q = "In which province is the town where the Halvard Glassworks was founded?"


def _searches(result) -> list[ToolResult]:
    return [e for e in result.trace if isinstance(e, ToolResult) and e.tool == "search_corpus"]


def _start(result) -> EpisodeStart:
    return next(e for e in result.trace if isinstance(e, EpisodeStart))


def _fingerprint(result) -> tuple:
    """What must agree between callers: mode, hits with their per-retriever ranks, answer."""
    hits = [
        (lin["chunk_id"], lin["bm25_rank"], lin["dense_rank"])
        for e in _searches(result)
        for lin in e.lineage
    ]
    return _start(result).config["retrieval"]["mode"], tuple(hits), tuple(result.doc_ids)


@pytest.mark.parametrize(("name", "mode"), [("bm25", "bm25"), ("dense", "dense")])
def test_every_caller_runs_the_same_episode_for_a_policy(store, config, name, mode) -> None:
    """thresher.search, run_episode and the eval protocol: same mode, same hits, same answer."""
    from thresher.eval.records import RunConfig
    from thresher.eval.task_job import run_episode_of

    direct = run_episode(Q, store, get_policy(name), config)
    via_api = thresher.search(Q, index=store, policy=name, config=config)
    task = Task("t1", Q, "Tessaly", ("marrowick",))
    via_eval = run_episode_of(task, store, RunConfig(name, name, config, {}, name), None)
    prints = {_fingerprint(r) for r in (direct, via_api, via_eval)}
    assert len(prints) == 1
    ((got_mode, hits, _),) = prints
    assert got_mode == mode
    assert hits, "the search returned nothing"
    # a single retriever's list: only its own rank is set
    for _, bm25_rank, dense_rank in hits:
        assert (bm25_rank is not None) == (mode == "bm25")
        assert (dense_rank is not None) == (mode == "dense")


def test_the_hybrid_default_sets_both_ranks(store, config) -> None:
    r = run_episode(Q, store, get_policy("single-shot"), config)
    assert _start(r).config["retrieval"]["mode"] == "hybrid"
    lineage = [lin for e in _searches(r) for lin in e.lineage]
    assert any(lin["bm25_rank"] and lin["dense_rank"] for lin in lineage)
    assert all(lin["bm25_score"] is not None or lin["dense_score"] is not None for lin in lineage)


def test_baselines_declare_their_mode_and_the_local_policy_a_reranker() -> None:
    assert isinstance(Bm25SingleShotPolicy(), ChoosesRetrievalMode)
    assert isinstance(DenseSingleShotPolicy(), ChoosesRetrievalMode)
    local = get_policy("local")
    assert isinstance(local, EpisodicPolicy) and not isinstance(local, Policy)
    session = local.start(Q)
    assert isinstance(session, Policy) and isinstance(session, SearchReranker)
    assert not isinstance(get_policy("single-shot"), SearchReranker | ChoosesRetrievalMode)


class _Recorder(ScriptedPolicy):
    """A scripted policy that declares a reranker and keeps the requests it got."""

    def __init__(self, actions) -> None:
        super().__init__(actions)
        self.requests: list[RerankRequest] = []

    def rerank(self, request: RerankRequest) -> list:
        self.requests.append(request)
        return list(reversed(request.hits))[:2]


def test_a_declared_reranker_gets_the_candidates_and_a_question_scorer(store, config) -> None:
    policy = _Recorder([Proposal(tool_calls=(call("search_corpus", query="Marrowick"),)), answer()])
    r = run_episode(Q, store, policy, config)
    (request,) = policy.requests
    assert request.query == "Marrowick" and request.question == Q
    assert request.hits and all(h.bm25_rank or h.dense_rank for h in request.hits)
    ids = [h.chunk.chunk_id for h in request.hits[:3]]
    scores = request.score_against_question(ids)
    assert len(scores) == 3 and all(len(s) == 2 for s in scores)
    shown = _searches(r)[0].shown
    assert shown[0] == request.hits[-1].chunk.chunk_id and len(shown) <= 2  # its order, its cut


class _Threads(_Recorder):
    """A reranker that notes the thread and order of its calls."""

    def __init__(self, actions) -> None:
        super().__init__(actions)
        self.threads: list[int] = []

    def rerank(self, request: RerankRequest) -> list:
        import threading

        self.threads.append(threading.get_ident())
        return super().rerank(request)


def test_reranks_run_on_the_episodes_thread_in_call_order(store, config) -> None:
    """A turn's searches are fetched concurrently, but the policy reranks them one at a
    time, on the thread running the episode, in the order it proposed them."""
    import threading

    queries = ["Marrowick", "Halvard Glassworks", "Tessaly province", "Orvel Kestrin"]
    turn = Proposal(tool_calls=tuple(call("search_corpus", query=q) for q in queries))
    policy = _Threads([turn, answer()])
    r = run_episode(Q, store, policy, config)
    assert [req.query for req in policy.requests] == queries
    assert set(policy.threads) == {threading.get_ident()}
    assert len(_searches(r)) == 4


class _Failing(_Recorder):
    def rerank(self, request: RerankRequest) -> list:
        if request.query == "Marrowick":
            raise ValueError("scorer broke")
        return super().rerank(request)


def test_a_rerank_that_raises_fails_its_call_only(store, config) -> None:
    queries = ["Marrowick", "Halvard Glassworks"]
    turn = Proposal(tool_calls=tuple(call("search_corpus", query=q) for q in queries))
    r = run_episode(Q, store, _Failing([turn, answer()]), config)
    failed, shown = _searches(r)
    assert failed.status == "error" and failed.code == "tool_failed"
    assert "scorer broke" in failed.header
    assert shown.status == "ok" and shown.shown
    assert r.exit_reason is ExitReason.ANSWERED


class _Sessions:
    """An episodic policy: a fresh scripted session per episode, each noted."""

    name = "sessions"

    def __init__(self) -> None:
        self.started: list[tuple[str, _Recorder]] = []

    def start(self, question: str) -> _Recorder:
        session = _Recorder(
            [Proposal(tool_calls=(call("search_corpus", query="Marrowick"),)), answer()]
        )
        self.started.append((question, session))
        return session


def test_an_episodic_policy_gets_a_session_per_episode(store, config) -> None:
    policy = _Sessions()
    assert isinstance(policy, EpisodicPolicy) and not isinstance(policy, Policy)
    first = run_episode(Q, store, policy, config)
    second = run_episode("Who founded the Halvard Glassworks?", store, policy, config)
    assert [q for q, _ in policy.started] == [Q, "Who founded the Halvard Glassworks?"]
    assert first.exit_reason is second.exit_reason is ExitReason.ANSWERED
    for _, session in policy.started:  # each session proposed and reranked its own episode
        assert len(session.observations) == 2 and len(session.requests) == 1
    start = next(e for e in first.trace if isinstance(e, EpisodeStart))
    assert start.policy == "scripted"  # what the session calls itself is recorded


class _NoStart(_Sessions):
    def start(self, question: str) -> _Recorder:
        raise RuntimeError("weights missing")


def test_a_session_that_cannot_start_ends_the_episode_with_policy_error(store, config) -> None:
    r = run_episode(Q, store, _NoStart(), config)
    assert r.exit_reason is ExitReason.POLICY_ERROR and "weights missing" in r.message


def test_no_policy_hook_is_found_by_attribute_lookup() -> None:
    """harness/, api.py and eval/ never getattr/hasattr a policy: hooks are declared protocols."""
    found = []
    for path in [*sorted((SRC / "harness").glob("*.py")), SRC / "api.py", SRC / "eval/protocol.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in {"getattr", "hasattr"}
                and node.args
                and "polic" in ast.unparse(node.args[0]).lower()
            ):
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    assert found == []


def test_a_policy_by_module_and_factory(store, config) -> None:
    spec = "thresher.policies.single_shot:single_shot"
    r = thresher.search(Q, index=store, policy=spec, config=config)
    assert r.exit_reason is ExitReason.ANSWERED
    with pytest.raises(thresher.errors.ConfigError, match="cannot load policy"):
        get_policy("thresher.policies.single_shot:NoSuchPolicy")
    # a policy class is not a factory: it is refused with how to make one
    with pytest.raises(thresher.errors.ConfigError, match="not a PolicyFactory.*Factory"):
        get_policy("thresher.policies.single_shot:SingleShotPolicy")


def test_a_policy_from_an_installed_entry_point(tmp_path, monkeypatch) -> None:
    """A package that declares ``[project.entry-points."thresher.policies"]`` is found by name."""
    dist = tmp_path / "thresher_plugin_demo-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: thresher-plugin-demo\nVersion: 0.1\n", encoding="utf-8"
    )
    (dist / "entry_points.txt").write_text(
        "[thresher.policies]\nplugin-single = thresher.policies.single_shot:single_shot\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "plugin-single" in policy_names()
    policy = build_policy("plugin-single", None, {"top_k": 3})
    assert policy.name == "single-shot" and policy.top_k == 3
    assert sys.path[0] == str(tmp_path)


def test_a_final_citing_pruned_evidence_is_refused_until_recalled(store, config) -> None:
    policy = ScriptedPolicy(
        [
            Proposal(tool_calls=(call("search_corpus", query="Halvard Glassworks founded"),)),
            Proposal(tool_calls=(call("prune_chunks", chunk_ids=["glassworks#0"]),)),
            answer(("glassworks#0", "Founded in Marrowick.")),
            Proposal(tool_calls=(call("recall_chunks", chunk_ids=["glassworks#0"]),)),
            answer(("glassworks#0", "Founded in Marrowick.")),
        ]
    )
    r = run_episode(Q, store, policy, config)
    refusals = [e for e in r.trace if isinstance(e, Refusal)]
    assert [e.code for e in refusals] == ["final_cites_pruned"]
    assert "recall_chunks" in refusals[0].message and "glassworks#0" in refusals[0].message
    assert r.exit_reason is ExitReason.ANSWERED and r.doc_ids == ["glassworks"]


def test_a_final_naming_a_document_whose_chunks_are_all_pruned_is_refused(store, config) -> None:
    policy = ScriptedPolicy(
        [
            Proposal(tool_calls=(call("search_corpus", query="Halvard Glassworks founded"),)),
            Proposal(tool_calls=(call("prune_chunks", chunk_ids=["glassworks#0"]),)),
            answer("glassworks"),
            answer(),
        ]
    )
    r = run_episode(Q, store, policy, config)
    assert [e.code for e in r.trace if isinstance(e, Refusal)] == ["final_cites_pruned"]
    assert r.exit_reason is ExitReason.ANSWERED and "glassworks" not in r.doc_ids
