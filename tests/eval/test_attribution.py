"""Attribution from crafted traces: one test per row of the table in docs/eval.md."""

from __future__ import annotations

from thresher.eval.attribution import CAUSE_LABELS, CAUSES, attribute
from thresher.tasks.task import Task

from .traces import TraceBuilder

# a two-hop task: g1 (bridge) then g2 (holds the answer "Velm")
TASK = Task("t1", "Where was the founder of X born?", "Velm", [], ["g1", "g2"], [["g1"], ["g2"]],
            ["g2"])  # fmt: skip
TEXTS = {"g1#0": "X was founded by Ana Ruiz.", "g2#0": "Ana Ruiz was born in Velm."}


def test_causes_cover_the_table() -> None:
    assert set(CAUSES) == set(CAUSE_LABELS)
    assert len(CAUSES) == 6


def test_success_is_not_a_failure() -> None:
    b = TraceBuilder(texts=TEXTS).next_turn().search("founder of X", ["g1#0", "g2#0"]).next_turn()
    a = attribute(b.final(["g2", "g1"]), TASK)
    assert not a.failed and a.cause is None


def test_retrieval_miss_gold_never_appears() -> None:
    b = TraceBuilder(texts=TEXTS).next_turn().search("founder of X", ["d1#0", "d2#0"])
    b.next_turn().search("X founder biography", ["d3#0"]).next_turn()
    a = attribute(b.final(["d1"]), TASK)
    assert a.failed and a.cause == "retrieval_miss"
    assert a.hop == 0
    assert a.doc_causes == {"g1": "retrieval_miss", "g2": "retrieval_miss"}
    assert "2 retrieval call(s)" in a.evidence[0].detail
    assert a.recoverable is None


def test_premature_pruning_gold_pruned_then_absent() -> None:
    b = TraceBuilder(texts=TEXTS).next_turn().search("founder of X", ["g1#0", "d1#0"])
    b.next_turn().search("Ana Ruiz birthplace", ["g2#0"])
    b.next_turn().prune(["g1#0", "d1#0"]).next_turn()
    a = attribute(b.final(["g2"]), TASK)
    assert a.failed and a.cause == "premature_pruning"
    assert a.hop == 0
    assert a.recoverable is True
    assert a.recover_chunk_ids == ["g1#0"]
    assert a.pruned_turn == 2
    ev = a.evidence[0]
    assert (ev.event, ev.turn) == ("tool_result", 2) and "g1#0" in ev.detail


def test_recalled_gold_is_not_premature_pruning() -> None:
    b = TraceBuilder(texts=TEXTS).next_turn().search("founder of X", ["g1#0", "g2#0"])
    b.next_turn().prune(["g1#0"]).next_turn().recall(["g1#0"]).next_turn()
    a = attribute(b.final(["g2"]), TASK)
    assert a.cause == "context_overload"  # back in view at the end, yet not returned


def test_context_overload_gold_retained_answer_wrong() -> None:
    b = TraceBuilder(texts=TEXTS).next_turn().search("founder of X", ["g1#0", "g2#0", "d1#0"])
    b.next_turn()
    a = attribute(b.final(["g2", "d1"]), TASK)
    assert a.failed and a.cause == "context_overload"
    assert a.doc_causes == {"g1": "context_overload"}
    assert a.evidence[0].event == "tool_result"
    # every gold document returned, but the answering model's answer is wrong (and supported)
    b2 = TraceBuilder(texts=TEXTS).next_turn().search("founder of X", ["g1#0", "g2#0"]).next_turn()
    a2 = attribute(b2.final(["g2", "g1"]), TASK, prediction="Ana Ruiz")
    assert a2.failed and a2.cause == "context_overload"


def test_hallucination_answer_unsupported_by_cache() -> None:
    b = TraceBuilder(texts=TEXTS).next_turn().search("founder of X", ["g1#0", "g2#0"]).next_turn()
    a = attribute(b.final(["g2", "g1"]), TASK, prediction="Montreux")
    assert a.failed and a.cause == "hallucination"
    assert "no cached chunk" in a.evidence[0].detail
    # a ranked document that no call ever returned
    b2 = TraceBuilder(texts=TEXTS).next_turn().search("founder of X", ["g1#0"]).next_turn()
    a2 = attribute(b2.final(["g1", "g2"]), TASK)
    assert a2.cause == "hallucination" and "g2" in a2.evidence[0].detail


def test_early_termination_stopped_before_the_bridge_hop() -> None:
    b = TraceBuilder(texts=TEXTS).next_turn().search("founder of X", ["g1#0", "d1#0"]).next_turn()
    a = attribute(b.final(["g1", "d1"]), TASK)
    assert a.failed and a.cause == "early_termination"
    assert a.hop == 1
    assert [e.turn for e in a.evidence] == [0, 1]


def test_a_follow_up_search_makes_it_a_retrieval_miss() -> None:
    b = TraceBuilder(texts=TEXTS).next_turn().search("founder of X", ["g1#0"])
    b.next_turn().search("Ana Ruiz birthplace", ["d1#0"]).next_turn()
    a = attribute(b.final(["g1", "d1"]), TASK)
    assert a.cause == "retrieval_miss" and a.hop == 1


def test_a_cap_is_not_early_termination() -> None:
    b = TraceBuilder(texts=TEXTS).next_turn().search("founder of X", ["g1#0"]).next_turn()
    a = attribute(b.final(["g1"], exit_reason="budget"), TASK)
    assert a.cause == "retrieval_miss"


def test_earliest_hop_decides_the_cause() -> None:
    b = TraceBuilder(texts=TEXTS).next_turn().search("founder of X", ["d1#0", "g2#0"])
    b.next_turn().prune(["g2#0"]).next_turn()
    a = attribute(b.final(["d1"]), TASK)
    assert a.doc_causes == {"g1": "retrieval_miss", "g2": "premature_pruning"}
    assert a.cause == "retrieval_miss" and a.hop == 0


def test_policy_error_is_attributed_to_the_policy_not_retrieval() -> None:
    # the model never ran a tool (issue 26: every reply refused) and the episode ended
    b = TraceBuilder(texts=TEXTS).next_turn().next_turn()
    a = attribute(b.final([], exit_reason="policy_error"), TASK)
    assert a.failed and a.cause == "policy_error" and CAUSE_LABELS[a.cause].startswith("policy")
    assert "after 0 tool call(s) run" in a.evidence[0].detail
    b = TraceBuilder(texts=TEXTS).next_turn().search("founder of X", ["d1#0"]).next_turn()
    a = attribute(b.final([], exit_reason="endpoint_unavailable"), TASK)
    assert a.cause == "policy_error" and "endpoint_unavailable after 1" in a.evidence[0].detail
