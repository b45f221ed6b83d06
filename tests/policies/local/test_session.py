"""One policy, many episodes: each runs in a session of its own, alone or side by side.

* two episodes of one ``LocalPolicy`` object on two threads at once give exactly
  the results each gives alone (a generated world's index, real embedder);
* ``policies/local/`` holds no lock, event or wait, and no module-level cache of
  anything an episode reads (a memo belongs to a session);
* a clue chain's first clue, searched beside the question, is scored with the
  maxima the question's own search set (the harness reranks in call order);
* the answer's scores never rise with rank and are the ranker's probabilities.
"""

from __future__ import annotations

import ast
import json
import re
import threading
from pathlib import Path

import numpy as np
import pytest

import thresher.policies.local as local_pkg
from thresher.config import Config
from thresher.harness.episode import run_episode
from thresher.harness.result import ExitReason, Result
from thresher.harness.trace import FinalEvent, ProposalEvent
from thresher.index.embedded.store import EmbeddedStore
from thresher.policies.local import LocalOptions, LocalPolicy
from thresher.policies.local.candidate import QuestionContext
from thresher.policies.local.features import BASE_FEATURES, base_matrix

from .test_policy import QUESTION

PACKAGE = Path(local_pkg.__file__).resolve().parent


def _outcome(r: Result) -> tuple:
    """Everything an episode decided: calls, prunes, answer (ids, chunks, scores, why)."""
    proposals = [e.proposal for e in r.trace if isinstance(e, ProposalEvent)]
    docs = [(d.doc_id, d.chunk_ids, d.score, d.justification) for d in r.documents]
    return r.exit_reason, proposals, docs


def _questions(world_index: Path, n: int) -> list[str]:
    root = world_index.parent / "corpus" / ".world"
    chains = [json.loads(line) for line in (root / "chains.jsonl").open()]
    return [c["question"] for c in chains[:n]]


def test_two_episodes_of_one_policy_at_once_give_their_results_alone(world_index) -> None:
    config = Config()
    questions = _questions(world_index, 4)
    with EmbeddedStore(world_index, config) as store:
        policy = LocalPolicy(config=config)
        alone = {q: _outcome(run_episode(q, store, policy, config)) for q in questions}
        assert all(o[0] is ExitReason.ANSWERED for o in alone.values())
        assert len({str(o[2]) for o in alone.values()}) > 1, "the questions differ in answer"
        for first, second in zip(questions[::2], questions[1::2], strict=True):
            together: dict[str, tuple] = {}
            barrier = threading.Barrier(2)

            def run(q: str, barrier: threading.Barrier = barrier, out: dict = together) -> None:
                barrier.wait()
                out[q] = _outcome(run_episode(q, store, policy, config))

            threads = [threading.Thread(target=run, args=(q,)) for q in (first, second)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert together == {first: alone[first], second: alone[second]}


def _code(path: Path) -> str:
    """A module's code without its comments and docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        documented = ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
        if isinstance(node, documented) and ast.get_docstring(node, clean=False) is not None:
            node.body.pop(0)
    return ast.unparse(tree)


def test_no_lock_event_or_wait_in_the_local_policy() -> None:
    """Sessions are driven from their episode's thread: nothing in the policy waits."""
    banned = re.compile(
        r"\bthreading\b|\bLock\b|\bRLock\b|\bEvent\b|\bCondition\b|\bSemaphore\b"
        r"|\.wait\(|\bsleep\(|\bBarrier\b|\bqueue\b"
    )
    found = [
        f"{path.name}: {m.group(0)}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for m in banned.finditer(_code(path))
    ]
    assert found == []


#: module-level memos allowed, each a function of constants only (never of corpus text,
#: a question or an episode): the weights file's parse, keyed by its path, size and mtime;
#: which weights file runs on an index, keyed by its folder, generation, the file's size and mtime
ALLOWED_MEMOS = {("models.py", "_read_weights_once"), ("adapted.py", "_chosen")}


def _memo_decorated(tree: ast.Module) -> list[str]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for dec in node.decorator_list:
                name = ast.unparse(dec.func if isinstance(dec, ast.Call) else dec)
                if name.split(".")[-1] in {"lru_cache", "cache"}:
                    out.append(node.name)
    return out


def _empty_containers(tree: ast.Module) -> list[str]:
    """Module-level names bound to an empty dict, list or set: a cache or registry."""
    out = []
    for node in tree.body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        empty = (isinstance(value, ast.Dict) and not value.keys) or (
            isinstance(value, ast.List | ast.Set) and not value.elts
        )
        calls = isinstance(value, ast.Call) and ast.unparse(value.func).split(".")[-1] in {
            "dict",
            "list",
            "set",
            "defaultdict",
            "OrderedDict",
            "WeakValueDictionary",
            "WeakKeyDictionary",
        }
        if empty or (calls and isinstance(value, ast.Call) and not value.args):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out.extend(ast.unparse(t) for t in targets)
    return out


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: p.name)
def test_no_module_level_cache_in_the_local_policy(path: Path) -> None:
    """A memo of what an episode reads belongs to its session (:mod:`.memo`), never to
    the process: nothing derived from one corpus or question outlives its episode."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    memos = [m for m in _memo_decorated(tree) if (path.name, m) not in ALLOWED_MEMOS]
    assert memos == [], f"{path.name}: module-level memos {memos}"
    assert _empty_containers(tree) == [], f"{path.name}: module-level caches"


def test_a_first_clue_beside_the_question_is_scored_with_the_questions_maxima(
    store, config
) -> None:
    """The first clue is searched beside the question in the first turn; the harness
    reranks in call order, so the question's search has set the maxima the clue's
    candidates are normalized by, however the fetches finished."""
    question = (
        "Clues: (1) The Halvard Glassworks was founded in [A]. (2) [A] lies in the "
        "province of [?]. Each letter stands for one entity throughout. What is [?]?"
    )
    pools: dict[str, tuple[list, np.ndarray]] = {}

    def record(kind, q, cands, bx, lx):
        if kind == "pool":
            pools.setdefault(cands[0].subquery, (cands, bx))

    r = run_episode(question, store, LocalPolicy(config=config, recorder=record), config)
    first_turn = next(e for e in r.trace if isinstance(e, ProposalEvent))
    clue = next(
        c["arguments"]["query"] for c in first_turn.proposal["tool_calls"] if c["call_id"] == "c0"
    )
    asked, _ = pools[question]
    b_max = max(c.bm25_s or 0.0 for c in asked) or 1.0
    d_max = max((c.dense_s for c in asked if c.dense_s is not None), default=0.0) or 1.0
    cands, bx = pools[clue]
    # the question's search also set its documents' ranks (its fused list's, here)
    fused: dict[str, int] = {}
    for c in asked:
        fused.setdefault(c.chunk.doc_id, c.rank)
    ranks = {doc: (rank, 0, 0) for doc, rank in fused.items()}
    own = [i for i, f in enumerate(BASE_FEATURES) if f not in ("q_doc_bm25", "q_doc_dense")]
    want = base_matrix(cands, QuestionContext.of(question, b_max, d_max, ranks))
    assert np.array_equal(bx[:, own], want[:, own])
    assert not np.array_equal(bx, base_matrix(cands, QuestionContext.of(question)))


def test_the_answers_scores_are_its_rankers_probabilities_in_rank_order(store, config) -> None:
    """The final proposal's scores (what the policy itself says, before the harness)
    never rise with rank; each is a probability, and where the order agrees with the
    ranker's probabilities they are those probabilities."""
    finals: list[tuple] = []

    def record(kind, q, cands, bx, lx):
        if kind == "final":
            finals.append((cands, bx, lx))

    policy = LocalPolicy(LocalOptions(prune=False, stop_at=1.01), config=config, recorder=record)
    r = run_episode(QUESTION, store, policy, config)
    final = [e for e in r.trace if isinstance(e, ProposalEvent) and e.proposal.get("final")]
    proposed = [d["score"] for d in final[-1].proposal["final"]["documents"]]
    assert len(proposed) >= 3
    assert proposed == sorted(proposed, reverse=True)
    assert all(0.0 <= s <= 1.0 for s in proposed)
    (event,) = [e for e in r.trace if isinstance(e, FinalEvent)]
    assert [d["score"] for d in event.documents] == proposed  # the harness keeps them
    # each document's best chunk's probability from the ranker, fit to the order
    cands, bx, lx = finals[-1]
    probs = policy.weights.ranker.predict(np.hstack([bx, lx]))
    best: dict[str, float] = {}  # a document's first chunk in the ranked order
    for c, p in zip(cands, probs, strict=True):
        best.setdefault(c.chunk.doc_id, float(p))
    docs = [d.doc_id for d in r.documents]
    raw = [best[d] for d in docs]
    if raw == sorted(raw, reverse=True):
        assert proposed == [round(p, 4) for p in raw]
    assert abs(np.mean(proposed) - np.mean(raw)) < 1e-3  # isotonic fit keeps the mean
