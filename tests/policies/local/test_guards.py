"""Do no harm: the guards over the learned order and pruning (properties), and the
answer's "not found" cut."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from thresher.corpus.document import Chunk
from thresher.harness.episode import run_episode
from thresher.index.store import Hit
from thresher.policies.local.answer import answer_scores, found
from thresher.policies.local.guards import (
    agreed_docs,
    agreed_hits,
    keep_agreed,
    keep_best_evidence,
    show_agreed,
)
from thresher.policies.local.models import load_weights
from thresher.policies.local.options import LocalOptions
from thresher.policies.local.policy import LocalPolicy
from thresher.policies.local.session import LocalSession

from .test_policy import QUESTION

probs = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@st.composite
def pruning(draw: st.DrawFn) -> tuple[list[str], list[str], dict[str, float], list[str]]:
    n = draw(st.integers(min_value=1, max_value=12))
    active = [f"c{i}" for i in range(n)]
    pruned = draw(st.lists(st.sampled_from(active), unique=True))
    prob = {c: draw(probs) for c in active}
    protected = draw(st.lists(st.sampled_from(active), unique=True, max_size=3))
    return active, pruned, prob, protected


@settings(deadline=None)  # a loaded machine: no time limit per example
@given(pruning())
def test_a_chunk_above_every_kept_chunk_is_never_pruned(case) -> None:
    active, pruned, prob, protected = case
    out = keep_best_evidence(active, pruned, prob, protected)
    assert set(out) <= set(pruned)
    kept = [c for c in active if c not in out]
    assert kept, "something always stays"
    top = max(prob[c] for c in kept)
    low = min(prob[c] for c in kept)
    for c in out:
        assert prob[c] <= top
        if c in protected:
            assert prob[c] <= low  # a protected chunk goes only when every kept one is stronger


@settings(deadline=None)  # a loaded machine: no time limit per example
@given(pruning())
def test_nothing_pruned_needs_no_guard(case) -> None:
    active, _, prob, protected = case
    assert keep_best_evidence(active, [], prob, protected) == []


@st.composite
def orders(draw: st.DrawFn) -> tuple[list[str], dict[str, float], list[str], int, float]:
    n = draw(st.integers(min_value=1, max_value=10))
    order = [f"d{i}" for i in draw(st.permutations(range(n)))]
    prob = {d: draw(probs) for d in order}
    agreed = draw(st.lists(st.sampled_from([*order, "absent"]), unique=True, max_size=3))
    slots = draw(st.integers(min_value=1, max_value=6))
    margin = draw(st.floats(min_value=0.0, max_value=0.5))
    return order, prob, agreed, slots, margin


@settings(deadline=None)  # a loaded machine: no time limit per example
@given(orders())
def test_the_agreed_document_stays_among_the_best_unless_clearly_beaten(case) -> None:
    order, prob, agreed, slots, margin = case
    out = keep_agreed(order, prob, agreed, slots, 1, margin)
    assert sorted(out) == sorted(order)
    first = next((d for d in agreed if d in order), None)
    if first is None:
        assert out == order
        return
    others = [d for d in out if d != first]
    assert others == [d for d in order if d != first]  # the rest keep their order
    if order.index(first) < slots:
        assert out == order
    elif out.index(first) >= slots:  # left out: every document above clearly likelier
        assert all(prob[d] >= prob[first] + margin for d in out[:slots])
    else:
        assert out.index(first) == slots - 1


@settings(deadline=None)  # a loaded machine: no time limit per example
@given(
    st.permutations(range(12)),
    st.lists(st.integers(min_value=0, max_value=11), max_size=4),
    st.integers(min_value=1, max_value=8),
)
def test_a_search_shows_what_the_retrievers_agree_on(order, agreed, show) -> None:
    shown = show_agreed(order, agreed, show)
    assert len(shown) == min(show, len(order))
    assert len(set(shown)) == len(shown)
    want = list(dict.fromkeys(agreed))[:show]
    assert set(want) <= set(shown)
    rest = [p for p in shown if p not in want]
    assert rest == [p for p in order if p not in want][: len(rest)]
    assert shown == sorted(shown, key=list(order).index)


def _hit(i: int, bm25: int | None, dense: int | None) -> Hit:
    chunk = Chunk(f"d{i % 3}#{i}", f"d{i % 3}", i, "t", "x", 0, 1, f"h{i}")
    return Hit(chunk, 1.0 / (i + 1), "hybrid", bm25, dense)


def test_agreed_hits_are_the_fused_top_and_both_retrievers_heads() -> None:
    hits = [_hit(0, 9, 1), _hit(1, 2, 2), _hit(2, 1, None), _hit(3, 1, 3), _hit(4, 2, 1)]
    assert agreed_hits(hits, 1, 2) == [0, 1, 4]
    assert agreed_docs(hits, 1, 2) == ["d0", "d1"]
    assert agreed_hits(hits, 0, 3) == [1, 3, 4]


@settings(deadline=None)  # a loaded machine: no time limit per example
@given(
    st.lists(probs, max_size=10),
    probs,
    st.integers(min_value=0, max_value=3),
    st.data(),
)
def test_not_found_cuts_the_weak_tail_only(raw, floor, min_docs, data) -> None:
    scores = answer_scores(raw)
    agreed = [data.draw(st.booleans()) for _ in scores]
    keep = found(scores, floor, min_docs, agreed)
    for i, (s, k) in enumerate(zip(scores, keep, strict=True)):
        assert k == (i < min_docs or s >= floor or agreed[i])
    # scores never rise with rank: what is cut (agreed aside) is a tail
    cut = [i for i, k in enumerate(keep) if not k]
    assert all(not keep[j] or agreed[j] for i in cut for j in range(i, len(keep)))


class _Kept(LocalPolicy):
    """The local policy, keeping its last session to read (in a list the copy its
    ``for_store`` may return shares)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.sessions: list[LocalSession] = []

    @property
    def session(self) -> LocalSession:
        return self.sessions[-1]

    def start(self, question: str) -> LocalSession:
        self.sessions.append(super().start(question))
        return self.sessions[-1]


def test_an_episode_answers_with_the_agreed_document_and_may_answer_fewer(store, config):
    weights = load_weights()
    policy = _Kept(LocalOptions(weights=weights), config=config)
    result = run_episode(QUESTION, store, policy, config)
    agreed = policy.session.memory.agreed
    assert agreed and agreed[0] in result.doc_ids[:5]
    # a floor no score reaches: the answer holds its first document and the agreed ones
    strict = replace(weights, constants=replace(weights.constants, answer_floor=1.01))
    few = run_episode(QUESTION, store, _Kept(LocalOptions(weights=strict), config=config), config)
    assert few.doc_ids[0] == result.doc_ids[0]
    assert set(few.doc_ids) <= {result.doc_ids[0], *agreed}
    assert len(few.doc_ids) < len(result.doc_ids)
