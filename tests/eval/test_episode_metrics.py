"""Per-episode metrics on a crafted trace, and rollout fusion."""

from __future__ import annotations

import pytest

from thresher.corpus.ids import doc_of
from thresher.eval.episode_metrics import episode_metrics, first_miss_hop
from thresher.eval.rollouts import fuse_rankings, fused_metrics
from thresher.tasks.task import Task

from .traces import TraceBuilder

TASK = Task("t1", "Where was the founder of X born?", "Velm", ["Velm town"], ["g1", "g2", "g3"],
            [["g1"], ["g2"], ["g3"]], ["g3"])  # fmt: skip
TEXTS = {"g3#0": "Ana Ruiz was born in Velm.", "g1#0": "X was founded by Ana Ruiz."}


def _trace():
    b = TraceBuilder(texts=TEXTS).next_turn(used=200)
    b.search("founder of X", ["g1#0", "d1#0", "d2#0"])
    b.next_turn(used=900).search("Ana Ruiz", ["g3#0", "d3#0"])
    b.next_turn(used=1200).prune(["d1#0", "g1#0", "d2#0"])
    b.next_turn(used=700)
    return b.final(["g3", "d3"])


def test_metrics_of_a_crafted_episode() -> None:
    m = episode_metrics(_trace(), TASK, ks=(1, 2, 5))
    assert m.ranked_doc_ids == ["g3", "d3"]
    assert m.exit_reason == "answered"
    assert m.answer_found and m.answer_doc_ids == ["g3"]
    assert m.output_recall == pytest.approx(1 / 3)
    assert m.output_precision == pytest.approx(1 / 2)
    assert m.output_f1 == pytest.approx(0.4)
    assert m.recall_at == {
        1: pytest.approx(1 / 3),
        2: pytest.approx(1 / 3),
        5: pytest.approx(1 / 3),
    }
    assert m.all_gold_at == {1: 0.0, 2: 0.0, 5: 0.0}
    assert m.trajectory_recall == pytest.approx(2 / 3)  # g1 and g3 were retrieved
    assert m.bridge_preservation == 0.0  # bridges g1, g2: g1 pruned, g2 never seen
    assert m.context_tokens == 700 and m.turns == 4
    assert m.tool_calls == {"search_corpus": 2, "prune_chunks": 1}
    assert m.pruned_chunks == 3
    assert m.prune_accuracy == pytest.approx(2 / 3)  # d1, d2 right; g1 wrong
    assert m.premature_prunes == ["g1"]
    assert m.first_miss_hop == 1
    assert m.wall_s == 0.5
    assert m.answer_em is None and m.answer_f1 is None
    assert set(m.to_dict()["recall_at"]) == {"1", "2", "5"}


def test_answer_quality_is_reported_apart_when_predicted() -> None:
    m = episode_metrics(_trace(), TASK, prediction="velm town")
    assert m.answer_em == 1.0 and m.answer_f1 == 1.0
    m2 = episode_metrics(_trace(), TASK, prediction="Velm city")
    assert m2.answer_em == 0.0 and 0 < m2.answer_f1 < 1


def test_helpers() -> None:
    assert doc_of("web/a.html#3") == "web/a.html"
    assert doc_of("p-abc") == "p-abc"
    assert doc_of("a#b") == "a#b"
    assert first_miss_hop([["a"], ["b", "c"]], {"a", "b"}) == 1
    assert first_miss_hop([["a"]], {"a"}) is None
    assert first_miss_hop([], set()) is None


def test_rollouts_fused_by_rrf() -> None:
    assert fuse_rankings([["a", "b"], ["b", "c"]]) == ["b", "a"]
    assert fuse_rankings([["a", "b"], ["b", "c"]], limit=3) == ["b", "a", "c"]
    one = TraceBuilder(texts=TEXTS).next_turn(used=300).search("x", ["g1#0", "d1#0"]).next_turn()
    two = TraceBuilder(texts=TEXTS).next_turn(used=500).search("y", ["g3#0", "g1#0"]).next_turn()
    fused, each = fused_metrics([one.final(["d1", "g1"]), two.final(["g3", "g1"])], TASK)
    assert [e.ranked_doc_ids for e in each] == [["d1", "g1"], ["g3", "g1"]]
    assert fused.ranked_doc_ids == ["g1", "d1"]  # g1: 1/62 + 1/62 beats d1: 1/61
    assert fused.trajectory_recall == pytest.approx(2 / 3)
    assert fused.context_tokens == 700 + 900  # costs add up over rollouts
    assert fused.tool_calls == {"search_corpus": 2}
    assert not fused.answer_found  # g3 holds the answer but did not survive the cut
