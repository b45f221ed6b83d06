"""The policy contract: one base class, declared hooks, one episode whoever runs it.

* a policy subclasses ``BasePolicy``: a hook it does not override declares
  nothing (the harness runs the episode as for a policy without it), one it
  overrides is applied; every hook is documented with its default;
* a third-party policy written against the former protocols (no base class, only
  ``name``, ``system_prompt``, ``tool_schemas`` and ``propose``, or ``start``)
  runs the same episode as its ``BasePolicy`` twin;
* what a policy declares (retrieval mode, reranker) is applied by ``run_episode``,
  so the API, the evaluation protocol and a direct call run the same episode;
* a policy that declares ``start(question)`` gets it called once per episode, and
  its session proposes and reranks for that episode; reranks run on the episode's
  thread in call order;
* the harness reads a policy's hooks only in ``harness/policy.py``: no other
  harness module finds one by attribute lookup;
* a policy is named by a registered name, an installed entry point, or
  ``module:Factory``;
* a final answer may cite only evidence in view: pruned chunks must be recalled first.
"""

from __future__ import annotations

import ast
import re
import sys
import threading
from pathlib import Path

import pytest

import thresher
from thresher.config import Config
from thresher.harness.actions import Proposal, answer, call
from thresher.harness.episode import episode_config, fit_budget, run_episode
from thresher.harness.policy import (
    BasePolicy,
    BudgetCeiling,
    Policy,
    RerankRequest,
    budget_ceiling_of,
    cancel_work,
    fitted_fusion_of,
    hand_reader_memo,
    prompt_cost_of,
    reranker_of,
    retrieval_mode_of,
    runs_in_process,
    session_for,
    starts_sessions,
)
from thresher.harness.result import ExitReason
from thresher.harness.trace import EpisodeStart, Refusal, ToolResult
from thresher.policies import build_policy, get_policy, policy_names
from thresher.policies.baselines import Bm25SingleShotPolicy, DenseSingleShotPolicy
from thresher.policies.scripted import ScriptedPolicy
from thresher.tasks.task import Task
from thresher.tokens import CHATML_TOOLS_COST

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
    assert retrieval_mode_of(Bm25SingleShotPolicy()) == "bm25"
    assert retrieval_mode_of(DenseSingleShotPolicy()) == "dense"
    local = get_policy("local")
    assert starts_sessions(local) and reranker_of(local) is None
    session = local.start(Q)
    assert isinstance(session, Policy) and reranker_of(session) is session
    single = get_policy("single-shot")
    assert reranker_of(single) is None and retrieval_mode_of(single) is None


_TURNS = (
    Proposal(tool_calls=(call("search_corpus", query="Halvard Glassworks founded"),)),
    answer("glassworks"),
)


class _Minimal:
    """A third-party policy written against the former ``Policy`` protocol: the four
    members only, no base class."""

    name = "minimal"
    system_prompt = "Find the documents that answer the question."

    def __init__(self) -> None:
        self.turns = iter(_TURNS)
        self.threads: list[int] = []

    def tool_schemas(self) -> list:
        return []

    def propose(self, observation) -> Proposal:
        self.threads.append(threading.get_ident())
        return next(self.turns)


class _Subclassed(_Minimal, BasePolicy):
    """The same policy as a ``BasePolicy`` subclass that overrides no optional hook."""


def _record(result) -> list[tuple]:
    """What an episode did, times left out: each event's type, tool, shown chunks, code."""
    return [
        (e.type, getattr(e, "tool", ""), tuple(getattr(e, "shown", ())), getattr(e, "code", ""))
        for e in result.trace
    ]


def test_a_policy_without_the_base_class_runs_as_its_base_class_twin(store, config) -> None:
    duck, base = _Minimal(), _Subclassed()
    assert isinstance(duck, Policy) and not isinstance(duck, BasePolicy)
    duck_run, base_run = (run_episode(Q, store, p, config) for p in (duck, base))
    for r in (duck_run, base_run):
        assert r.exit_reason is ExitReason.ANSWERED and r.doc_ids == ["glassworks"]
    assert _fingerprint(duck_run) == _fingerprint(base_run)
    assert _record(duck_run) == _record(base_run)
    starts = [_start(r) for r in (duck_run, base_run)]
    assert starts[0].config == starts[1].config and starts[0].policy == starts[1].policy
    assert starts[0].system_prompt == starts[1].system_prompt
    # neither declares in_process: each turn is asked on a worker thread
    assert threading.get_ident() not in {*duck.threads, *base.threads}
    assert len(duck.threads) == len(base.threads) == 2


def test_a_hook_the_subclass_leaves_as_it_is_declares_nothing() -> None:
    policy = _Subclassed()
    assert not starts_sessions(policy) and session_for(policy, Q) is None
    assert reranker_of(policy) is None and retrieval_mode_of(policy) is None
    assert prompt_cost_of(policy) is None and budget_ceiling_of(policy) is None
    assert not runs_in_process(policy)
    asked: list[int] = []
    hand_reader_memo(policy, lambda: asked.append(1))  # the store is not even asked
    assert asked == []
    fitted, notice = fit_budget(policy, Config())
    assert fitted.budget.total == Config().budget.total and notice == ""


class _Every(BasePolicy):
    """A policy that overrides every optional hook."""

    name = "every"
    system_prompt = "Find the documents."
    retrieval_mode = "bm25"
    prompt_cost = CHATML_TOOLS_COST
    in_process = True

    def __init__(self) -> None:
        self.cancelled: list[object] = []
        self.memo: object = None

    def propose(self, observation) -> Proposal:
        return answer()

    def rerank(self, request: RerankRequest) -> list:
        return list(request.hits)

    def budget_ceiling(self) -> BudgetCeiling:
        return BudgetCeiling(2000, "a small model")

    def cancel(self, observation) -> None:
        self.cancelled.append(observation)

    def use_reader_memo(self, memo) -> None:
        self.memo = memo


class _EveryDuck:
    """The same hooks on an object written against the former protocols."""

    name = "every"
    system_prompt = "Find the documents."
    retrieval_mode = "bm25"
    prompt_cost = CHATML_TOOLS_COST
    in_process = True
    tool_schemas = _Every.tool_schemas
    propose = _Every.propose
    rerank = _Every.rerank
    budget_ceiling = _Every.budget_ceiling
    cancel = _Every.cancel
    use_reader_memo = _Every.use_reader_memo
    __init__ = _Every.__init__


@pytest.mark.parametrize("make", [_Every, _EveryDuck], ids=["base-class", "duck-typed"])
def test_a_hook_that_is_overridden_is_applied(make) -> None:
    policy = make()
    assert reranker_of(policy) is policy and retrieval_mode_of(policy) == "bm25"
    assert prompt_cost_of(policy) is CHATML_TOOLS_COST and runs_in_process(policy)
    assert episode_config(policy, Config()).retrieval.mode == "bm25"
    fitted, notice = fit_budget(policy, Config())
    assert fitted.budget.total == 2000 and "a small model" in notice
    given = Config().override({"budget.total": 4000})  # a given budget is kept
    assert fit_budget(policy, given)[0].budget.total == 4000
    memo = object()
    hand_reader_memo(policy, lambda: memo)
    cancel_work(policy, "observation")
    assert policy.memo is memo and policy.cancelled == ["observation"]
    assert not starts_sessions(policy)


def test_a_policy_that_declares_plain_fusion_turns_the_fitted_weights_off() -> None:
    local = get_policy("local")
    assert fitted_fusion_of(local) is False
    assert episode_config(local, Config()).retrieval.fitted_fusion is False
    single = get_policy("single-shot")
    assert fitted_fusion_of(single) is None
    assert episode_config(single, Config()) == Config()  # declares nothing: unchanged


def test_the_local_policy_runs_under_the_fusion_its_weights_were_fit_under(tmp_path) -> None:
    from dataclasses import replace

    from thresher.errors import ConfigError
    from thresher.policies.local.models import load_weights
    from thresher.policies.local.options import LocalOptions
    from thresher.policies.local.policy import LocalPolicy

    shipped = load_weights()
    assert "fusion" not in shipped.meta and shipped.fusion == "plain"
    plain = LocalPolicy()
    assert plain.fitted_fusion is False and plain.info == {"weights": "shipped", "fusion": "plain"}
    fit_under_fitted = replace(shipped, meta={**shipped.meta, "fusion": "fitted"})
    local = LocalPolicy(LocalOptions(weights=fit_under_fitted))
    assert fitted_fusion_of(local) is None
    assert episode_config(local, Config()) == Config()  # the index's fitted fusion, if any
    assert local.info == {"weights": "given", "fusion": "fitted"}
    path = fit_under_fitted.save(tmp_path / "fitted.json")
    assert load_weights(path).fusion == "fitted"
    assert LocalPolicy(LocalOptions(weights=path)).info["fusion"] == "fitted"
    odd = replace(shipped, meta={**shipped.meta, "fusion": "weighted"}).save(tmp_path / "odd.json")
    with pytest.raises(ConfigError, match="meta.fusion is 'weighted'"):
        load_weights(odd)


def test_a_base_class_policy_that_overrides_neither_propose_nor_start_is_a_policy_error(
    store, config
) -> None:
    class Nothing(BasePolicy):
        name = "nothing"
        system_prompt = "Find the documents."

    r = run_episode(Q, store, Nothing(), config)
    assert r.exit_reason is ExitReason.POLICY_ERROR
    assert "propose(observation)" in r.message and "start(question)" in r.message


def test_every_hook_of_the_base_class_says_what_the_harness_does_and_its_default() -> None:
    doc = (BasePolicy.__doc__ or "").split("Attributes:", 1)[1]
    parts = re.split(r"^\s+(\w+): ", doc, flags=re.M)[1:]
    attributes = dict(zip(parts[::2], parts[1::2], strict=True))
    assert set(attributes) == {
        "name",
        "system_prompt",
        "retrieval_mode",
        "fitted_fusion",
        "prompt_cost",
        "in_process",
        "info",
    }
    for attribute in ("retrieval_mode", "fitted_fusion", "prompt_cost", "in_process", "info"):
        text = attributes[attribute]
        assert "Default" in text and "harness" in text, attribute
    hooks = ("tool_schemas", "propose", "for_store", "start", "rerank", "budget_ceiling", "cancel")
    for hook in hooks:
        text = getattr(BasePolicy, hook).__doc__ or ""
        assert "Default" in text and "harness" in text, hook
    # the two hooks that exist only for speed say so
    assert attributes["in_process"].startswith("(speed only)")
    assert (BasePolicy.use_reader_memo.__doc__ or "").startswith("(Speed only.)")


def _example(path: Path, defines: str) -> type:
    """The policy class the first Python block of ``path`` that defines ``defines`` makes."""
    text = path.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    code = next(b for b in blocks if f"class {defines}(" in b)
    namespace: dict = {}
    exec(compile(code, str(path), "exec"), namespace)
    return namespace[defines]


@pytest.mark.parametrize(
    ("doc", "defines"), [("docs/policies.md", "TwoSearches"), ("README.md", "FirstSearch")]
)
def test_the_documented_examples_run(store, config, doc, defines) -> None:
    policy = _example(SRC.parents[1] / doc, defines)()
    assert isinstance(policy, BasePolicy)
    r = run_episode(Q, store, policy, config)
    assert r.exit_reason is ExitReason.ANSWERED and r.doc_ids, r.message
    if defines == "TwoSearches":  # its hooks: BM25 alone, at most three chunks a search
        assert _start(r).config["retrieval"]["mode"] == "bm25"
        assert len(_searches(r)) == 2 and all(len(e.shown) <= 3 for e in _searches(r))


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
    """A policy with a session per episode, written against the former protocols (no
    base class, no ``propose``): a fresh scripted session per episode, each noted."""

    name = "sessions"

    def __init__(self) -> None:
        self.started: list[tuple[str, _Recorder]] = []

    def start(self, question: str) -> _Recorder:
        session = _Recorder(
            [Proposal(tool_calls=(call("search_corpus", query="Marrowick"),)), answer()]
        )
        self.started.append((question, session))
        return session


class _BaseSessions(_Sessions, BasePolicy):
    """The same, as a ``BasePolicy`` subclass that overrides ``start``."""


@pytest.mark.parametrize("make", [_Sessions, _BaseSessions], ids=["duck-typed", "base-class"])
def test_an_episodic_policy_gets_a_session_per_episode(store, config, make) -> None:
    policy = make()
    assert starts_sessions(policy) and not isinstance(policy, Policy)
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


def test_no_policy_hook_is_found_by_attribute_lookup_outside_the_contract() -> None:
    """harness/, api.py and eval/ never getattr/hasattr a policy: hooks are read through
    the functions of harness/policy.py, the one place that says what counts as declared."""
    found = []
    harness = [p for p in sorted((SRC / "harness").glob("*.py")) if p.name != "policy.py"]
    for path in [*harness, SRC / "api.py", SRC / "eval/protocol.py", SRC / "eval/task_job.py"]:
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


class _PerStore(BasePolicy):
    """A policy that hands each store's episodes to another policy (with its own info)."""

    name = "per-store"
    system_prompt = "Find the documents."

    def __init__(self, session_based: bool) -> None:
        self.session_based = session_based
        self.stores: list[object] = []

    def for_store(self, store):
        self.stores.append(store)
        chosen = _BaseSessions() if self.session_based else _Subclassed()
        chosen.info = {"weights": "for this index"}
        return chosen

    def propose(self, observation):
        raise AssertionError("the policy for_store returned drives the episode")


@pytest.mark.parametrize("session_based", [False, True], ids=["plain", "sessions"])
def test_the_policy_for_the_store_drives_the_episode_and_its_info_is_recorded(
    store, config, session_based
) -> None:
    policy = _PerStore(session_based)
    r = run_episode(Q, store, policy, config)
    assert r.exit_reason is ExitReason.ANSWERED, r.message
    assert len(policy.stores) == 1  # asked once per episode, with the episode's store
    start = _start(r)
    assert start.policy_info == {"weights": "for this index"}
    assert start.policy == ("scripted" if session_based else "minimal")


def test_a_policy_without_for_store_or_info_records_no_policy_info(store, config) -> None:
    assert _start(run_episode(Q, store, _Subclassed(), config)).policy_info == {}


class _ReadPicker(ScriptedPolicy):
    """A scripted policy that declares ``rank_read`` and keeps the requests it got."""

    def __init__(self, actions) -> None:
        super().__init__(actions)
        self.reads: list[RerankRequest] = []

    def rank_read(self, request: RerankRequest) -> list:
        self.reads.append(request)
        return list(reversed(request.hits))[:1]


def test_a_declared_read_ranker_picks_what_a_read_shows(store, config) -> None:
    doc = "tessaly-history"
    turns = [Proposal(tool_calls=(call("read_document", doc_id=doc),)), answer()]
    plain = run_episode(Q, store, ScriptedPolicy(list(turns)), config)
    (everything,) = [e for e in plain.trace if isinstance(e, ToolResult)][:1]
    assert len(everything.shown) > 1  # without the hook: the whole document, as before
    policy = _ReadPicker(list(turns))
    r = run_episode(Q, store, policy, config, reranker=_Recorder([]))
    (request,) = policy.reads
    assert request.query == doc and request.question == Q
    assert {h.chunk.chunk_id for h in request.hits} == set(everything.shown)
    assert len(request.score_against_question([request.hits[0].chunk.chunk_id])) == 1
    (read,) = [e for e in r.trace if isinstance(e, ToolResult) and e.tool == "read_document"]
    assert read.shown == [request.hits[-1].chunk.chunk_id]  # its pick, whatever the reranker
    assert read.header.startswith(f"read_document {doc}: 1 of ")
